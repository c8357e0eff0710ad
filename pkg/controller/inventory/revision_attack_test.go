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
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			f := fake.New()
			public, other := f.AddExternalNetwork("public"), f.AddExternalNetwork("other")
			r, err := f.CreateRouter(ctx, m.ResourceName(ownerA), m.Description(), public)
			if err != nil {
				t.Fatal(err)
			}
			inv := listed(t, f, time.Hour, clocktesting.NewFakeClock(time.Unix(1e9, 0)))
			if held := inv.Get(ownerA.UID).Routers; len(held) != 1 {
				t.Fatalf("the list holds %+v for A, want its router", held)
			}
			// The person's change: the router is theirs now.
			if _, err := f.UpdateRouter(ctx, r.ID, nil, ptr.To("taken out of management by hand")); err != nil {
				t.Fatal(err)
			}
			before := routerIn(f, r.ID)

			err = write(ctx, inv, r.ID, other)
			after, still := routerIn(f, r.ID), slices.ContainsFunc(f.Routers(), func(x neutron.Router) bool { return x.ID == r.ID })
			if !still || after != before {
				t.Errorf("after A's %s the router is %+v (in Neutron: %v), want it as the person left it, %+v: requests %q",
					name, after, still, before, f.Requests())
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

// routerIn is router id as Neutron holds it (zero once gone).
func routerIn(f *fake.Neutron, id string) neutron.Router {
	rs := f.Routers()
	if i := slices.IndexFunc(rs, func(r neutron.Router) bool { return r.ID == id }); i >= 0 {
		return rs[i]
	}
	return neutron.Router{}
}
