package reconcile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// The network delete's check (Inventory.DeleteNetwork: the network and
// every subnet on it must carry the owner's mark when it is sent), held to
// what namespace B's tenant, or anyone with the project's credentials,
// would try.

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
		name: "a person takes the network out of management, its subnet still marked",
		change: func(ctx context.Context, n *neutronfake.Neutron) {
			if _, err := n.UpdateNetwork(ctx, seededNet, neutron.NetworkUpdate{Name: ptr.To("lab"), Description: ptr.To("kept by hand")}); err != nil {
				panic(err)
			}
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

// TestADeleteJudgesOwnershipOnWhatNeutronSaysNow: the store is as old as
// the latest list, up to a resync period. Someone who, after that list,
// takes a subnet (or the network) out of management by removing its mark,
// or gives the subnet to namespace B's Network by marking it for B, must
// not see it taken by A's delete, or by the collector's delete of A's
// orphan: a network DELETE is sent only while what Neutron answers at the
// delete says that the network (the read's name and description) and
// every subnet on it (a read of its subnets) carry the owner's mark, or
// onto the revision at which the latest list saw them so (If-Match),
// which the change has raised: Neutron refuses that one (412), and the
// reads follow.
func TestADeleteJudgesOwnershipOnWhatNeutronSaysNow(t *testing.T) {
	for _, tc := range afterTheList {
		t.Run("a Network's delete: "+tc.name, func(t *testing.T) {
			f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
				inSync("192.168.0.0/16", "192.168.0.1"))
			tc.change(f.ctx, f.neutron)
			f.neutron.ClearRequests()

			out := f.sync("net")
			neutronHolds(t, f, tc.wantNetworks, tc.wantSubnets)
			if got := f.neutron.Requests(); len(got) > 0 && slices.Contains(got[1:], neutronfake.DeleteNetwork) {
				t.Errorf("Neutron requests %q: a network DELETE was sent after the reads", got)
			}
			if out.Finalized {
				t.Error("finalized")
			}
		})
		t.Run("the collector's delete of an orphan: "+tc.name, func(t *testing.T) {
			f := newFixture(t, nil, inSync("192.168.0.0/16", "192.168.0.1")) // no Network of testUID: an orphan
			tc.change(f.ctx, f.neutron)
			f.neutron.ClearRequests()

			err := DeleteOwned(f.ctx, f.inv, f.inv.Get(testUID), nil)
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

// TestASubnetOnADuplicateNeitherFreezesTheNetworkNorBlamesNeutron: a
// create whose answer was lost leaves a duplicate network of A's, which
// carries A's mark and so is plain to anyone who lists the project.
// Namespace B's tenant, with the project's credentials, puts a subnet of
// its own on it. The duplicate's delete is refused before it is sent,
// rightly; the duplicate and B's subnet stay, and the pass goes on: A's
// own subnet is made to match a changed spec (its DNS servers), and the
// condition does not say NeutronUnavailable of a Neutron that answers
// (ensureNetwork's DuplicateLeft Warning says what holds the duplicate).
func TestASubnetOnADuplicateNeitherFreezesTheNetworkNorBlamesNeutron(t *testing.T) {
	const duplicate, onDuplicate = "net-3", "subnet-4"
	network := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
	network.Generation = 2
	network.Spec.DNSNameservers = []string{"192.168.0.53"}
	f := newFixture(t, network, func(n *neutronfake.Neutron) {
		inSync("192.168.0.0/16", "192.168.0.1")(n)
		if id := n.AddNetwork(ours.ResourceName(owner), ours.Description()); id != duplicate {
			panic(id)
		}
		if id := n.AddSubnet(duplicate, "b-lab", "namespace b's", "10.9.0.0/24", "10.9.0.1"); id != onDuplicate {
			panic(id)
		}
	})

	out := f.sync("net")
	neutronHolds(t, f, []string{seededNet, duplicate}, []string{seededSubnet, onDuplicate})
	if out.Condition != nil && out.Condition.Reason == samplecrdv1.ReasonNeutronUnavailable {
		t.Errorf("Ready = %s %q: Neutron answered every request", out.Condition.Reason, out.Condition.Message)
	}
	for _, s := range f.neutron.Subnets() {
		if s.ID == seededSubnet && !slices.Equal(s.DNSNameservers, network.Spec.DNSNameservers) {
			t.Errorf("A's subnet has DNS servers %q, want the spec's %q: the pass ended at the duplicate (requests %q)",
				s.DNSNameservers, network.Spec.DNSNameservers, f.neutron.Requests())
		}
	}
}

// TestTheFenceIsAskedAtTheLastMomentBeforeANetworkDelete: the fence
// (Options.Fence) is asked at the last moment before a write, because a
// replica frozen or cut off may have been replaced by a leader with a
// fresher view. A network delete onto the latest list's revision is sent
// right after the door asks it; one refused (412: the network changed
// since, here a subnet's DNS servers, its mark kept) reads the network
// and its subnets again. A replica that loses its Lease while that read
// is under way (a read can take the request timeout, or the process be
// frozen right there) must not send the DELETE on its old view: the
// fence is asked again after the reads, and a fenced replica sends no
// second DELETE.
func TestTheFenceIsAskedAtTheLastMomentBeforeANetworkDelete(t *testing.T) {
	f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
		inSync("192.168.0.0/16", "192.168.0.1"))
	deposed := &changedAfterRead{Interface: f.neutron, times: 1, change: func() { f.fenced = errors.New("the Lease was taken over while the network was read") }}
	f.connect(deposed, defaultOptions(), nil)
	if _, err := f.neutron.UpdateSubnet(f.ctx, seededSubnet, neutron.SubnetUpdate{DNSNameservers: &[]string{"192.168.0.53"}}); err != nil {
		t.Fatal(err)
	}
	f.neutron.ClearRequests()

	out := f.sync("net")
	if got := f.neutron.Requests(); !slices.Equal(got, []string{neutronfake.DeleteNetwork, neutronfake.GetNetwork, neutronfake.SubnetsOf}) {
		t.Errorf("Neutron requests %q, want the DELETE refused, the reads, and no DELETE from a replica that no longer leads", got)
	}
	if out.Finalized || !errors.Is(out.Err, inventory.ErrFenced) {
		t.Errorf("outcome %+v, want ErrFenced", out)
	}
	neutronHolds(t, f, []string{seededNet}, []string{seededSubnet})
}

// TestABlockedDeleteNamesTheStrangerByIDOnly: A's condition says which
// subnets hold its delete, and they may be namespace B's (a marked subnet
// left on A's network) or another project's. It names them by ID, which an
// administrator looks up, and says nothing else of them: not B's namespace
// or Network (their Neutron name), nor their range, as the condition of an
// overlap leaves out the other subnet (overlapMessage).
func TestABlockedDeleteNamesTheStrangerByIDOnly(t *testing.T) {
	f := newFixture(t, deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
		func(n *neutronfake.Neutron) { inSync("192.168.0.0/16", "192.168.0.1")(n); strangerSubnets[2].seed(n) })
	out := f.sync("net")
	if out.Condition == nil || !strings.Contains(out.Condition.Message, strangerSubnet) {
		t.Fatalf("condition %+v, want it to name %s", out.Condition, strangerSubnet)
	}
	for _, secret := range []string{tenantB.Namespace, string(tenantB.UID), ours.ResourceName(tenantB), "10.7.0"} {
		if strings.Contains(out.Condition.Message, secret) || strings.Contains(out.Err.Error(), secret) {
			t.Errorf("A's condition or error tells %q of B's subnet: %q / %q", secret, out.Condition.Message, out.Err)
		}
	}
}
