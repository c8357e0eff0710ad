package collector

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// Attacks on the collector through the network delete's check
// (Inventory.DeleteNetwork refuses, before any write, a network that holds
// a subnet not its owner's), as namespace B's tenant, who holds the
// project's credentials and may remove its own Networks' finalizers, would
// try them.

// tenantB is a gone Network of namespace B: its tenant removed the
// finalizer by hand, leaving its network and subnet orphaned.
var tenantB = neutron.Owner{Namespace: "tenant-b", Name: "b", UID: types.UID("b0b0b0b0-0000-4000-8000-0000000000b0")}

// Fixed IDs of blockedOrphanBeside's seed.
const (
	blockedNet      = "net-1"
	strangerOnB     = "subnet-3"
	aOrphanNet      = "net-4"
	aOrphanSubnetID = "subnet-5"
)

// blockedOrphanBeside seeds B's orphan, on whose network B put a subnet of
// its own, unmarked, so that its delete is refused for as long as B likes;
// then namespace default's orphan (owner), which nothing blocks.
func blockedOrphanBeside(f *neutronfake.Neutron) {
	seedOwned(f, ours, tenantB, "10.1.0.0/24", "10.1.0.1")
	f.AddSubnet(blockedNet, "b-lab", "namespace b's own", "10.2.0.0/24", "10.2.0.1")
	seedOwned(f, ours, owner, "10.3.0.0/24", "10.3.0.1")
}

// FAILS ON PURPOSE
//
// TestARefusedCollectionSpendsNoneOfTheListsBudget: --max-orphans-per-list
// bounds the deletions one list allows across the whole project, every
// namespace's orphans alike. A collection whose delete the door refuses
// before any write (a subnet not the orphan's on its network) deletes
// nothing, yet takes a deletion from that budget, and so does each of its
// retries (backoff from 5ms: about ten within the first ten seconds after
// a list). B, who may put a subnet on its own orphan's network, makes one
// such orphan, or a few, and spends the budget of every list: namespace
// A's orphans in the same project are held back (HeldCap) list after list,
// and A is warned that there are more orphans than the cap allows, which
// is false.
//
// The fix must guarantee: only a collection that sends a delete takes from
// the budget (or the slot is given back when the door refused before any
// write), so that an orphan nobody may collect costs other namespaces no
// collection.
func TestARefusedCollectionSpendsNoneOfTheListsBudget(t *testing.T) {
	cfg := defaultConfig()
	cfg.MaxPerList = 1
	f := newFixtureWith(t, cfg, nil, nil, blockedOrphanBeside)

	out := f.collect(tenantB.UID)
	var strangers *inventory.SubnetsNotOursError
	if !errors.As(out.Err, &strangers) {
		t.Fatalf("B's orphan: outcome %+v, want its delete refused for the subnet that is not its own", out)
	}
	if out := f.collect(testUID); out.Err != nil {
		t.Fatal(out.Err)
	}
	if slices.ContainsFunc(f.neutron.Networks(), func(n neutron.Network) bool { return n.ID == aOrphanNet }) {
		t.Errorf("A's orphan %s is held back: B's refused collection spent the list's one deletion (events %q)", aOrphanNet, f.takeEvents())
	}
	if !slices.ContainsFunc(f.neutron.Subnets(), func(s neutron.Subnet) bool { return s.ID == strangerOnB }) {
		t.Error("B's own subnet was taken")
	}
}

// FAILS ON PURPOSE
//
// TestARefusedCollectionWaitsForTheNextList: nothing the controller does
// ends the refusal of a collection blocked by a subnet that is not the
// orphan's (someone else's hand must remove it), yet the orphan is retried
// with backoff from 5ms (AddRateLimited), each retry a live list of the
// API server's Networks and a read of Neutron, until the backoff reaches
// --max-retry-delay, and again from 5ms after every Forget. B keeps as
// many such orphans as it likes.
//
// The fix must guarantee: such an orphan is not retried on the failure
// backoff; it waits for the next list of Neutron, which sights it again
// (Forget), or a long fixed delay (AddAfter).
func TestARefusedCollectionWaitsForTheNextList(t *testing.T) {
	f := newFixtureWith(t, defaultConfig(), nil, nil, blockedOrphanBeside)
	out := f.collect(tenantB.UID)
	var strangers *inventory.SubnetsNotOursError
	if !errors.As(out.Err, &strangers) {
		t.Fatalf("outcome %+v, want B's delete refused", out)
	}
	if out.Requeue == reconcile.AddRateLimited {
		t.Errorf("a collection refused until someone removes %v is retried on the failure backoff (AddRateLimited)", strangers.SubnetIDs)
	}
}
