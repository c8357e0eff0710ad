package reconcile

import (
	"context"
	"sync"
	"testing"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// networkMarkedAfterRead is a Neutron whose network id alone is marked as
// another Network's right after the first list of its subnets answers:
// another namespace's adoption of the same network, with a subnet of
// another range, that marked its own subnet and then the network between
// this pass's read and this pass's marks. The subnet this pass adopts is
// not touched, so its revision is the one this pass read.
type networkMarkedAfterRead struct {
	neutron.Interface
	fake  *neutronfake.Neutron
	id    string
	other neutron.Owner
	once  sync.Once
}

func (m *networkMarkedAfterRead) SubnetsOf(ctx context.Context, id string) ([]neutron.Subnet, error) {
	subs, err := m.Interface.SubnetsOf(ctx, id)
	if id == m.id {
		m.once.Do(func() {
			name, desc := ours.ResourceName(m.other), ours.Description()
			if _, err := m.fake.UpdateNetwork(ctx, id, neutron.NetworkUpdate{Name: &name, Description: &desc}); err != nil {
				panic(err)
			}
		})
	}
	return subs, err
}

// TestALostAdoptionRaceLeavesNoMarkOnTheWinnersNetwork: two namespaces
// granted adoption in one project name the same unmarked network, each
// with a subnet of its own range on it. The victim's pass marks its subnet
// and the network between the attacker's read and the attacker's marks.
// The attacker's MarkSubnet is conditional on its subnet's revision only,
// which the victim's writes did not raise, so it succeeds; the network,
// read again, is the victim's, and the pass ends with errAdoptionChanged,
// leaving the attacker's mark on a subnet of the victim's network.
//
// Impact: the attacker's Network now owns (in the inventory, by its UID)
// a subnet of a network another namespace's Network owns. Nothing undoes
// the mark: the next pass refuses the network ("belongs to another
// Network"), and deleting the attacker's Network with deletionPolicy
// Delete deletes that subnet from the victim's network (or, Orphan,
// writes on it); it can be the subnet the victim's workloads use beside
// its own. The If-Match closed the overwrite of a mark, not the half
// adoption a lost race leaves.
//
// The fix should guarantee: a pass that marked a subnet and then finds
// the network changed (errAdoptionChanged after MarkSubnet) puts the
// subnet back as it read it (its own name and description, from the
// adoption record), or the network is marked before the subnet; a lost
// race leaves no mark of the loser on anything of the winner's network.
func TestALostAdoptionRaceLeavesNoMarkOnTheWinnersNetwork(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
		f.AddSubnet(id, "handmade-2", "", "10.9.0.0/24", "10.9.0.1")
	})
	victim := neutron.Owner{Namespace: "victim", Name: "net", UID: otherUID}
	f.connect(&networkMarkedAfterRead{Interface: f.neutron, fake: f.neutron, id: seededNet, other: victim}, defaultOptions(), nil)
	if out := f.sync("net"); out.Err == nil {
		t.Errorf("the pass that found its network marked since its read succeeded")
	}
	f.sync("net")
	for _, s := range f.neutron.Subnets() {
		if o, ok := ours.OwnerOf(s.Name, s.Description); ok && o.UID != victim.UID {
			t.Errorf("subnet %s (%s) of the victim's network carries the losing Network's mark after the race", s.ID, s.CIDR)
		}
		if s.CIDR == "192.168.0.0/16" && (s.Name != "handmade" || s.Description != "") {
			t.Errorf("the subnet the losing Network marked is %q %q, want its own name and description back", s.Name, s.Description)
		}
	}
}
