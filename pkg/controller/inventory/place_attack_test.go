package inventory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// Attacks on ec37777 ("every request carries the place it must go to"):
// what the store holds must be of the place it says it was listed in
// (Status.Place), or the door's requirement of that place sends a read
// of one place's ID to another, whose 404 is counted as done.

// answeredAcrossASwap is Neutron whose credentials are swapped to another
// region while a create of the door's is under way: sent to the first
// region, its answer arrives once the store has been listed in the second
// (afterCreate), or while it is being listed (duringList).
type answeredAcrossASwap struct {
	*fake.Neutron
	afterCreate, duringList func()
}

func (c *answeredAcrossASwap) CreateNetwork(ctx context.Context, name, description string, mtu int) (neutron.Network, error) {
	n, err := c.Neutron.CreateNetwork(ctx, name, description, mtu)
	if hook := c.afterCreate; hook != nil {
		c.afterCreate = nil
		hook()
	}
	return n, err
}

func (c *answeredAcrossASwap) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	if hook := c.duringList; hook != nil {
		c.duringList = nil
		hook()
	}
	return c.Neutron.ListNetworks(ctx, description, visit)
}

// TestAWriteOfOnePlaceIsNotRecordedInAnotherPlacesStore: the store is
// listed in region-1, and a create of A's network is sent there. The
// controller's clouds.yaml is then swapped to region-2, and the store is
// listed there (the door asks for that list at once). The create's answer
// comes back after that list, or while it runs; either way the store
// records region-1's network, and the list keeps it (a write recorded
// during a list wins over the list: Store.replace), in a store whose
// Status.Place says region-2. Every request of the door now requires
// region-2, and a delete of that network (the garbage collector's, once
// A's Network is gone) reads it there: region-2's 404 is counted as done,
// the store forgets it, and the network stays in region-1, still marked
// as A's, while the controller says it deleted it.
//
// The fix should guarantee: the store holds only what is in the place its
// Status.Place names. A write recorded while the store was listed in one
// place is not recorded in, nor kept by a list of, another (the write
// went to the place the door required when it allowed it, neutron.InPlace);
// a list of that place finds it again.
func TestAWriteOfOnePlaceIsNotRecordedInAnotherPlacesStore(t *testing.T) {
	ctx := context.Background()
	m := mark(t, "prod")
	for _, when := range []string{"after the list of region-2", "during the list of region-2"} {
		t.Run(when, func(t *testing.T) {
			c := &answeredAcrossASwap{Neutron: fake.New()}
			c.SetRegion("region-1")
			inv := inventory.New(c, m, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour,
				Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			var created neutron.Network
			switch when {
			case "after the list of region-2":
				c.afterCreate = func() {
					c.SetRegion("region-2")
					if _, err := inv.Refresh(ctx); err != nil {
						t.Error(err)
					}
				}
				n, err := inv.CreateNetwork(ctx, ownerA, 0)
				if err != nil {
					t.Fatal(err)
				}
				created = n
			case "during the list of region-2":
				c.SetRegion("region-2")
				c.duringList = func() {
					// Sent to region-1 before the swap; its answer is
					// recorded while region-2 is listed.
					c.SetRegion("region-1")
					n, err := inv.CreateNetwork(ctx, ownerA, 0)
					if err != nil {
						t.Error(err)
					}
					created = n
					c.SetRegion("region-2")
				}
				if _, err := inv.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if created.ID == "" {
				t.Fatal("no network was created in region-1")
			}
			region2 := neutron.Place{AuthURL: fake.FakeAuthURL, Region: "region-2", Interface: "public"}
			if err := inv.ListedIn(region2); err != nil {
				t.Fatalf("the store was not last listed in region-2: %v", err)
			}
			if held := inv.Get(ownerA.UID); len(held.Networks) != 0 {
				t.Errorf("the store, listed in region-2, holds %+v for A: region-1's network", held.Networks)
			}

			// The garbage collector's delete, through the door.
			c.ClearRequests()
			err := inv.DeleteNetwork(ctx, ownerA, created.ID)
			c.SetRegion("region-1")
			if len(c.Networks()) == 1 && err == nil {
				t.Errorf("DeleteNetwork = nil, and region-1 still holds %s: counted as deleted on region-2's answer (requests %q)",
					created.ID, c.Requests())
			}
			if err == nil || !(errors.Is(err, inventory.ErrNotOurs) || neutron.IsCredentialsError(err)) {
				t.Errorf("DeleteNetwork = %v, want ErrNotOurs (region-2's store holds no such network) or a CredentialsError", err)
			}
		})
	}
}
