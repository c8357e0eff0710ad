package reconcile

import (
	"context"
	"fmt"

	"testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAHalfDoneAdoptionDeletesNoSubnetOfAnotherNetworksNetwork: two
// namespaces granted adoption in one project name the same unmarked
// network, each for a subnet of its own range on it. The attacker's mark
// of its subnet completes in Neutron with its answer lost: its writes
// wait for a list, LateCompletionGrace later, and cannot put the subnet
// back. In that window the victim adopts the network (its own subnet,
// then the network). The list shows the attacker's mark; its next pass
// refuses the network ("belongs to another Network") and never puts the
// subnet back. The attacker now deletes its Network with deletionPolicy
// Delete: DeleteOwned deletes a marked subnet whose network is not the
// owner's on its own, so the user's subnet on the victim's network goes.
//
// The subnet was never the attacker's to delete: the adoption never
// completed, status.adopted records its own names, and an Orphan delete
// puts them back. Until the attacker's Network is deleted, the victim's
// own delete is refused too (the subnet is not the victim's).
//
// The guarantee: no delete, the Network's (whatever its deletionPolicy)
// or the garbage collector's, deletes on its own a subnet of the Network
// on a network the Network does not own; DeleteOwned gives it back, with
// the names status.adopted records when the Network still exists.
func TestAHalfDoneAdoptionDeletesNoSubnetOfAnotherNetworksNetwork(t *testing.T) {
	t.Run("the attacker's delete, deletionPolicy Delete: the subnet gets its own names back", func(t *testing.T) {
		f := halfDoneOnTheVictimsNetwork(t)
		f.update(deleting(f.network("net")))
		if out := f.sync("net"); !out.Finalized || out.Err != nil {
			t.Errorf("the attacker's delete: finalized %t, %v", out.Finalized, out.Err)
		}
		if s, ok := usersSubnet(f); !ok || s.Name != "handmade" || s.Description != "used by both" {
			t.Errorf("the user's subnet on the victim's network after the attacker's delete: %+v (present: %t), want its own names back", s, ok)
		}
	})
	t.Run("the collector's delete, the attacker's finalizer removed by hand: the subnet stays, unmarked", func(t *testing.T) {
		f := halfDoneOnTheVictimsNetwork(t)
		if err := DeleteOwned(f.ctx, f.inv, f.inv.Get(testUID), nil); err != nil {
			t.Fatalf("DeleteOwned of the orphan: %v", err)
		}
		s, ok := usersSubnet(f)
		if !ok {
			t.Fatal("the collector deleted the user's subnet on the victim's network")
		}
		if _, marked := ours.OwnerOf(s.Name, s.Description); marked {
			t.Errorf("the user's subnet still carries the mark: %q %q", s.Name, s.Description)
		}
	})
}

// halfDoneOnTheVictimsNetwork is the state the attack leaves: the
// attacker's (testUID's) mark on the user's subnet of 192.168.0.0/16, on a
// network the victim adopted, listed, and the attacker's adoption refused.
func halfDoneOnTheVictimsNetwork(t *testing.T) *fixture {
	t.Helper()
	attacker := withSpec(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(s *samplecrdv1.NetworkSpec) {
		s.DeletionPolicy = samplecrdv1.DeletionPolicyDelete
	})
	f := newFixture(t, attacker, func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "used by both", "192.168.0.0/16", "192.168.0.1")
	})
	f.neutron.CompleteLate(neutronfake.UpdateSubnet)
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose mark's answer was lost succeeded")
	}
	// The victim's subnet is added by hand only now: an adoption compares
	// every subnet of the network with spec.subnets (issue 42), so the
	// attacker's read must have found its own subnet alone. Then the
	// victim's adoption, in the attacker's wait for a list: its subnet,
	// then the network, each marked as the victim's.
	victimsSubnet := f.neutron.AddSubnet(seededNet, "handmade-2", "", "10.9.0.0/24", "10.9.0.1")
	victim := neutron.Owner{Namespace: "victim", Name: "net", UID: otherUID}
	name, desc := ours.ResourceName(victim), ours.Description()
	if _, err := f.neutron.UpdateSubnet(f.ctx, victimsSubnet, neutron.SubnetUpdate{Name: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.neutron.UpdateNetwork(f.ctx, seededNet, neutron.NetworkUpdate{Name: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	f.listAfterTheGrace()
	if out := f.sync("net"); out.Condition == nil || out.Condition.Reason != samplecrdv1.ReasonAdoptionRefused {
		t.Fatalf("the attacker's pass after the victim's adoption: %v, want AdoptionRefused", out.Err)
	}
	return f
}

// usersSubnet is the subnet of 192.168.0.0/16, if Neutron still holds it.
func usersSubnet(f *fixture) (neutron.Subnet, bool) {
	for _, s := range f.neutron.Subnets() {
		if s.CIDR == "192.168.0.0/16" {
			return s, true
		}
	}
	return neutron.Subnet{}, false
}

// markStillInFlight is a Neutron whose first subnet update times out on
// the caller's side while neutron-server is still working on it: the
// caller gets the lost answer at once, and the update happens only when
// the test calls complete, as it may up to LateCompletionGrace later.
type markStillInFlight struct {
	neutron.Interface
	pending func()
}

func (m *markStillInFlight) UpdateSubnet(ctx context.Context, id string, u neutron.SubnetUpdate) (neutron.Subnet, error) {
	if m.pending != nil || u.IfRevision == nil {
		return m.Interface.UpdateSubnet(ctx, id, u)
	}
	m.pending = func() {
		if _, err := m.Interface.UpdateSubnet(ctx, id, u); err != nil {
			panic(err)
		}
	}
	return neutron.Subnet{}, fmt.Errorf("%s: %w", neutronfake.UpdateSubnet, neutronfake.ErrAnswerLost)
}

// TestAReleaseWaitsOutTheGraceOfALostMark: the adoption's mark times out
// on the controller's side while neutron-server still works on it, which
// it may for LateCompletionGrace (the reason the inventory asks for a
// list only that long after the loss). Any list begun in between, though
// (the periodic one, or one another namespace asks for at once: a
// stranger's subnet on its network, a Network whose finalizer it removed
// for the collector), settles the owner (Inventory.settle clears it for a
// list begun after the loss), and shows no mark yet. The mark completes
// after that list; the Network's delete, now "settled", releases nothing,
// finalizes, and leaves the user's subnet marked as a gone Network's, for
// the garbage collector to delete: the bug ffdafa6 fixed, reopened by the
// timing of any early list.
//
// The fix should guarantee: Settled (at least) refuses until a list begun
// LateCompletionGrace after the lost answer has succeeded.
func TestAReleaseWaitsOutTheGraceOfALostMark(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-subnet", "by hand", "192.168.0.0/16", "192.168.0.1")
	})
	inFlight := &markStillInFlight{Interface: f.neutron}
	f.connect(inFlight, defaultOptions(), nil)
	if out := f.sync("net"); out.Err == nil || inFlight.pending == nil {
		t.Fatalf("the pass whose mark's answer was lost: %v", out.Err)
	}
	f.list() // an early list, begun after the loss, before the mark is done
	inFlight.pending()
	f.update(deleting(f.network("net")))
	if out := f.sync("net"); out.Finalized {
		sub := f.neutron.Subnets()[0]
		if o, ok := ours.OwnerOf(sub.Name, sub.Description); ok {
			t.Errorf("the delete finalized within LateCompletionGrace of a lost mark, leaving the user's subnet marked as %s's for the collector", o.Key())
		}
	}
}
