package reconcile

import (
	"context"
	"sync"
	"testing"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// markedAfterRead is a Neutron whose network id (and its subnets) is
// marked as another Network's right after the first list of its subnets
// answers, the last read before the marks: another worker's
// adoption pass, for a Network of another namespace, that marked it
// between this pass's read and its own marks.
type markedAfterRead struct {
	neutron.Interface
	fake  *neutronfake.Neutron
	id    string
	other neutron.Owner
	once  sync.Once
}

func (m *markedAfterRead) SubnetsOf(ctx context.Context, id string) ([]neutron.Subnet, error) {
	subs, err := m.Interface.SubnetsOf(ctx, id)
	if id == m.id {
		m.once.Do(func() {
			name, desc := ours.ResourceName(m.other), ours.Description()
			for _, s := range m.fake.Subnets() {
				if s.NetworkID == id {
					if _, err := m.fake.UpdateSubnet(ctx, s.ID, neutron.SubnetUpdate{Name: &name, Description: &desc}); err != nil {
						panic(err)
					}
				}
			}
			if _, err := m.fake.UpdateNetwork(ctx, id, neutron.NetworkUpdate{Name: &name, Description: &desc}); err != nil {
				panic(err)
			}
		})
	}
	return subs, err
}

// TestAnAdoptionDoesNotOverwriteAMarkMadeSinceItsRead: two namespaces
// granted adoption in one project (the controller's, which every
// namespace without credentials shares) name the same unmarked network.
// The victim's pass marks it; the attacker's pass, which read it a moment
// before, found no owner, and marks it again over the victim's mark: the
// door's MarkSubnet and MarkNetwork write name and description
// unconditionally. The attacker's Network then owns the network the
// victim's workloads are on: it may change its subnet's DNS servers and
// routes, or delete it with deletionPolicy Delete, while the victim's
// Network finds its network "gone" and makes another. An attacker that
// sees the victim's Network pending (or simply retries) needs only to win
// a read-then-write window.
//
// What the fix should guarantee: a mark is written only onto the state
// the ownership check read, e.g. an update conditional on the
// revision_number read (Neutron's If-Match), or a read again after the
// write that undoes nothing of another's and refuses; never over another
// Network's mark.
func TestAnAdoptionDoesNotOverwriteAMarkMadeSinceItsRead(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
	})
	victim := neutron.Owner{Namespace: "victim", Name: "net", UID: otherUID}
	f.connect(&markedAfterRead{Interface: f.neutron, fake: f.neutron, id: seededNet, other: victim}, defaultOptions(), nil)
	if out := f.sync("net"); out.Err == nil {
		t.Errorf("the pass that found its network marked since its read succeeded")
	}

	net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
	for what, got := range map[string][2]string{"network": {net.Name, net.Description}, "subnet": {sub.Name, sub.Description}} {
		if o, ok := ours.OwnerOf(got[0], got[1]); !ok || o.UID != victim.UID {
			t.Errorf("the %s the victim's Network marked is now %q: the attacker's adoption overwrote the mark made since its read", what, got[0])
		}
	}
}
