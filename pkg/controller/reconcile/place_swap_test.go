package reconcile

import (
	"slices"
	"testing"
	"time"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestACreateGoesOnlyToTheRecordedPlace: a Network records region 1 and
// has nothing in Neutron yet. Its pass checks the place (region 1); then,
// before the door's first check (its fence), the credentials move to
// region 2 and a list of region 2 completes, so the door's own checks
// agree with themselves. The create must still not be made in region 2:
// every request of the pass requires the place status records
// (neutron.InPlace), and the client checks it when it sends.
func TestACreateGoesOnlyToTheRecordedPlace(t *testing.T) {
	network := inPlace("project-a", "region-1")(newNetwork("192.168.0.0/16", "192.168.0.1"))
	network.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		n.SetProject("project-a")
		n.SetRegion("region-1")
	})
	swapped := swapAtTheDoor(f)

	out := f.sync("net")
	if n := f.neutron.Networks(); len(n) != 0 {
		t.Errorf("region 2 holds %+v, made for a Network whose status.place is region 1", n)
	}
	if !*swapped || !neutron.IsCredentialsError(out.Err) {
		t.Errorf("outcome %+v (swapped: %t), want a CredentialsError", out, *swapped)
	}
}

// TestADeleteGoesOnlyToTheRecordedPlace: the same swap, during the delete
// of a Network whose network and subnet are in region 1. The door's read
// of the network, in region 2, would answer 404, and the delete take it
// for done: the finalizer would go, and region 1's network stay, marked,
// where nothing lists it again. The delete's requests require the place
// status records, as the ladder's do.
//
// For a dual-stack Network, region 1 keeps the network and both subnets.
func TestADeleteGoesOnlyToTheRecordedPlace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network *samplecrdv1.Network
		seed    func(*neutronfake.Neutron)
		ranges  []string
	}{
		{"one subnet", provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			inSync("192.168.0.0/16", "192.168.0.1"), []string{"192.168.0.0/16"}},
		{"two subnets", withSubnets(provisioned(newNetwork(v4CIDR, v4GW), seededNet, seededSubnet), samplecrdv2.SubnetSpec{CIDR: v6CIDR}),
			withV6Subnet, []string{v4CIDR, v6CIDR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, deleting(inPlace("project-a", "region-1")(tc.network)), func(n *neutronfake.Neutron) {
				n.SetProject("project-a")
				n.SetRegion("region-1")
				tc.seed(n)
			})
			swapped := swapAtTheDoor(f)

			out := f.sync("net")
			if out.Finalized || !hasFinalizer(f.network("net")) {
				t.Errorf("outcome %+v: the finalizer went while the network is in region 1", out)
			}
			f.neutron.SetRegion("region-1")
			if n := f.neutron.Networks(); !*swapped || len(n) != 1 {
				t.Errorf("region 1 holds %+v (swapped: %t), want the Network's network", n, *swapped)
			}
			if got := ourRanges(f); !slices.Equal(got, tc.ranges) {
				t.Errorf("region 1 holds our subnets %q, want %q", got, tc.ranges)
			}
		})
	}
}

// swapAtTheDoor rebuilds f's inventory so that the credentials move to
// region 2, and a list of region 2 completes, at the door's first check
// (its fence): after the pass's own check of the place, before any
// request of the door. It returns whether the swap has happened.
func swapAtTheDoor(f *fixture) *bool {
	f.t.Helper()
	swapped := new(bool)
	swap := func() error {
		if !*swapped {
			*swapped = true
			f.neutron.SetRegion("region-2")
			f.list()
		}
		return nil
	}
	f.inv = inventory.New(f.neutron, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: f.clock,
		Fence: swap})
	f.r = New(f.inv, ours, Options{Records: ApplyRecord{Client: f.client}})
	f.list()
	return swapped
}
