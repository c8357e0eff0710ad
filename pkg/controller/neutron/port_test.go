package neutron

import "testing"

// TestNeutronsOwnPortsAreExactlyItsAutoDeleteOwners: the controller and
// the fake agree with neutron-server on which ports go with a network
// (AUTO_DELETE_PORT_OWNERS, matched exactly): a look-alike that a
// project member may set on a port of their own blocks the delete.
func TestNeutronsOwnPortsAreExactlyItsAutoDeleteOwners(t *testing.T) {
	for owner, want := range map[string]bool{
		"network:dhcp":                     true,
		"network:distributed":              true,
		"network:floatingip_agent_gateway": true,
		"network:dhcp-cache":               false,
		"network:dhcpx":                    false,
		"compute:nova":                     false,
		RouterInterfaceOwner:               false,
		"network:router_interface_dvr":     false,
		"":                                 false,
	} {
		if got := (Port{DeviceOwner: owner}).DeletedWithNetwork(); got != want {
			t.Errorf("DeletedWithNetwork(%q) = %v, want %v", owner, got, want)
		}
	}
}
