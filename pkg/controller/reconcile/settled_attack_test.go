package reconcile

import (
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
// The fix should guarantee: a delete never deletes, on its own, a subnet
// the Network's adoption marked (status.adopted.subnetID) on a network
// the Network does not own; it gives the subnet back its names instead.
func TestAHalfDoneAdoptionDeletesNoSubnetOfAnotherNetworksNetwork(t *testing.T) {
	attacker := withSpec(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(s *samplecrdv1.NetworkSpec) {
		s.DeletionPolicy = samplecrdv1.DeletionPolicyDelete
	})
	var victimsSubnet string
	f := newFixture(t, attacker, func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "used by both", "192.168.0.0/16", "192.168.0.1")
		victimsSubnet = f.AddSubnet(id, "handmade-2", "", "10.9.0.0/24", "10.9.0.1")
	})
	f.neutron.CompleteLate(neutronfake.UpdateSubnet)
	if out := f.sync("net"); out.Err == nil {
		t.Fatal("the pass whose mark's answer was lost succeeded")
	}
	// The victim's adoption, in the attacker's wait for a list: its
	// subnet, then the network, each marked as the victim's.
	victim := neutron.Owner{Namespace: "victim", Name: "net", UID: otherUID}
	name, desc := ours.ResourceName(victim), ours.Description()
	if _, err := f.neutron.UpdateSubnet(f.ctx, victimsSubnet, neutron.SubnetUpdate{Name: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.neutron.UpdateNetwork(f.ctx, seededNet, neutron.NetworkUpdate{Name: &name, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	f.list()
	if out := f.sync("net"); out.Condition == nil || out.Condition.Reason != samplecrdv1.ReasonAdoptionRefused {
		t.Fatalf("the attacker's pass after the victim's adoption: %v, want AdoptionRefused", out.Err)
	}
	f.update(deleting(f.network("net")))
	out := f.sync("net")
	if !out.Finalized || out.Err != nil {
		t.Errorf("the attacker's delete: finalized %t, %v", out.Finalized, out.Err)
	}
	for _, s := range f.neutron.Subnets() {
		if s.CIDR == "192.168.0.0/16" {
			if s.Name != "handmade" || s.Description != "used by both" {
				t.Errorf("the subnet on the victim's network is %q %q after the attacker's delete, want its own names back", s.Name, s.Description)
			}
			return
		}
	}
	t.Errorf("the attacker's delete deleted the user's subnet 192.168.0.0/16 on the victim's network %s", seededNet)
}
