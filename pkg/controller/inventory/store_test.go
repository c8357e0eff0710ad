package inventory_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

var (
	ownerA = neutron.Owner{Namespace: "ns", Name: "a", UID: "0a0a0a0a-0000-4000-8000-00000000000a"}
	ownerB = neutron.Owner{Namespace: "ns", Name: "b", UID: "0b0b0b0b-0000-4000-8000-00000000000b"}
	ownerC = neutron.Owner{Namespace: "ns", Name: "c", UID: "0c0c0c0c-0000-4000-8000-00000000000c"}
	ownerD = neutron.Owner{Namespace: "ns", Name: "d", UID: "0d0d0d0d-0000-4000-8000-00000000000d"}
)

// seed stores a network and subnet of owner, marked with m.
func seed(f *fake.Neutron, m neutron.Mark, owner neutron.Owner, cidr string) (networkID, subnetID string) {
	networkID = f.AddNetwork(m.ResourceName(owner), m.Description())
	subnetID = f.AddSubnet(networkID, m.ResourceName(owner), m.Description(), cidr, "")
	return networkID, subnetID
}

func TestRefreshReportsWhatChangedBehindOurBack(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	m := mark(t, "prod")
	netA, _ := seed(f, m, ownerA, "10.0.0.0/24")
	inv := inventory.NewStore(f, m)

	changed, err := inv.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(changed, []types.UID{ownerA.UID}) || !inv.Status().Synced {
		t.Fatalf("first refresh: changed %v, status %+v", changed, inv.Status())
	}
	wantOwner := ownerA
	wantOwner.ClusterUID = clusterUID // parsed back from the names
	if got := inv.Get(ownerA.UID); got.Owner != wantOwner || len(got.Networks) != 1 || len(got.Subnets) != 1 {
		t.Fatalf("Get = %+v", got)
	}
	if changed, _ := inv.Refresh(ctx); len(changed) != 0 {
		t.Errorf("nothing changed, yet refresh reports %v", changed)
	}

	// Our own writes are recorded at once and are not "changes".
	n, err := f.CreateNetwork(ctx, m.ResourceName(ownerB), m.Description(), 0)
	if err != nil {
		t.Fatal(err)
	}
	inv.AddNetwork(inv.Status().Place, ownerB, n)
	if changed, _ := inv.Refresh(ctx); len(changed) != 0 {
		t.Errorf("our own create reported as a change: %v", changed)
	}

	// Someone deletes a's network in Neutron.
	if err := f.DeleteNetwork(ctx, netA, f.Revision(netA)); err != nil {
		t.Fatal(err)
	}
	if changed, _ := inv.Refresh(ctx); !slices.Equal(changed, []types.UID{ownerA.UID}) {
		t.Errorf("a deletion behind our back: changed %v, want [%s]", changed, ownerA.UID)
	}
	if got := inv.Get(ownerA.UID); len(got.Networks)+len(got.Subnets) != 0 {
		t.Errorf("a is still in the inventory: %+v", got)
	}
}

// TestInventoryHoldsOnlyWhatIsProvablyOurs: another cluster's resources,
// unmarked ones and marked ones whose name does not parse never enter the
// inventory, so nothing downstream can act on them.
func TestInventoryHoldsOnlyWhatIsProvablyOurs(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	ours, other := mark(t, "prod"), mark(t, "staging")
	seed(f, ours, ownerA, "10.0.0.0/24")
	seed(f, other, ownerB, "10.1.0.0/24")
	f.AddNetwork("k8s-clusterapi-cluster-default-foo", "")
	f.AddNetwork("k8s-"+string(ownerB.UID), "")
	f.AddNetwork("ns/handmade/not-a-uid", ours.Description())

	inv := inventory.NewStore(f, ours)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := inv.UIDs(); !slices.Equal(got, []types.UID{ownerA.UID}) {
		t.Errorf("inventory UIDs = %v, want only %s", got, ownerA.UID)
	}
	if got := inv.Status().Unrecognised; got != 1 {
		t.Errorf("Unrecognised = %d, want 1 (the marked network whose name does not parse)", got)
	}
}

// ignoringFilter is a Neutron that ignores the description filter, as a
// server without that filter would: the inventory must check again.
type ignoringFilter struct{ *fake.Neutron }

func (i ignoringFilter) ListNetworks(ctx context.Context, _ string, visit func([]neutron.Network) error) error {
	return i.Neutron.ListNetworks(ctx, "", visit)
}

func TestInventoryChecksTheMarkEvenIfNeutronDoesNotFilter(t *testing.T) {
	f := fake.New()
	other := mark(t, "staging")
	f.AddNetwork(other.ResourceName(ownerB), "")
	seed(f, other, ownerA, "10.0.0.0/24")
	inv := inventory.NewStore(ignoringFilter{f}, mark(t, "prod"))
	if _, err := inv.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := inv.UIDs(); len(got) != 0 {
		t.Errorf("inventory holds %v, none of which carries our mark", got)
	}
}

// racingClient runs during() between the two lists of a refresh, as a
// worker's write would when it races a refresh.
type racingClient struct {
	*fake.Neutron
	during func()
}

func (r *racingClient) ListSubnets(ctx context.Context, description string, visit func([]neutron.Subnet) error) error {
	if r.during != nil {
		r.during()
		r.during = nil
	}
	return r.Neutron.ListSubnets(ctx, description, visit)
}

func TestRefreshKeepsWritesMadeWhileItListed(t *testing.T) {
	ctx := context.Background()
	client := &racingClient{Neutron: fake.New()}
	m := mark(t, "prod")
	inv := inventory.NewStore(client, m)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// The network list has already been taken when the worker creates a
	// network: the refresh must not forget it, or the next sync would
	// create a duplicate.
	client.during = func() {
		n, err := client.CreateNetwork(ctx, m.ResourceName(ownerA), m.Description(), 0)
		if err != nil {
			t.Fatal(err)
		}
		inv.AddNetwork(inv.Status().Place, ownerA, n)
	}
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := inv.Get(ownerA.UID); len(got.Networks) != 1 {
		t.Errorf("the network created during the refresh was lost: %+v", got)
	}
	// The next refresh lists it for real.
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := inv.Get(ownerA.UID); len(got.Networks) != 1 {
		t.Errorf("after a clean refresh: %+v", got)
	}
}

func TestStatusSaysWhyTheInventoryIsNotHealthy(t *testing.T) {
	f := fake.New()
	inv := inventory.NewStore(f, mark(t, "prod"))
	if err := inv.Status().Healthy(); !errors.Is(err, inventory.ErrNotSynced) {
		t.Errorf("before any refresh: %v, want ErrNotSynced", err)
	}
	f.FailOn(fake.ListNetworks, context.DeadlineExceeded)
	if _, err := inv.Refresh(context.Background()); err == nil {
		t.Fatal("refresh succeeded")
	}
	if err := inv.Status().Healthy(); err == nil {
		t.Error("healthy after a failed refresh")
	}
	f.FailOn(fake.ListNetworks, nil)
	if _, err := inv.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := inv.Status().Healthy(); err != nil {
		t.Errorf("after a good refresh: %v", err)
	}
}

// mark is the ownership mark of cluster, with a fixed cluster UID.
func mark(t *testing.T, cluster string) neutron.Mark {
	t.Helper()
	m, err := neutron.NewMark(cluster, clusterUID)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// clusterUID is this cluster's kube-system namespace.
const clusterUID = types.UID("c1c1c1c1-0000-4000-8000-0000000000c1")
