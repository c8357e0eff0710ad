package desired

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

func TestDesiredSubnetSpellsOutTheDefaults(t *testing.T) {
	tests := []struct {
		name        string
		spec        samplecrdv2.SubnetSpec
		wantGateway string
		wantPools   []neutron.AllocationPool
		wantDHCP    bool
	}{
		{"the seed's spec: its gateway, pools around it, DHCP on",
			samplecrdv2.SubnetSpec{CIDR: "192.168.0.0/16", Gateway: "192.168.0.254"},
			"192.168.0.254", []neutron.AllocationPool{{Start: "192.168.0.1", End: "192.168.0.253"}, {Start: "192.168.0.255", End: "192.168.255.254"}}, true},
		{"no gateway field: the first host",
			samplecrdv2.SubnetSpec{CIDR: "10.0.0.0/24"},
			"10.0.0.1", []neutron.AllocationPool{{Start: "10.0.0.2", End: "10.0.0.254"}}, true},
		{"IPv6, no gateway field: ::1 of the prefix",
			samplecrdv2.SubnetSpec{CIDR: "fd00:10::/64"},
			"fd00:10::1", []neutron.AllocationPool{{Start: "fd00:10::2", End: "fd00:10::ffff:ffff:ffff:ffff"}}, true},
		{"noGateway: none, and the pool is the whole host range",
			samplecrdv2.SubnetSpec{CIDR: "10.0.0.0/24", NoGateway: true},
			"", []neutron.AllocationPool{{Start: "10.0.0.1", End: "10.0.0.254"}}, true},
		{"explicit pools are kept as written, DHCP off is off",
			samplecrdv2.SubnetSpec{CIDR: "10.0.0.0/24", EnableDHCP: ptr.To(false),
				AllocationPools: []samplecrdv2.AllocationPool{{Start: "10.0.0.100", End: "10.0.0.200"}, {Start: "10.0.0.10", End: "10.0.0.20"}}},
			"10.0.0.1", []neutron.AllocationPool{{Start: "10.0.0.100", End: "10.0.0.200"}, {Start: "10.0.0.10", End: "10.0.0.20"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := SubnetOf(tc.spec, tc.spec.CIDR)
			if err != nil {
				t.Fatal(err)
			}
			if got := AddrString(d.Gateway); got != tc.wantGateway {
				t.Errorf("gateway = %q, want %q", got, tc.wantGateway)
			}
			if !slices.Equal(d.AllocationPools, tc.wantPools) {
				t.Errorf("pools = %v, want %v", d.AllocationPools, tc.wantPools)
			}
			if d.EnableDHCP != tc.wantDHCP {
				t.Errorf("enableDHCP = %v, want %v", d.EnableDHCP, tc.wantDHCP)
			}
		})
	}
}

// TestPoolsNeutronWouldRefuseAreRefusedFirst: what CEL cannot compare, the
// controller does, with Neutron's own rules (neutron.ipam.utils).
func TestPoolsNeutronWouldRefuseAreRefusedFirst(t *testing.T) {
	pool := func(start, end string) samplecrdv2.AllocationPool {
		return samplecrdv2.AllocationPool{Start: start, End: end}
	}
	tests := []struct {
		name    string
		cidr    string
		gateway string
		pools   []samplecrdv2.AllocationPool
		wantErr string
	}{
		{"start after end", "10.0.0.0/24", "", []samplecrdv2.AllocationPool{pool("10.0.0.20", "10.0.0.10")},
			"allocationPools[0]: start 10.0.0.20 is after end 10.0.0.10"},
		{"the IPv4 network address", "10.0.0.0/24", "", []samplecrdv2.AllocationPool{pool("10.0.0.0", "10.0.0.10")},
			"is outside the host addresses of 10.0.0.0/24 (10.0.0.1-10.0.0.254)"},
		{"the IPv4 broadcast address", "10.0.0.0/24", "", []samplecrdv2.AllocationPool{pool("10.0.0.200", "10.0.0.255")},
			"is outside the host addresses"},
		{"IPv6's subnet-router anycast address", "fd00:10::/64", "", []samplecrdv2.AllocationPool{pool("fd00:10::", "fd00:10::10")},
			"is outside the host addresses"},
		{"the default gateway inside a pool", "10.0.0.0/24", "", []samplecrdv2.AllocationPool{pool("10.0.0.1", "10.0.0.10")},
			"contains the gateway 10.0.0.1"},
		{"an explicit gateway inside a pool", "10.0.0.0/24", "10.0.0.50", []samplecrdv2.AllocationPool{pool("10.0.0.2", "10.0.0.100")},
			"contains the gateway 10.0.0.50"},
		{"overlapping pools, in any order", "10.0.0.0/24", "", []samplecrdv2.AllocationPool{pool("10.0.0.50", "10.0.0.60"), pool("10.0.0.10", "10.0.0.50")},
			"10.0.0.10-10.0.0.50 and 10.0.0.50-10.0.0.60 overlap"},
		{"adjacent pools are fine", "10.0.0.0/24", "", []samplecrdv2.AllocationPool{pool("10.0.0.50", "10.0.0.60"), pool("10.0.0.10", "10.0.0.49")}, ""},
		{"the last IPv6 address is a host address", "fd00:10::/120", "", []samplecrdv2.AllocationPool{pool("fd00:10::10", "fd00:10::ff")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SubnetOf(samplecrdv2.SubnetSpec{CIDR: tc.cidr, Gateway: tc.gateway, AllocationPools: tc.pools}, tc.cidr)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

func TestUpdateChangesOnlyWhatDiffers(t *testing.T) {
	seed := samplecrdv2.SubnetSpec{CIDR: "192.168.0.0/16", Gateway: "192.168.0.1"}
	actual := func(d Subnet) neutron.Subnet {
		r := d.Request("net-1", "n", "d")
		return neutron.Subnet{CIDR: r.CIDR, GatewayIP: *r.Gateway, DNSNameservers: slices.Clone(r.DNSNameservers), HostRoutes: slices.Clone(r.HostRoutes),
			AllocationPools: slices.Clone(r.AllocationPools), EnableDHCP: r.EnableDHCP}
	}
	tests := []struct {
		name   string
		change func(*samplecrdv2.SubnetSpec)
		// neutron changes what Neutron holds, as it may answer it.
		neutron func(*neutron.Subnet)
		want    []string
	}{
		{"nothing", nil, nil, nil},
		{"Neutron answers [] for none: not a change", nil, func(s *neutron.Subnet) {
			s.HostRoutes, s.DNSNameservers = []neutron.HostRoute{}, []string{}
		}, nil},
		{"IPv6 written long-hand: not a change", func(s *samplecrdv2.SubnetSpec) {
			*s = samplecrdv2.SubnetSpec{CIDR: "fd00:10::/64", DNSNameservers: []string{"fd00:10::53"}}
		}, func(s *neutron.Subnet) { s.DNSNameservers = []string{"fd00:10:0:0:0:0:0:53"} }, nil},
		{"routes in another order: not a change", func(s *samplecrdv2.SubnetSpec) {
			s.HostRoutes = []samplecrdv2.HostRoute{{Destination: "10.0.0.0/8", NextHop: "192.168.0.254"}, {Destination: "172.16.0.0/12", NextHop: "192.168.0.254"}}
		}, func(s *neutron.Subnet) { slices.Reverse(s.HostRoutes) }, nil},
		{"DNS in another order: a change, order is preference", func(s *samplecrdv2.SubnetSpec) {
			s.DNSNameservers = []string{"192.168.0.53", "192.168.0.54"}
		}, func(s *neutron.Subnet) { slices.Reverse(s.DNSNameservers) }, []string{"dnsNameservers"}},
		{"a new gateway moves the default pools with it", func(s *samplecrdv2.SubnetSpec) { s.Gateway = "192.168.0.254" },
			func(s *neutron.Subnet) {
				s.GatewayIP = "192.168.0.1"
				s.AllocationPools = []neutron.AllocationPool{{Start: "192.168.0.2", End: "192.168.255.254"}}
			}, []string{"gateway", "allocationPools"}},
		{"DNS removed", nil, func(s *neutron.Subnet) { s.DNSNameservers = []string{"192.168.0.53"} }, []string{"dnsNameservers"}},
		{"DHCP turned back on", nil, func(s *neutron.Subnet) { s.EnableDHCP = false }, []string{"enableDHCP"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := seed
			if tc.change != nil {
				tc.change(&spec)
			}
			want, err := SubnetOf(spec, spec.CIDR)
			if err != nil {
				t.Fatal(err)
			}
			a := actual(want)
			if tc.neutron != nil {
				tc.neutron(&a)
			}
			u, changed := want.Update(a)
			if !slices.Equal(changed, tc.want) {
				t.Errorf("changed %q, want %q", changed, tc.want)
			}
			if u.IsZero() != (len(tc.want) == 0) {
				t.Errorf("update %+v does not match changed fields %q", u, changed)
			}
		})
	}
}
