package reconcile

import (
	"testing"

	k8stesting "k8s.io/client-go/testing"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestStatusReportsEachSubnetsAddressCounts specifies status.subnets'
// usedIPs and freeIPs for a dual-stack Network: an administrator's
// credentials get each subnet's counts from the inventory's list, the
// /64's free count exact (2^64 less the gateway, the subnet-router
// anycast address and the VM's: past int64); a member's get neither
// field, and a pass that reads them costs no request of its own. A pass
// that finds the same counts writes nothing; a count that changed is one
// write.
func TestStatusReportsEachSubnetsAddressCounts(t *testing.T) {
	tests := []struct {
		name   string
		member bool
		// want is each subnet's counts by range; nil: both absent.
		want, wantAfterAnotherVM map[string]counts
	}{
		{
			name: "an administrator's credentials",
			// 192.168.0.2 to 192.168.255.254; fd00:10::2 to the last address.
			want:               map[string]counts{v4CIDR: {"1", "65532"}, v6CIDR: {"1", "18446744073709551613"}},
			wantAfterAnotherVM: map[string]counts{v4CIDR: {"2", "65531"}, v6CIDR: {"1", "18446744073709551613"}},
		},
		{name: "a member's credentials", member: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			network := withSubnets(newNetwork(v4CIDR, v4GW), samplecrdv2.SubnetSpec{CIDR: v6CIDR})
			f := newFixture(t, network, func(n *neutronfake.Neutron) { n.AsMember(tt.member) })
			if out := f.sync("net"); out.Err != nil {
				t.Fatal(out.Err)
			}
			netID := f.stored("net").Status.NetworkID
			f.neutron.AddPortWithAddresses(netID, "vm-1", "compute:nova", "192.168.0.10", "fd00:10::10")
			f.list()
			if err := f.inv.Health().Err(); err != nil {
				t.Fatalf("the list with the counts refused: %v", err)
			}

			f.neutron.ClearRequests()
			if out := f.sync("net"); out.Err != nil {
				t.Fatal(out.Err)
			}
			wantCounts(t, f.stored("net").Status, tt.want)
			if got := f.neutron.Requests(); len(got) != 0 {
				t.Errorf("the pass asked Neutron %q: the counts are the list's", got)
			}

			f.list()
			f.client.ClearActions()
			if out := f.sync("net"); out.Err != nil {
				t.Fatal(out.Err)
			}
			if n := statusWrites(f); n != 0 {
				t.Errorf("a pass that found the same counts wrote status %d times, want 0", n)
			}

			f.neutron.AddPortWithAddresses(netID, "vm-2", "compute:nova", "192.168.0.11")
			f.list()
			f.client.ClearActions()
			if out := f.sync("net"); out.Err != nil {
				t.Fatal(out.Err)
			}
			wantWrites := 0
			if tt.wantAfterAnotherVM != nil {
				wantWrites = 1
			}
			if n := statusWrites(f); n != wantWrites {
				t.Errorf("a pass after another VM took an address wrote status %d times, want %d", n, wantWrites)
			}
			wantCounts(t, f.stored("net").Status, tt.wantAfterAnotherVM)
		})
	}
}

// TestCountsGoWhenTheCredentialsLoseTheRight: counts reported under an
// administrator's credentials are removed from status once the
// credentials are a member's, whom Neutron refuses them: status does not
// keep counts nobody can read any longer.
func TestCountsGoWhenTheCredentialsLoseTheRight(t *testing.T) {
	f := newFixture(t, newNetwork(v4CIDR, v4GW), nil)
	if out := f.sync("net"); out.Err != nil {
		t.Fatal(out.Err)
	}
	f.list()
	if out := f.sync("net"); out.Err != nil {
		t.Fatal(out.Err)
	}
	wantCounts(t, f.stored("net").Status, map[string]counts{v4CIDR: {"0", "65533"}})

	f.neutron.AsMember(true)
	f.list()
	if out := f.sync("net"); out.Err != nil {
		t.Fatal(out.Err)
	}
	wantCounts(t, f.stored("net").Status, nil)
}

// counts are a subnet's usedIPs and freeIPs, in decimal.
type counts struct{ used, free string }

// wantCounts checks status.subnets' usedIPs and freeIPs against want, by
// range, as exact decimal numbers; nil wants both absent on every subnet.
func wantCounts(t *testing.T, st samplecrdv2.NetworkStatus, want map[string]counts) {
	t.Helper()
	if len(st.Subnets) == 0 {
		t.Fatal("status reports no subnet")
	}
	for _, s := range st.Subnets {
		w, ok := want[s.CIDR]
		switch {
		case !ok && (s.UsedIPs != nil || s.FreeIPs != nil):
			t.Errorf("subnet %s: usedIPs %v, freeIPs %v, want both absent", s.CIDR, s.UsedIPs, s.FreeIPs)
		case ok && (s.UsedIPs == nil || s.FreeIPs == nil):
			t.Errorf("subnet %s: usedIPs %v, freeIPs %v, want %s and %s", s.CIDR, s.UsedIPs, s.FreeIPs, w.used, w.free)
		case ok && (s.UsedIPs.String() != w.used || s.FreeIPs.String() != w.free):
			t.Errorf("subnet %s: usedIPs %s, freeIPs %s, want %s and %s exactly", s.CIDR, s.UsedIPs, s.FreeIPs, w.used, w.free)
		}
	}
}

// statusWrites counts the controller's status applies since the last
// ClearActions.
func statusWrites(f *fixture) int {
	n := 0
	for _, a := range f.client.Actions() {
		if p, ok := a.(k8stesting.PatchActionImpl); ok && p.GetSubresource() == "status" && p.PatchOptions.FieldManager == statusManager {
			n++
		}
	}
	return n
}
