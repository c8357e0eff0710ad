package main

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestBothFakesRaiseANetworksRevisionWhenASubnetOnItChanges: the network
// delete is sent If-Match on the revision its read saw, so that a change
// on the network after the read makes Neutron refuse it (412). Both fakes
// the controller is tested and measured on answer as neutron-server does
// (test/e2e's TestNeutronRaisesANetworksRevisionWithItsSubnets): any
// change of a subnet, its name or its description alone, raises its
// network's revision, and a delete at the revision read before is
// refused.
func TestBothFakesRaiseANetworksRevisionWhenASubnetOnItChanges(t *testing.T) {
	ctx := context.Background()
	for name, client := range map[string]neutron.Interface{
		"the unit fake (pkg/controller/neutron/fake)": neutronfake.New(),
		"the bench's HTTP fake (fakeneutron.go)":      fakeNeutronClient(t),
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
			read, err = client.GetNetwork(ctx, net.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.UpdateSubnet(ctx, s.ID, neutron.SubnetUpdate{Description: ptr.To("described")}); err != nil {
				t.Fatal(err)
			}
			if err := client.DeleteNetwork(ctx, net.ID, read.RevisionNumber); !neutron.IsStale(err) {
				t.Errorf("a delete at the revision read before the subnet's description changed: %v, want 412", err)
			}
		})
	}
}
