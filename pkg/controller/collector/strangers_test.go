package collector

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

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
	f.SeedOwned(ours, tenantB, "10.1.0.0/24", "10.1.0.1")
	f.AddSubnet(blockedNet, "b-lab", "namespace b's own", "10.2.0.0/24", "10.2.0.1")
	f.SeedOwned(ours, owner, "10.3.0.0/24", "10.3.0.1")
}

// TestARefusedCollectionSpendsNothingAndWaitsForTheNextList: namespace B's
// tenant, who may remove a finalizer and add a subnet, leaves an orphan
// whose network holds a subnet of B's own. Its collection is refused before
// anything is sent (the delete would take that subnet), and then:
//   - it gives back the deletion it took from the list's budget, so A's
//     orphan, next in the queue, is collected even with a budget of one;
//   - it is held back, not retried on the failure backoff: only another
//     person can unblock it, and the next list sights it again;
//   - B's network and its subnet stay.
func TestARefusedCollectionSpendsNothingAndWaitsForTheNextList(t *testing.T) {
	cfg := defaultConfig()
	cfg.MaxPerList = 1
	f := newFixtureWith(t, cfg, nil, nil, blockedOrphanBeside)

	out := f.collect(tenantB.UID)
	if out.Err != nil || out.Requeue == reconcile.AddRateLimited {
		t.Errorf("B's refused orphan: outcome %+v, want held back until the next list", out)
	}
	if out := f.collect(testUID); out.Err != nil {
		t.Fatal(out.Err)
	}
	if slices.ContainsFunc(f.neutron.Networks(), func(n neutron.Network) bool { return n.ID == aOrphanNet }) {
		t.Errorf("A's orphan %s is held back: B's refused collection spent the list's one deletion (events %q)", aOrphanNet, f.takeEvents())
	}
	if !slices.ContainsFunc(f.neutron.Networks(), func(n neutron.Network) bool { return n.ID == blockedNet }) ||
		!slices.ContainsFunc(f.neutron.Subnets(), func(s neutron.Subnet) bool { return s.ID == strangerOnB }) {
		t.Errorf("B's network or its own subnet was taken: %v %v", f.neutron.Networks(), f.neutron.Subnets())
	}
}
