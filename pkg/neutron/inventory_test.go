package neutron_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/samplecrd/network-controller/pkg/neutron"
	"github.com/samplecrd/network-controller/pkg/neutron/fake"
)

var (
	ownerA = neutron.Owner{Namespace: "ns", Name: "a", UID: "uid-a"}
	ownerB = neutron.Owner{Namespace: "ns", Name: "b", UID: "uid-b"}
)

func TestRefreshReportsWhatChangedBehindOurBack(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	netA := f.AddNetwork(ownerA, true)
	f.AddSubnet(ownerA, true, netA, "10.0.0.0/24", "10.0.0.1")
	inv := neutron.NewInventory(f, 0)

	changed, err := inv.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(changed, []string{"ns/a"}) || !inv.Synced() {
		t.Fatalf("first refresh: changed %v, synced %v", changed, inv.Synced())
	}
	if changed, _ := inv.Refresh(ctx); len(changed) != 0 {
		t.Errorf("nothing changed, yet refresh reports %v", changed)
	}

	// Our own writes are recorded at once and are not "changes".
	if _, err := inv.CreateNetwork(ctx, ownerB); err != nil {
		t.Fatal(err)
	}
	if nets, _ := inv.Lookup("ns/b"); len(nets) != 1 {
		t.Fatalf("a write-through create is not in the inventory: %v", nets)
	}
	if changed, _ := inv.Refresh(ctx); len(changed) != 0 {
		t.Errorf("our own create reported as a change: %v", changed)
	}

	// Someone deletes a's network in Neutron.
	if err := f.DeleteNetwork(ctx, netA); err != nil {
		t.Fatal(err)
	}
	if changed, _ := inv.Refresh(ctx); !slices.Equal(changed, []string{"ns/a"}) {
		t.Errorf("a deletion behind our back: changed %v, want [ns/a]", changed)
	}
	if nets, subs := inv.Lookup("ns/a"); len(nets)+len(subs) != 0 {
		t.Errorf("ns/a still in the inventory: %v %v", nets, subs)
	}
}

// racingClient runs during() between the two lists of a refresh, as a
// worker's write would when it races a refresh.
type racingClient struct {
	*fake.Neutron
	during func()
}

func (r *racingClient) ListSubnets(ctx context.Context) ([]neutron.Subnet, error) {
	if r.during != nil {
		r.during()
		r.during = nil
	}
	return r.Neutron.ListSubnets(ctx)
}

func TestRefreshKeepsWritesMadeWhileItListed(t *testing.T) {
	ctx := context.Background()
	client := &racingClient{Neutron: fake.New()}
	inv := neutron.NewInventory(client, 0)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// The network list has already been taken when the worker creates a
	// network: the refresh must not forget it, or the next sync would
	// create a duplicate.
	client.during = func() {
		if _, err := inv.CreateNetwork(ctx, ownerA); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if nets, _ := inv.Lookup("ns/a"); len(nets) != 1 {
		t.Errorf("the network created during the refresh was lost: %v", nets)
	}
	// The next refresh lists it for real.
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if nets, _ := inv.Lookup("ns/a"); len(nets) != 1 {
		t.Errorf("after a clean refresh: %v", nets)
	}
}

// TestUntaggedSweepOnlyAfterLostAnswers: listing untagged networks costs a
// request, so it runs after start and after a failed request only.
func TestUntaggedSweepOnlyAfterLostAnswers(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	inv := neutron.NewInventory(f, 0)
	sweeps := func() int {
		n := 0
		for _, r := range f.Requests() {
			if r == fake.ListUntagged {
				n++
			}
		}
		return n
	}
	for range 3 {
		if _, err := inv.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := sweeps(); got != 1 {
		t.Errorf("%d sweeps in three refreshes after start, want 1", got)
	}
	f.FailOn(fake.CreateNetwork, errors.New("connection reset"))
	if _, err := inv.CreateNetwork(ctx, ownerA); err == nil {
		t.Fatal("the create did not fail")
	}
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sweeps(); got != 2 {
		t.Errorf("no sweep after a create whose answer was lost (%d sweeps)", got)
	}
}
