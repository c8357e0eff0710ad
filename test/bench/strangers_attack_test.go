package main

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// FAILS ON PURPOSE
//
// TestBothFakesRaiseANetworksRevisionWhenASubnetOnItChanges: the network
// delete is sent If-Match on the revision its read saw, so that a change
// on the network after the read (a subnet made, or marked for another
// Network) makes Neutron refuse it (412). The controller holds that a
// change of a subnet raises its network's revision (Inventory.MarkNetwork,
// and the unit fake's reviseNetwork); the bench's HTTP fake raises it for
// a subnet's create and delete only, not for its update. A subnet renamed
// (re-marked) between the read and the DELETE is then taken by the
// bench's delete and refused by the unit fake's: the two fakes the
// controller is measured and tested on disagree about what the check
// holds.
//
// The fix must guarantee: both fakes answer the same story the same way,
// as neutron-server does (an e2e test on the real server should pin which).
func TestBothFakesRaiseANetworksRevisionWhenASubnetOnItChanges(t *testing.T) {
	ctx := context.Background()
	bench, err := startFakeNeutron()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := neutron.NewNoAuthServiceClient(bench.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, client := range map[string]neutron.Interface{
		"the unit fake (pkg/controller/neutron/fake)": neutronfake.New(),
		"the bench's HTTP fake (fakeneutron.go)":      neutron.NewGophercloud(sc, neutron.Place{}),
	} {
		t.Run(name, func(t *testing.T) {
			net, err := client.CreateNetwork(ctx, "a", "ours", 0)
			if err != nil {
				t.Fatal(err)
			}
			s, err := client.CreateSubnet(ctx, neutron.SubnetRequest{NetworkID: net.ID, Name: "a", Description: "ours",
				CIDR: "10.0.0.0/24", Gateway: ptr.To("10.0.0.1"), AllocationPools: []neutron.AllocationPool{{Start: "10.0.0.2", End: "10.0.0.254"}}})
			if err != nil {
				t.Fatal(err)
			}
			read, err := client.GetNetwork(ctx, net.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.UpdateSubnet(ctx, s.ID, neutron.SubnetUpdate{Name: ptr.To("b"), Description: ptr.To("namespace b's")}); err != nil {
				t.Fatal(err)
			}
			if err := client.DeleteNetwork(ctx, net.ID, read.RevisionNumber); !neutron.IsStale(err) {
				t.Errorf("a delete at the revision read before the subnet was renamed: %v, want 412", err)
			}
		})
	}
}
