package inventory_test

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// pagedByOne hands a list over one resource per page, hands the first
// page twice (as a page read again after a new token would be), and
// decodes every resource anew, as each list of a real Neutron does.
type pagedByOne struct{ *fake.Neutron }

func (p pagedByOne) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	return byOneRepeatingFirst(ctx, description, p.Neutron.ListNetworks, func(n neutron.Network) neutron.Network {
		n.Name, n.Description = strings.Clone(n.Name), strings.Clone(n.Description)
		return n
	}, visit)
}

func (p pagedByOne) ListSubnets(ctx context.Context, description string, visit func([]neutron.Subnet) error) error {
	return byOneRepeatingFirst(ctx, description, p.Neutron.ListSubnets, func(s neutron.Subnet) neutron.Subnet {
		s.Name, s.Description = strings.Clone(s.Name), strings.Clone(s.Description)
		return s
	}, visit)
}

// byOneRepeatingFirst takes everything list hands over and hands it to
// visit one resource per page, the first one twice, each decoded anew.
func byOneRepeatingFirst[T any](ctx context.Context, description string, list func(context.Context, string, func([]T) error) error,
	decode func(T) T, visit func([]T) error) error {
	var all []T
	if err := list(ctx, description, func(page []T) error {
		all = append(all, page...)
		return nil
	}); err != nil {
		return err
	}
	if len(all) > 0 {
		all = append([]T{all[0]}, all...)
	}
	for _, r := range all {
		if err := visit([]T{decode(r)}); err != nil {
			return err
		}
	}
	return nil
}

// TestAListStreamedPageByPageIndexesEachResourceOnce: whatever the pages,
// and if a page comes twice, the inventory holds each resource once and
// counts each unrecognised one once.
func TestAListStreamedPageByPageIndexesEachResourceOnce(t *testing.T) {
	f := fake.New()
	m := mark(t, "prod")
	for _, o := range []neutron.Owner{ownerA, ownerB, ownerC} {
		seed(f, m, o, "10.0.0.0/24")
	}
	f.AddNetwork("ns/handmade/not-a-uid", m.Description())
	inv := inventory.NewStore(pagedByOne{f}, m)
	if _, err := inv.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, o := range []neutron.Owner{ownerA, ownerB, ownerC} {
		if got := inv.Get(o.UID); len(got.Networks) != 1 || len(got.Subnets) != 1 {
			t.Errorf("%s: %d networks and %d subnets, want one of each", o.Name, len(got.Networks), len(got.Subnets))
		}
	}
	if got := inv.Status().Unrecognised; got != 1 {
		t.Errorf("Unrecognised = %d, want 1 however often its page came", got)
	}
}

// TestAnUnchangedResourceKeepsItsCopyAcrossLists: a list that finds a
// resource as it was keeps the copy already held, so that the inventory
// it replaces and the one it builds share their strings (a list in steady
// state does not double the inventory's memory); a changed one is taken.
func TestAnUnchangedResourceKeepsItsCopyAcrossLists(t *testing.T) {
	ctx := context.Background()
	f := fake.New()
	m := mark(t, "prod")
	seed(f, m, ownerA, "10.0.0.0/24")
	_, subnetB := seed(f, m, ownerB, "10.1.0.0/24")
	inv := inventory.NewStore(pagedByOne{f}, m)
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := inv.Get(ownerA.UID), inv.Get(ownerB.UID)
	if _, err := f.UpdateSubnet(ctx, subnetB, neutron.SubnetUpdate{DNSNameservers: &[]string{"10.1.0.53"}}); err != nil {
		t.Fatal(err)
	}
	if changed, err := inv.Refresh(ctx); err != nil || len(changed) != 1 {
		t.Fatalf("second list: changed %v (%v), want b's", changed, err)
	}
	a2, b2 := inv.Get(ownerA.UID), inv.Get(ownerB.UID)
	if !sameBytes(a.Networks[0].Name, a2.Networks[0].Name) || !sameBytes(a.Subnets[0].Description, a2.Subnets[0].Description) {
		t.Error("an unchanged Network's resources are held as the copies just decoded, not the ones already held")
	}
	// A subnet's change raises its network's revision, in Neutron as in
	// the fake: b's network changed too, and its revision is taken.
	if b2.Networks[0].RevisionNumber != b.Networks[0].RevisionNumber+1 {
		t.Errorf("b's network is held at revision %d, want %d: its subnet's change raised it", b2.Networks[0].RevisionNumber, b.Networks[0].RevisionNumber+1)
	}
	if len(b2.Subnets[0].DNSNameservers) != 1 || sameBytes(b.Subnets[0].Name, b2.Subnets[0].Name) {
		t.Errorf("a changed subnet was not taken from the new list: %+v", b2.Subnets[0])
	}
}

// sameBytes reports whether two strings share their bytes in memory.
func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
