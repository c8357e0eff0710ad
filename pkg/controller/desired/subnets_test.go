package desired

import (
	"fmt"
	"strings"
	"testing"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// TestSubnetsOfSpellsOutEveryEntry: one Want per spec.subnets entry, in the
// spec's order, keyed by its cidr and family; at most one per family.
func TestSubnetsOfSpellsOutEveryEntry(t *testing.T) {
	sub := func(cidr string) samplecrdv2.SubnetSpec { return samplecrdv2.SubnetSpec{CIDR: cidr} }
	pool := func(name string) samplecrdv2.SubnetSpec { return samplecrdv2.SubnetSpec{SubnetPool: name} }
	tests := []struct {
		name    string
		subnets []samplecrdv2.SubnetSpec
		// want is "key/family/gateway" per entry.
		want    []string
		wantErr string
	}{
		{"one IPv4 subnet", []samplecrdv2.SubnetSpec{sub("10.0.0.0/24")}, []string{"10.0.0.0/24/4/10.0.0.1"}, ""},
		{"dual stack, in the spec's order",
			[]samplecrdv2.SubnetSpec{sub("fd00:10::/64"), sub("10.0.0.0/24")},
			[]string{"fd00:10::/64/6/fd00:10::1", "10.0.0.0/24/4/10.0.0.1"}, ""},
		{"a pool subnet: no key, no family until the pool is known, no range",
			[]samplecrdv2.SubnetSpec{sub("10.0.0.0/24"), pool("v6-pool")}, []string{"10.0.0.0/24/4/10.0.0.1", "/0/"}, ""},
		{"two of one family: refused", []samplecrdv2.SubnetSpec{sub("10.0.0.0/24"), sub("10.1.0.0/24")}, nil,
			"spec.subnets[1]: 10.1.0.0/24 is a second IPv4 subnet (10.0.0.0/24 is the first)"},
		{"none: refused", nil, nil, "at least one subnet"},
		{"an entry Neutron would refuse names its index",
			[]samplecrdv2.SubnetSpec{sub("10.0.0.0/24"), {CIDR: "fd00:10::/64", AllocationPools: []samplecrdv2.AllocationPool{{Start: "fd00:10::1", End: "fd00:10::9"}}}}, nil,
			"spec.subnets[1]: allocationPools[0]: fd00:10::1-fd00:10::9 contains the gateway fd00:10::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wants, err := SubnetsOf(samplecrdv2.NetworkSpec{Subnets: tc.subnets})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range wants {
				got = append(got, fmt.Sprintf("%s/%d/%s", w.Key, w.Family, AddrString(w.Subnet.Gateway)))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("wants = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPoolFamilyIsCheckedAgainstThePool: CEL cannot see a pool's IP
// version, so one subnet per family is checked once Neutron has said it.
func TestPoolFamilyIsCheckedAgainstThePool(t *testing.T) {
	tests := []struct {
		name      string
		subnets   []samplecrdv2.SubnetSpec
		ipVersion int
		wantErr   string
	}{
		{"an IPv6 pool beside an IPv4 range", []samplecrdv2.SubnetSpec{{CIDR: "10.0.0.0/24"}, {SubnetPool: "p"}}, 6, ""},
		{"an IPv4 pool beside an IPv4 range: a second IPv4 subnet",
			[]samplecrdv2.SubnetSpec{{CIDR: "10.0.0.0/24"}, {SubnetPool: "p"}}, 4,
			`spec.subnets[1]: subnet pool "p" allocates IPv4 ranges, and spec.subnets[0] (10.0.0.0/24) is IPv4 already`},
		{"IPv6 modes on an IPv4 pool", []samplecrdv2.SubnetSpec{{SubnetPool: "p", IPv6AddressMode: samplecrdv2.IPv6ModeSLAAC}}, 4,
			"the IPv6 modes are only for IPv6"},
		{"a pool of no family", []samplecrdv2.SubnetSpec{{SubnetPool: "p"}}, 0, "neither 4 nor 6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wants, err := SubnetsOf(samplecrdv2.NetworkSpec{Subnets: tc.subnets})
			if err != nil {
				t.Fatal(err)
			}
			i := len(wants) - 1
			w, err := PoolFamily(wants, i, tc.ipVersion)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one saying %q", err, tc.wantErr)
			case tc.wantErr == "" && w.Family != tc.ipVersion:
				t.Errorf("family = %d, want the pool's %d", w.Family, tc.ipVersion)
			}
		})
	}
}

// TestAllocatedSpellsOutThePoolsRange: once the pool has chosen, the
// subnet is spelled out as a fixed one.
func TestAllocatedSpellsOutThePoolsRange(t *testing.T) {
	wants, err := SubnetsOf(samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{SubnetPool: "p", DNSNameservers: []string{"fd00:20::53"}}}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wants[0].Allocated("fd00:20::/64")
	if err != nil {
		t.Fatal(err)
	}
	if w.Family != 6 || AddrString(w.Subnet.Gateway) != "fd00:20::1" || w.Subnet.DNSNameservers[0] != "fd00:20::53" || w.Key != "" {
		t.Errorf("allocated = %+v", w)
	}
}
