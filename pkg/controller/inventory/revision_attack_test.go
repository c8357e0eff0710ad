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

// Attacks on 5c56344 ("every write to a held resource goes onto a
// revision seen carrying the owner's mark"): writes that still go onto
// the store's view of Neutron, as old as its latest list.

// TestARouterWriteLeavesWhatChangedHandsSinceTheList: the router A's
// Network made (spec.router's externalNetwork) is listed as A's. After the
// list, a person takes it out of management (its mark removed: the router
// is theirs now). Then
// A's controller writes to it as the store says: its deletion (Delete
// policy) deletes the person's router, its release (Orphan) overwrites
// the person's description with A's release mark, and a change of
// spec.router.externalNetwork moves the gateway of a router that is no
// longer A's. None of the three goes through writeOwned: updateRouter
// and DeleteRouter (routers.go) send on the store's word alone, the very
// thing revision.go says the store cannot vouch for.
//
// The fix should guarantee: a write to a router the store holds is sent
// only once Neutron has said, just before it, that the router still
// carries the owner's mark (and, where the client can send it, onto the
// revision read, If-Match); otherwise nothing is sent, a list is asked
// for, and the write fails with ErrMarkGone, as every other held write
// does.
func TestARouterWriteLeavesWhatChangedHandsSinceTheList(t *testing.T) {
	m := mark(t, "prod")
	writes := map[string]func(ctx context.Context, inv *inventory.Inventory, router, otherExternal string) error{
		"DeleteRouter": func(ctx context.Context, inv *inventory.Inventory, router, _ string) error {
			return inv.DeleteRouter(ctx, ownerA, router)
		},
		"ReleaseRouter": func(ctx context.Context, inv *inventory.Inventory, router, _ string) error {
			return inv.ReleaseRouter(ctx, ownerA, router)
		},
		"UpdateRouterGateway": func(ctx context.Context, inv *inventory.Inventory, router, otherExternal string) error {
			_, err := inv.UpdateRouterGateway(ctx, ownerA, router, otherExternal)
			return err
		},
	}
	for name, write := range writes {
		for _, betweenReadAndWrite := range []bool{false, true} {
			when := map[bool]string{false: " after the list", true: " between the door's read and its write"}[betweenReadAndWrite]
			t.Run(name+when, func(t *testing.T) {
				ctx := context.Background()
				f := fake.New()
				public, other := f.AddExternalNetwork("public"), f.AddExternalNetwork("other")
				r, err := f.CreateRouter(ctx, m.ResourceName(ownerA), m.Description(), public)
				if err != nil {
					t.Fatal(err)
				}
				client := &routerTakenAfterItsRead{Neutron: f}
				inv := inventory.New(client, m, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
					Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
				if _, err := inv.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				if held := inv.Get(ownerA.UID).Routers; len(held) != 1 {
					t.Fatalf("the list holds %+v for A, want its router", held)
				}
				// The person's change: the router is theirs now.
				take := func() {
					if _, err := f.UpdateRouter(ctx, r.ID, nil, ptr.To("taken out of management by hand"), routerIn(f, r.ID).RevisionNumber); err != nil {
						t.Fatal(err)
					}
				}
				if betweenReadAndWrite {
					client.take = take
				} else {
					take()
				}

				err = write(ctx, inv, r.ID, other)
				after := routerIn(f, r.ID)
				if after.ID == "" || after.Description != "taken out of management by hand" || after.GatewayNetworkID != public {
					t.Errorf("after A's %s the router is %+v, want it as the person left it (their description, gateway on %s): requests %q",
						name, after, public, f.Requests())
				}
				if !errors.Is(err, inventory.ErrMarkGone) {
					t.Errorf("%s = %v, want ErrMarkGone", name, err)
				}
				if !inv.ListDue() {
					t.Error("no list asked for")
				}
			})
		}
	}
}

// routerTakenAfterItsRead is Neutron where a person takes a router out of
// management (take) right after the door has read it, before its write.
type routerTakenAfterItsRead struct {
	*fake.Neutron
	take func()
}

func (c *routerTakenAfterItsRead) FindRouter(ctx context.Context, nameOrID string) (neutron.Router, error) {
	r, err := c.Neutron.FindRouter(ctx, nameOrID)
	if c.take != nil {
		c.take()
		c.take = nil
	}
	return r, err
}

// routerIn is router id as Neutron holds it (zero once gone).
func routerIn(f *fake.Neutron, id string) neutron.Router {
	rs := f.Routers()
	if i := slices.IndexFunc(rs, func(r neutron.Router) bool { return r.ID == id }); i >= 0 {
		return rs[i]
	}
	return neutron.Router{}
}

// movingPlace is a client whose credentials reach another region from
// its next read on (armed set): a clouds.yaml changed in place (the
// controller's, or the namespace's Secret) swaps the Session's client
// between the door's check of the place (allowWrite's samePlace) and the
// read writeOwned makes before, or after a 412 to, the write.
type movingPlace struct {
	*fake.Neutron
	armed bool
}

func (c *movingPlace) move() {
	if c.armed {
		c.armed = false
		c.SetRegion("elsewhere")
	}
}

func (c *movingPlace) GetNetwork(ctx context.Context, id string) (neutron.Network, error) {
	c.move()
	return c.Neutron.GetNetwork(ctx, id)
}

func (c *movingPlace) SubnetsOf(ctx context.Context, networkID string) ([]neutron.Subnet, error) {
	c.move()
	return c.Neutron.SubnetsOf(ctx, networkID)
}

// TestAReadFromAnotherPlaceIsNotGone: the credentials move to another
// region (or project) between the door's check of the place and the read
// writeOwned makes (the network's, first; the subnet's, after a 412, as
// its DNS servers were changed by hand). The other place's Neutron knows
// none of the IDs: the read answers 404, or no such subnet on the
// network, and goneFromNeutron counts A's release or delete as done.
// The store forgets the resource, and A's Network would finalize, while
// the network and subnet stay in the place the store was listed in,
// still marked as A's: a Network that is gone, whose adopted network the
// garbage collector of that place's inventory then deletes rather than
// giving it back. samePlace exists for exactly this ("a delete would be
// answered 404 by the new one and counted as done"), but is asked only
// before the read; 5c56344 made a release count a 404 as done, which
// before it was an error.
//
// The fix should guarantee: an absence is counted as done (errGone) only
// if the answer that said so came from the place the store was listed
// in; otherwise the write fails with a CredentialsError, and the store
// keeps what it holds. (Each request of the door requires the listed
// place, neutron.InPlace, and the client refuses to send it elsewhere.)
func TestAReadFromAnotherPlaceIsNotGone(t *testing.T) {
	ctx := context.Background()
	m := mark(t, "prod")
	for name := range heldWrites(ctx, nil, "", "") {
		t.Run(name, func(t *testing.T) {
			c := &movingPlace{Neutron: fake.New()}
			c.SetRegion("region-1") // a place of Keystone's: a noauth Neutron has one
			net, sub := seed(c.Neutron, m, ownerA, "10.0.0.0/24")
			inv := inventory.New(c, m, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
				Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.UpdateSubnet(ctx, sub, neutron.SubnetUpdate{DNSNameservers: &[]string{"10.0.0.99"}}); err != nil {
				t.Fatal(err)
			}
			c.ClearRequests()
			c.armed = true

			err := heldWrites(ctx, inv, net, sub)[name].write()
			c.SetRegion("region-1")
			var credentials *neutron.CredentialsError
			if !errors.As(err, &credentials) {
				t.Errorf("%s = %v, want a CredentialsError: the credentials reach another place", name, err)
			}
			held := inv.Get(ownerA.UID)
			if len(held.Networks) != 1 || len(held.Subnets) != 1 {
				t.Errorf("after %s the store holds %+v, want A's network and subnet, still in Neutron where it was listed: requests %q",
					name, held, c.Requests())
			}
			if n, s := c.Networks(), c.Subnets(); len(n) != 1 || len(s) != 1 {
				t.Fatalf("Neutron holds %+v and %+v", n, s)
			}
		})
	}
}
