package main

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"k8s.io/utils/ptr"
)

// TestFakeNeutronAnswersAsNeutronDoes drives the fake through the
// controller's own client: lists filter on the exact description and
// page past 1,000, creates echo what was sent, the probe answers, and a
// network's delete takes its subnets.
func TestFakeNeutronAnswersAsNeutronDoes(t *testing.T) {
	ctx := context.Background()
	client := fakeNeutronClient(t)
	const ours, n = "managed-by=network-controller,cluster=bench", 2500
	var first neutron.Network
	for i := range n {
		net, err := client.CreateNetwork(ctx, fmt.Sprintf("net-%d", i), ours, 0)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = net
		}
	}
	if _, err := client.CreateNetwork(ctx, "theirs", "someone else", 0); err != nil {
		t.Fatal(err)
	}
	s, err := client.CreateSubnet(ctx, neutron.SubnetRequest{NetworkID: first.ID, Name: "net-0", Description: ours,
		CIDR: "10.0.0.0/24", Gateway: ptr.To("10.0.0.1"), AllocationPools: []neutron.AllocationPool{{Start: "10.0.0.2", End: "10.0.0.254"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.CIDR != "10.0.0.0/24" || s.GatewayIP != "10.0.0.1" || len(s.AllocationPools) != 1 || first.MTU == 0 {
		t.Errorf("created %+v in %+v: want what was sent, and Neutron's MTU", s, first)
	}

	var nets, pages int
	err = client.ListNetworks(ctx, ours, func(page []neutron.Network) error {
		nets, pages = nets+len(page), pages+1
		return nil
	})
	if err != nil || nets != n || pages != 3 {
		t.Fatalf("listed %d networks in %d pages (%v), want %d in three", nets, pages, err, n)
	}
	if err := client.Probe(ctx); err != nil {
		t.Errorf("probe: %v", err)
	}
	// A delete names the revision it read, which the subnet's create
	// raised: the create-time revision is refused, as neutron-server
	// refuses it, and the one read by ID goes through.
	if err := client.DeleteNetwork(ctx, first.ID, first.RevisionNumber); !neutron.IsStale(err) {
		t.Fatalf("a delete at the revision before the subnet: %v, want 412", err)
	}
	read, err := client.GetNetwork(ctx, first.ID)
	if err != nil || !slices.Equal(read.SubnetIDs, []string{s.ID}) {
		t.Fatalf("read %+v (%v), want the network with subnet %s", read, err, s.ID)
	}
	if err := client.DeleteNetwork(ctx, first.ID, read.RevisionNumber); err != nil {
		t.Fatal(err)
	}
	var subs []neutron.Subnet
	err = client.ListSubnets(ctx, ours, func(page []neutron.Subnet) error {
		subs = append(subs, page...)
		return nil
	})
	if err != nil || len(subs) != 0 {
		t.Errorf("subnets after their network's delete: %v (%v)", subs, err)
	}
	if _, err := client.GetNetwork(ctx, first.ID); err == nil {
		t.Error("a deleted network is still there")
	}
}

// fakeNeutronClient serves a fakeNeutron and returns the controller's own
// client of it.
func fakeNeutronClient(t *testing.T) *neutron.Gophercloud {
	t.Helper()
	f, err := startFakeNeutron()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := neutron.NewNoAuthServiceClient(f.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return neutron.NewGophercloud(sc, neutron.Place{})
}
