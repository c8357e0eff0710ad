package inventory

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestTheCountsHoldOnlyTheNetworksHeld: however many networks of other
// tenants and tools an administrator's list of counts names, the store
// keeps an entry for each network it holds as an owner's, and no other;
// a network no longer held (deleted) leaves the map at the next list.
func TestTheCountsHoldOnlyTheNetworksHeld(t *testing.T) {
	ctx := context.Background()
	m, err := neutron.NewMark("prod", types.UID("c1c1c1c1-0000-4000-8000-0000000000c1"))
	if err != nil {
		t.Fatal(err)
	}
	f := fake.New()
	owner := neutron.Owner{Namespace: "ns", Name: "a", UID: "0a0a0a0a-0000-4000-8000-00000000000a"}
	ours := f.AddNetwork(m.ResourceName(owner), m.Description())
	f.AddSubnet(ours, m.ResourceName(owner), m.Description(), "10.0.0.0/24", "")
	for i := range 50 {
		id := f.AddNetwork(fmt.Sprintf("tenant-%d", i), "")
		f.AddSubnet(id, "", "", fmt.Sprintf("10.%d.0.0/24", i+1), "")
	}
	inv := NewStore(f, m)

	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(inv.ips.byNetwork); n != 1 {
		t.Errorf("after a list of 51 networks' counts the store holds %d, want 1 (ours)", n)
	}
	if err := f.DeleteNetwork(ctx, ours, f.Revision(ours)); err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(inv.ips.byNetwork); n != 0 {
		t.Errorf("once our network is gone the store holds %d networks' counts, want 0", n)
	}
}
