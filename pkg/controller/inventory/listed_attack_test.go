package inventory_test

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// Attacks on the one-request network delete (Store.ListedRevision, issue
// 53): a DELETE onto the revision the latest list read, while the store
// holds the network and its subnets as that list read them. Each test
// makes an interleaving in which that proof might be wrong, and fails if
// A's delete takes what is not A's. Every one passed against
// 77d1379/ac9cdc9 (the store's proof held, or Neutron's 412 caught it):
// they are kept for the interleavings no other test makes.

// hooked is a fake whose lists run a hook at chosen moments: between two
// pages of networks (the network page given twice, as a list whose pages
// shift does), and before the subnets are listed (after every network
// page).
type hooked struct {
	*fake.Neutron
	// betweenNetworkPages, when set, runs after the first page of
	// networks; the networks are then listed again as a second page.
	betweenNetworkPages func()
	// beforeSubnets, when set, runs once the networks are listed.
	beforeSubnets func()
}

func (h *hooked) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	if err := h.Neutron.ListNetworks(ctx, description, visit); err != nil || h.betweenNetworkPages == nil {
		return err
	}
	h.betweenNetworkPages()
	return h.Neutron.ListNetworks(ctx, description, visit)
}

func (h *hooked) ListSubnets(ctx context.Context, description string, visit func([]neutron.Subnet) error) error {
	if h.beforeSubnets != nil {
		h.beforeSubnets()
	}
	return h.Neutron.ListSubnets(ctx, description, visit)
}

func newHooked(t *testing.T) (*hooked, *inventory.Inventory) {
	t.Helper()
	h := &hooked{Neutron: fake.New()}
	inv := inventory.New(h, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
		Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
	return h, inv
}

func refresh(t *testing.T, inv *inventory.Inventory) {
	t.Helper()
	if _, err := inv.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestAnEntryKeptForAWriteDuringAListKeepsOnlyAnOlderProof: Store.replace
// keeps an owner's entry as its writes left it when one was recorded
// during the lists, with the listed proof of the list before. Here A has
// two networks; the first list proves netA. A person then changes netA's
// subnets (a stranger's subnet made on it, or A's subnet marked for B or
// unmarked), and during the next list A's controller writes to its other
// network (a recorded write, which keeps A's whole entry as it was). The
// second list, which saw the change, is thrown away for A, and the store
// still says netA is proven at the first list's revision. The DELETE onto
// it must be refused (412) and the reads must then hold the delete.
func TestAnEntryKeptForAWriteDuringAListKeepsOnlyAnOlderProof(t *testing.T) {
	for name, change := range map[string]func(f *fake.Neutron, netA, subA string) (keep string){
		"a stranger's subnet made on it": func(f *fake.Neutron, netA, _ string) string {
			return f.AddSubnet(netA, "tenant-b-subnet", "", "10.0.9.0/24", "")
		},
		"A's subnet marked for B": func(f *fake.Neutron, _, subA string) string {
			if _, err := f.UpdateSubnet(context.Background(), subA, neutron.SubnetUpdate{Name: ptr.To(mark(t, "prod").ResourceName(ownerB))}); err != nil {
				t.Fatal(err)
			}
			return subA
		},
		"A's subnet taken out of management": func(f *fake.Neutron, _, subA string) string {
			if _, err := f.UpdateSubnet(context.Background(), subA, neutron.SubnetUpdate{Description: ptr.To("mine now")}); err != nil {
				t.Fatal(err)
			}
			return subA
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			h, inv := newHooked(t)
			m := mark(t, "prod")
			netA, subA := seed(h.Neutron, m, ownerA, "10.0.0.0/24")
			_, subA2 := seed(h.Neutron, m, ownerA, "10.1.0.0/24")
			refresh(t, inv)

			keep := change(h.Neutron, netA, subA)
			h.beforeSubnets = func() {
				h.beforeSubnets = nil
				if _, err := inv.UpdateSubnet(ctx, ownerA, subA2, neutron.SubnetUpdate{DNSNameservers: &[]string{"10.1.0.53"}}); err != nil {
					t.Fatal(err)
				}
			}
			refresh(t, inv)
			h.ClearRequests()

			err := inv.DeleteNetwork(ctx, ownerA, netA)
			t.Logf("requests %q", h.Requests())
			if !subnetHeld(h.Neutron, keep) {
				t.Errorf("DeleteNetwork = %v and took subnet %s (%s); requests %q", err, keep, name, h.Requests())
			}
			if !inventory.NotOnlyOurs(err) {
				t.Errorf("DeleteNetwork = %v, want it held as not only A's; requests %q", err, h.Requests())
			}
		})
	}
}

// TestANetworkOnTwoPagesIsProvenOnlyAtItsLaterRevision: a list whose
// pages shift gives netA twice. Between the two pages a person changes
// what is on it: a stranger's subnet, or A's subnet marked for B. The
// first sighting must not be what the DELETE goes onto without the
// subnets that the second brought (addNetworks keeps the last sighting).
// And with the change undone before the subnets are listed (the subnet
// marked A's again), the subnets list sees only A's: the revision the
// network was listed at must still count the change.
func TestANetworkOnTwoPagesIsProvenOnlyAtItsLaterRevision(t *testing.T) {
	ctx := context.Background()
	t.Run("a stranger's subnet made between the pages", func(t *testing.T) {
		h, inv := newHooked(t)
		netA, _ := seed(h.Neutron, mark(t, "prod"), ownerA, "10.0.0.0/24")
		var stranger string
		h.betweenNetworkPages = func() { stranger = h.AddSubnet(netA, "handmade", "", "10.0.9.0/24", "") }
		refresh(t, inv)
		h.betweenNetworkPages = nil
		err := inv.DeleteNetwork(ctx, ownerA, netA)
		if !subnetHeld(h.Neutron, stranger) {
			t.Errorf("DeleteNetwork = %v and took %s; requests %q", err, stranger, h.Requests())
		}
	})
	t.Run("A's subnet marked for B between the pages, and back before the subnets", func(t *testing.T) {
		h, inv := newHooked(t)
		m := mark(t, "prod")
		netA, subA := seed(h.Neutron, m, ownerA, "10.0.0.0/24")
		h.betweenNetworkPages = func() {
			if _, err := h.UpdateSubnet(ctx, subA, neutron.SubnetUpdate{Name: ptr.To(m.ResourceName(ownerB))}); err != nil {
				t.Fatal(err)
			}
		}
		// B's tenant hands it back before the subnets are read, then
		// takes it again after the list: only the last change matters,
		// and it raised the revision past any the list read.
		h.beforeSubnets = func() {
			if _, err := h.UpdateSubnet(ctx, subA, neutron.SubnetUpdate{Name: ptr.To(m.ResourceName(ownerA))}); err != nil {
				t.Fatal(err)
			}
		}
		refresh(t, inv)
		h.betweenNetworkPages, h.beforeSubnets = nil, nil
		if _, err := h.UpdateSubnet(ctx, subA, neutron.SubnetUpdate{Name: ptr.To(m.ResourceName(ownerB))}); err != nil {
			t.Fatal(err)
		}
		err := inv.DeleteNetwork(ctx, ownerA, netA)
		t.Logf("requests %q", h.Requests())
		if !subnetHeld(h.Neutron, subA) {
			t.Errorf("DeleteNetwork = %v and took %s, B's now; requests %q", err, subA, h.Requests())
		}
	})
}

// TestAnUnrecognisedMarkedSubnetHoldsTheListedDelete: on A's network, a
// subnet that carries the mark under a name that parses as no owner's
// (counted in Status.Unrecognised, held in no entry). It is in netA's
// SubnetIDs and in no entry of A's: no listed proof, and the reads hold
// the delete. (A subnet marked for B is TestADeleteTakesNoSubnetThatIsNotItsOwn's.)
func TestAnUnrecognisedMarkedSubnetHoldsTheListedDelete(t *testing.T) {
	ctx := context.Background()
	m := mark(t, "prod")
	f := fake.New()
	netA, _ := seed(f, m, ownerA, "10.0.0.0/24")
	other := f.AddSubnet(netA, "ns/b/not-a-uid", m.Description(), "10.0.9.0/24", "")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
	err := inv.DeleteNetwork(ctx, ownerA, netA)
	if !subnetHeld(f, other) || !inventory.NotOnlyOurs(err) {
		t.Errorf("DeleteNetwork = %v (subnet %s left: %v), want it held; requests %q", err, other, subnetHeld(f, other), f.Requests())
	}
}

// TestAnAdoptionByBAfterTheListIsRefusedByTheRevision: after the list
// proved netA, a person makes a subnet on it and B's Network adopts it
// (MarkSubnet for B, which records it in B's entry and unlists nothing of
// A's). A's store still holds netA proven at the list's revision; the
// DELETE onto it must be refused, and the reads hold it for B's subnet.
func TestAnAdoptionByBAfterTheListIsRefusedByTheRevision(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	netA, _ := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
	inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))

	handmade := f.AddSubnet(netA, "handmade", "", "10.0.9.0/24", "")
	subs, err := inv.SubnetsOf(ctx, netA)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		if s.ID == handmade {
			if err := inv.MarkSubnet(ctx, ownerB, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.ClearRequests()
	err = inv.DeleteNetwork(ctx, ownerA, netA)
	if !subnetHeld(f, handmade) || !inventory.NotOnlyOurs(err) {
		t.Errorf("DeleteNetwork = %v (B's adopted subnet %s left: %v); requests %q", err, handmade, subnetHeld(f, handmade), f.Requests())
	}
}

// TestAReleasedSubnetIsNotTakenByItsNetworksListedDelete: A releases its
// subnet (ReleaseSubnet: its mark replaced, it leaves the store; as
// release does before a duplicate's DeleteOwned), then deletes the
// network. The release's write unlists the network, and the reads see
// the released subnet is not A's: the network stays. And where the
// release's answer is lost (the subnet released in Neutron, the store
// not told), the delete waits for a list.
func TestAReleasedSubnetIsNotTakenByItsNetworksListedDelete(t *testing.T) {
	ctx := context.Background()
	t.Run("answered", func(t *testing.T) {
		f := fake.New()
		netA, subA := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
		inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
		if err := inv.ReleaseSubnet(ctx, ownerA, subA, nil); err != nil {
			t.Fatal(err)
		}
		err := inv.DeleteNetwork(ctx, ownerA, netA)
		if !subnetHeld(f, subA) || !inventory.NotOnlyOurs(err) {
			t.Errorf("DeleteNetwork = %v (released subnet left: %v); requests %q", err, subnetHeld(f, subA), f.Requests())
		}
	})
	t.Run("answer lost", func(t *testing.T) {
		f := fake.New()
		netA, subA := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
		inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
		f.CompleteLate(fake.UpdateSubnet)
		if err := inv.ReleaseSubnet(ctx, ownerA, subA, nil); err == nil {
			t.Fatal("ReleaseSubnet with its answer lost = nil")
		}
		for _, s := range f.Subnets() {
			if s.ID == subA && s.Description == mark(t, "prod").Description() {
				t.Fatal("the lost release was not made in Neutron: no interleaving")
			}
		}
		err := inv.DeleteNetwork(ctx, ownerA, netA)
		if !subnetHeld(f, subA) {
			t.Errorf("DeleteNetwork = %v and took the subnet released in Neutron; requests %q", err, f.Requests())
		}
	})
}

// TestAnOlderListFinishingLastProvesOnlyItsOwnRevision: two lists overlap
// (the loop's and an asked-for one): the older reads the networks, then a
// person makes a subnet on A's network and the newer list runs whole and
// replaces the store; the older then reads the subnets and replaces the
// store last, with A's network proven at the revision it read, before the
// stranger's subnet. The DELETE onto it must be refused and the reads
// hold it.
func TestAnOlderListFinishingLastProvesOnlyItsOwnRevision(t *testing.T) {
	ctx := context.Background()
	h, inv := newHooked(t)
	netA, _ := seed(h.Neutron, mark(t, "prod"), ownerA, "10.0.0.0/24")
	refresh(t, inv)
	var stranger string
	h.beforeSubnets = func() {
		h.beforeSubnets = nil
		stranger = h.AddSubnet(netA, "handmade", "", "10.0.9.0/24", "")
		refresh(t, inv) // the newer list, whole
	}
	refresh(t, inv) // the older list, finishing last
	h.ClearRequests()
	err := inv.DeleteNetwork(ctx, ownerA, netA)
	t.Logf("requests %q", h.Requests())
	if !subnetHeld(h.Neutron, stranger) || !inventory.NotOnlyOurs(err) {
		t.Errorf("DeleteNetwork = %v (stranger %s left: %v); requests %q", err, stranger, subnetHeld(h.Neutron, stranger), h.Requests())
	}
}
