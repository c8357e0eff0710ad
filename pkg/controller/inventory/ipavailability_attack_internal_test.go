package inventory

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// scriptedCounts is a Neutron whose network-ip-availabilities answer is
// the test's, whatever its networks hold.
type scriptedCounts struct {
	*fake.Neutron
	pages [][]neutron.NetworkIPs
}

func (s scriptedCounts) ListIPAvailabilities(_ context.Context, visit func([]neutron.NetworkIPs) error) error {
	for _, p := range s.pages {
		if err := visit(p); err != nil {
			return err
		}
	}
	return nil
}

// TestTheCountsHoldOnlyTheSubnetsHeld: an answer that names, under a
// network the store holds, thousands of subnets that are not that
// network's (another tenant's, or none at all), or the network's subnet
// twice with two counts, leaves the store one count for each subnet it
// holds on that network: what it keeps is bounded by what it holds, and
// what status shows of a subnet is one count.
func TestTheCountsHoldOnlyTheSubnetsHeld(t *testing.T) {
	ctx := context.Background()
	m, err := neutron.NewMark("prod", types.UID("c1c1c1c1-0000-4000-8000-0000000000c1"))
	if err != nil {
		t.Fatal(err)
	}
	f := fake.New()
	a := neutron.Owner{Namespace: "team-a", Name: "a", UID: "0a0a0a0a-0000-4000-8000-00000000000a"}
	b := neutron.Owner{Namespace: "team-b", Name: "b", UID: "0b0b0b0b-0000-4000-8000-00000000000b"}
	netA := f.AddNetwork(m.ResourceName(a), m.Description())
	subA := f.AddSubnet(netA, m.ResourceName(a), m.Description(), "10.0.0.0/24", "")
	netB := f.AddNetwork(m.ResourceName(b), m.Description())
	subB := f.AddSubnet(netB, m.ResourceName(b), m.Description(), "10.1.0.0/24", "")

	count := func(id string, used int64) neutron.SubnetIPs {
		return neutron.SubnetIPs{SubnetID: id, Total: big.NewInt(253), Used: big.NewInt(used)}
	}
	hostile := neutron.NetworkIPs{NetworkID: netB, Subnets: []neutron.SubnetIPs{count(subB, 1), count(subA, 200), count(subB, 250)}}
	for i := range 5000 {
		hostile.Subnets = append(hostile.Subnets, count(fmt.Sprintf("invented-%d", i), 7))
	}
	inv := NewStore(scriptedCounts{Neutron: f, pages: [][]neutron.NetworkIPs{
		{{NetworkID: netA, Subnets: []neutron.SubnetIPs{count(subA, 3)}}, hostile},
		{{NetworkID: netB, Subnets: []neutron.SubnetIPs{count(subB, 99)}}},
	}}, m)

	if _, err := inv.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	gotB, _ := inv.IPs(b.UID, netB)
	if len(gotB) != 1 || gotB[0].SubnetID != subB || gotB[0].Used.Int64() != 1 {
		t.Errorf("team-b's network holds counts %d long (first %+v), want only its own subnet, counted once as first sent (used 1)", len(gotB), first(gotB))
	}
	gotA, _ := inv.IPs(a.UID, netA)
	if len(gotA) != 1 || gotA[0].SubnetID != subA || gotA[0].Used.Int64() != 3 {
		t.Errorf("team-a's network holds counts %+v, want its subnet's own (used 3)", gotA)
	}
	// The counts are read by owner: team-b, naming team-a's network (in
	// spec.adopt, or in a status it wrote), reads none of them.
	if got, ok := inv.IPs(b.UID, netA); ok || len(got) != 0 {
		t.Errorf("team-b read the counts of team-a's network: %+v", got)
	}
}

func first(s []neutron.SubnetIPs) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}
