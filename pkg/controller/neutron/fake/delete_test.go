package fake

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// TestANetworkInUseIsRefusedAsNeutronRefusesIt: as neutron-server, a
// network delete is one request that takes the subnets and Neutron's own
// ports (DHCP, OVN's metadata port: AUTO_DELETE_PORT_OWNERS) with it, and
// is refused with 409 NetworkInUse while any other port is on the network,
// a router interface as much as a VM's; a subnet delete likewise
// (SubnetInUse).
func TestANetworkInUseIsRefusedAsNeutronRefusesIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		// ports are the device_owner of each port on the network.
		ports     []string
		wantInUse bool
	}{
		{"no port", nil, false},
		{"a DHCP port", []string{"network:dhcp"}, false},
		{"OVN's metadata port", []string{"network:distributed"}, false},
		{"a router interface", []string{neutron.RouterInterfaceOwner}, true},
		{"a VM's port beside a DHCP port", []string{"network:dhcp", "compute:nova"}, true},
		{"a port with no device_owner", []string{""}, true},
	} {
		for _, kind := range []string{DeleteNetwork, DeleteSubnet} {
			t.Run(kind+" with "+tc.name, func(t *testing.T) {
				ctx := context.Background()
				f := New()
				net := f.AddNetwork("net", "")
				sub := f.AddSubnet(net, "sub", "", "10.0.0.0/24", "10.0.0.1")
				for i, owner := range tc.ports {
					f.AddPort(net, fmt.Sprintf("port-%d", i), owner)
				}
				var err error
				if kind == DeleteNetwork {
					err = f.DeleteNetwork(ctx, net, f.Revision(net))
				} else {
					err = f.DeleteSubnet(ctx, sub, f.Revision(sub))
				}
				var rejected *neutron.RejectedError
				if inUse := errors.As(err, &rejected) && rejected.InUse(); inUse != tc.wantInUse || (!inUse && err != nil) {
					t.Fatalf("%s = %v, want refused as in use: %t", kind, err, tc.wantInUse)
				}
				if got := f.Requests(); len(got) != 1 {
					t.Errorf("requests %q, want one", got)
				}
				left := len(f.Subnets())
				if kind == DeleteNetwork {
					left += len(f.Networks()) + len(f.Ports(net))
				}
				if gone := left == 0; gone == tc.wantInUse {
					t.Errorf("left %d resources (networks %v, subnets %v, ports %v)", left, f.Networks(), f.Subnets(), f.Ports(net))
				}
			})
		}
	}
}
