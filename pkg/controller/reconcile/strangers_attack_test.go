package reconcile

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// Attacks on the network delete's check (Inventory.DeleteNetwork: every
// subnet on the network must be held for the owner), as namespace B's
// tenant, or anyone with the project's credentials, would try them.

// afterTheList are changes someone with the project's credentials makes in
// Neutron after the inventory's latest list and before A's delete: the
// store still holds the network and subnet for A, as the list saw them.
var afterTheList = []struct {
	name string
	// change is made in Neutron behind the inventory's back.
	change func(ctx context.Context, n *neutronfake.Neutron)
	// wantNetworks and wantSubnets are what Neutron must still hold.
	wantNetworks, wantSubnets []string
}{
	{
		name: "a person takes the subnet out of management (its mark removed) to keep it",
		change: func(ctx context.Context, n *neutronfake.Neutron) {
			mustUpdateSubnet(ctx, n, seededSubnet, "lab-subnet", "kept by hand")
		},
		wantNetworks: []string{seededNet}, wantSubnets: []string{seededSubnet},
	},
	{
		name: "the subnet is marked for namespace B's Network",
		change: func(ctx context.Context, n *neutronfake.Neutron) {
			mustUpdateSubnet(ctx, n, seededSubnet, ours.ResourceName(tenantB), ours.Description())
		},
		wantNetworks: []string{seededNet}, wantSubnets: []string{seededSubnet},
	},
	{
		name: "a person takes the network and its subnet out of management",
		change: func(ctx context.Context, n *neutronfake.Neutron) {
			mustUpdateSubnet(ctx, n, seededSubnet, "lab-subnet", "kept by hand")
			if _, err := n.UpdateNetwork(ctx, seededNet, neutron.NetworkUpdate{Name: ptr.To("lab"), Description: ptr.To("kept by hand")}); err != nil {
				panic(err)
			}
		},
		wantNetworks: []string{seededNet}, wantSubnets: []string{seededSubnet},
	},
}

func mustUpdateSubnet(ctx context.Context, n *neutronfake.Neutron, id, name, description string) {
	if _, err := n.UpdateSubnet(ctx, id, neutron.SubnetUpdate{Name: &name, Description: &description}); err != nil {
		panic(err)
	}
}

// TestADeleteJudgesOwnershipOnWhatNeutronSaysNow (FAILS ON PURPOSE):
// the door reads the network before its DELETE, and so has its subnets'
// IDs as Neutron holds them now, but judges whose they are (and whose the
// network is) on the store, i.e. on the latest list, up to a resync period
// old. Someone who, after that list, takes a subnet (or the network) out
// of management by removing its mark, or gives the subnet to namespace
// B's Network by marking it for B, sees it taken by A's delete, or by the
// collector's delete of A's orphan: the GET's own answer (the network's
// name and description) already says the network is no longer A's, and
// is not looked at.
//
// The fix must guarantee: a network DELETE is sent only while what
// Neutron answers at the delete says that the network and every subnet
// on it carry the owner's mark (the GET's name and description for the
// network; a read of the subnets on it, e.g. SubnetsOf, for theirs).
// Otherwise nothing is sent, and the Network says DeletionBlocked.
func TestADeleteJudgesOwnershipOnWhatNeutronSaysNow(t *testing.T) {
	for _, tc := range afterTheList {
		t.Run("a Network's delete: "+tc.name, func(t *testing.T) {
			f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
				inSync("192.168.0.0/16", "192.168.0.1"))
			tc.change(f.ctx, f.neutron)
			f.neutron.ClearRequests()

			out := f.sync("net")
			neutronHolds(t, f, tc.wantNetworks, tc.wantSubnets)
			if slices.Contains(f.neutron.Requests(), neutronfake.DeleteNetwork) {
				t.Errorf("Neutron requests %q: a network DELETE was sent", f.neutron.Requests())
			}
			if out.Finalized {
				t.Error("finalized")
			}
		})
		t.Run("the collector's delete of an orphan: "+tc.name, func(t *testing.T) {
			f := newFixture(t, nil, inSync("192.168.0.0/16", "192.168.0.1")) // no Network of testUID: an orphan
			tc.change(f.ctx, f.neutron)
			f.neutron.ClearRequests()

			err := DeleteOwned(f.ctx, f.inv, f.inv.Get(testUID))
			neutronHolds(t, f, tc.wantNetworks, tc.wantSubnets)
			if err == nil {
				t.Error("DeleteOwned succeeded")
			}
		})
	}
}

// TestABlockedDeleteCanAlwaysBeFinishedByItsOwner: namespace B's tenant,
// holding the project's credentials, puts a subnet of its own on A's
// network, and A's delete is held (DeletionBlocked) for as long as B
// likes. A's owner, who has no credentials of the project, is not stuck:
// setting deletionPolicy Orphan on the Network being deleted releases its
// network (B's subnet still on it) and finishes the delete; B's subnet is
// never touched, nor marked as released, and the inventory still holds
// nothing of A's.
func TestABlockedDeleteCanAlwaysBeFinishedByItsOwner(t *testing.T) {
	f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
		func(n *neutronfake.Neutron) { inSync("192.168.0.0/16", "192.168.0.1")(n); strangerSubnets[2].seed(n) })
	if out := f.sync("net"); out.Finalized {
		t.Fatal("finalized while B's subnet is on the network")
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Reason != samplecrdv1.ReasonDeletionBlocked {
		t.Fatalf("Ready = %+v, want DeletionBlocked", cond)
	}

	n := f.network("net")
	n.Spec.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan
	f.update(n)
	f.neutron.ClearRequests()
	if out := f.sync("net"); !out.Finalized {
		t.Fatalf("outcome %+v, want finalized by the release", out)
	}
	if got := f.neutron.Requests(); slices.Contains(got, neutronfake.DeleteNetwork) || slices.Contains(got, neutronfake.DeleteSubnet) {
		t.Errorf("Neutron requests %q: the release deleted something", got)
	}
	neutronHolds(t, f, []string{seededNet}, []string{seededSubnet, strangerSubnet})
	for _, s := range f.neutron.Subnets() {
		if s.ID == strangerSubnet && (s.Name != ours.ResourceName(tenantB) || s.Description != ours.Description()) {
			t.Errorf("B's subnet was changed by A's release: %+v", s)
		}
	}
	if held := f.inv.Get(testUID); !held.Empty() {
		t.Errorf("the inventory still holds %+v for A", held)
	}
	if held := f.inv.Get(tenantB.UID).Subnets; len(held) != 1 || held[0].ID != strangerSubnet {
		t.Errorf("the inventory holds %+v for B, want %s", held, strangerSubnet)
	}
}
