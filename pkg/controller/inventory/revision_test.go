package inventory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// Writes onto a revision seen as the owner's (revision.go): the store is
// as old as its latest list, and every write to a resource it holds is
// made only onto a revision that carried the owner's mark.

// heldWrites are the door's writes to a resource the store holds for
// ownerA, on its network net and subnet sub.
func heldWrites(ctx context.Context, inv *inventory.Inventory, net, sub string) map[string]struct {
	onSubnet bool
	write    func() error
} {
	type w = struct {
		onSubnet bool
		write    func() error
	}
	return map[string]w{
		"UpdateSubnet": {true, func() error {
			_, err := inv.UpdateSubnet(ctx, ownerA, sub, neutron.SubnetUpdate{DNSNameservers: &[]string{"10.0.0.53"}})
			return err
		}},
		"DeleteSubnet":  {true, func() error { return inv.DeleteSubnet(ctx, ownerA, sub) }},
		"ReleaseSubnet": {true, func() error { return inv.ReleaseSubnet(ctx, ownerA, sub, nil) }},
		"UpdateNetwork": {false, func() error {
			_, err := inv.UpdateNetwork(ctx, ownerA, net, neutron.NetworkUpdate{MTU: ptr.To(1400)})
			return err
		}},
		"ReleaseNetwork": {false, func() error { return inv.ReleaseNetwork(ctx, ownerA, net, nil) }},
		"DeleteNetwork":  {false, func() error { return inv.DeleteNetwork(ctx, ownerA, net) }},
	}
}

// seededAndListed is Neutron with a network and subnet of ownerA's,
// marked with m, and an inventory that has listed them.
func seededAndListed(t *testing.T, m neutron.Mark) (f *fake.Neutron, inv *inventory.Inventory, net, sub string) {
	t.Helper()
	f = fake.New()
	net, sub = seed(f, m, ownerA, "10.0.0.0/24")
	return f, listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0))), net, sub
}

// TestAWriteLeavesWhatChangedHandsSinceTheList: after the list, a person
// takes A's resource out of management (its mark removed), or another
// Network adopts it (its mark written, as an adoption writes it). Every
// write of A's to it is refused with ErrMarkGone, sends nothing that
// changes it, and asks for a list, which drops it from A's.
func TestAWriteLeavesWhatChangedHandsSinceTheList(t *testing.T) {
	m := mark(t, "prod")
	for change, u := range map[string]struct{ Name, Description *string }{
		"mark removed":         {Description: ptr.To("taken out of management by hand")},
		"adopted by Network C": {Name: ptr.To(m.ResourceName(ownerC)), Description: ptr.To(m.Description())},
	} {
		ctx := context.Background()
		for name, w := range heldWrites(ctx, nil, "", "") {
			t.Run(name+" after the "+change, func(t *testing.T) {
				f, inv, net, sub := seededAndListed(t, m)
				var err error
				if w.onSubnet {
					_, err = f.UpdateSubnet(ctx, sub, neutron.SubnetUpdate{Name: u.Name, Description: u.Description})
				} else {
					_, err = f.UpdateNetwork(ctx, net, neutron.NetworkUpdate{Name: u.Name, Description: u.Description})
				}
				if err != nil {
					t.Fatal(err)
				}
				before := f.Requests()
				f.ClearRequests()
				netBefore, subBefore := f.Networks()[0], f.Subnets()[0]

				err = heldWrites(ctx, inv, net, sub)[name].write()
				if !errors.Is(err, inventory.ErrMarkGone) {
					t.Errorf("%s = %v, want ErrMarkGone", name, err)
				}
				if n, s := f.Networks(), f.Subnets(); len(n) != 1 || len(s) != 1 || n[0].RevisionNumber != netBefore.RevisionNumber || s[0].RevisionNumber != subBefore.RevisionNumber {
					t.Errorf("Neutron holds %+v and %+v after A's %s, want them as the %s left them (%v): requests %q",
						n, s, name, change, before, f.Requests())
				}
				if !inv.ListDue() {
					t.Error("no list asked for")
				}
			})
		}
	}
}

// TestAWriteGoesThroughAChangeThatKeepsTheMark: the resource changed
// since the list, but not hands: its subnet's DNS servers set by hand,
// or, for the network, a subnet on it changed (which raises a network's
// revision). The first write is refused (412), the resource read again,
// and the write made onto the revision read.
func TestAWriteGoesThroughAChangeThatKeepsTheMark(t *testing.T) {
	ctx := context.Background()
	for name, w := range heldWrites(ctx, nil, "", "") {
		t.Run(name, func(t *testing.T) {
			f, inv, net, sub := seededAndListed(t, mark(t, "prod"))
			if _, err := f.UpdateSubnet(ctx, sub, neutron.SubnetUpdate{DNSNameservers: &[]string{"10.0.0.99"}}); err != nil {
				t.Fatal(err)
			}
			f.ClearRequests()

			if err := heldWrites(ctx, inv, net, sub)[name].write(); err != nil {
				t.Fatalf("%s = %v; requests %q", name, err, f.Requests())
			}
			if got := f.Requests(); len(got) < 2 || (w.onSubnet && !slices.Contains(got, fake.SubnetsOf)) {
				t.Errorf("requests %q, want the write refused once, the subnet read, and the write again", got)
			}
		})
	}
}

// TestAWriteToWhatIsGoneIsDoneOrWaits: the resource was deleted after the
// list. A delete or release of it is done, and the store forgets it; an
// update waits for the list it asks for (ErrMarkGone).
func TestAWriteToWhatIsGoneIsDoneOrWaits(t *testing.T) {
	ctx := context.Background()
	for name, w := range heldWrites(ctx, nil, "", "") {
		t.Run(name, func(t *testing.T) {
			f, inv, net, sub := seededAndListed(t, mark(t, "prod"))
			var err error
			if w.onSubnet {
				err = f.DeleteSubnet(ctx, sub, f.Revision(sub))
			} else {
				err = f.DeleteNetwork(ctx, net, f.Revision(net))
			}
			if err != nil {
				t.Fatal(err)
			}

			err = heldWrites(ctx, inv, net, sub)[name].write()
			update := name == "UpdateSubnet" || name == "UpdateNetwork"
			switch {
			case update && !errors.Is(err, inventory.ErrMarkGone):
				t.Errorf("%s = %v, want ErrMarkGone", name, err)
			case !update && err != nil:
				t.Errorf("%s = %v, want done", name, err)
			}
			held := inv.Get(ownerA.UID)
			if gone := (w.onSubnet && len(held.Subnets) == 0) || (!w.onSubnet && len(held.Networks) == 0); gone == update {
				t.Errorf("after %s the store holds %+v", name, held)
			}
		})
	}
}

// checkedBeforeTheSwap is Neutron whose credentials were swapped to
// another project's just after the door asked where they reach: Place
// still answers the place the check saw.
type checkedBeforeTheSwap struct {
	*fake.Neutron
	checked neutron.Place
}

func (c checkedBeforeTheSwap) Place(context.Context) (neutron.Place, error) { return c.checked, nil }

// TestNoRequestOfTheDoorGoesToAPlaceNotListed: the door's check of the
// place passes, and the credentials are swapped to another project's
// before the request. Nothing is made in the other project, and a
// network read there as missing (another project's 404) is not taken
// for deleted: every request of the door must go to the place the store
// was listed in (neutron.InPlace), which the client checks when it sends.
func TestNoRequestOfTheDoorGoesToAPlaceNotListed(t *testing.T) {
	ctx := context.Background()
	for name, write := range map[string]func(inv *inventory.Inventory, net, sub string) error{
		"CreateNetwork": func(inv *inventory.Inventory, _, _ string) error {
			_, err := inv.CreateNetwork(ctx, ownerA, 0)
			return err
		},
		"DeleteNetwork":  func(inv *inventory.Inventory, net, _ string) error { return inv.DeleteNetwork(ctx, ownerA, net) },
		"ReleaseNetwork": func(inv *inventory.Inventory, net, _ string) error { return inv.ReleaseNetwork(ctx, ownerA, net, nil) },
		"DeleteSubnet":   func(inv *inventory.Inventory, _, sub string) error { return inv.DeleteSubnet(ctx, ownerA, sub) },
	} {
		t.Run(name, func(t *testing.T) {
			f := fake.New()
			f.SetProject("project-1")
			net, sub := seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
			listedIn, _ := f.Place(ctx)
			client := checkedBeforeTheSwap{Neutron: f, checked: listedIn}
			inv := inventory.New(client, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
				Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			f.SetProject("project-2")
			f.ClearRequests()

			err := write(inv, net, sub)
			if !neutron.IsCredentialsError(err) {
				t.Errorf("%s = %v, want a CredentialsError", name, err)
			}
			if got := f.Requests(); len(got) != 0 {
				t.Errorf("requests %q reached project-2", got)
			}
			if held := inv.Get(ownerA.UID); len(held.Networks) != 1 || len(held.Subnets) != 1 {
				t.Errorf("the store holds %+v: it forgot what project-1 still holds", held)
			}
		})
	}
}
