package reconcile

import (
	"testing"

	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestAdoptionRefusesANetworkWithASubnetItCannotSee: the list of a
// network's subnets shows the credentials' project only, but the network
// itself names every subnet on it (its "subnets"), another project's too.
// Namespace B adopts a network of its project on which another project
// made a subnet (a network shared to it by RBAC once, or an admin's): the
// comparison of every subnet with spec.subnets must not pass because the
// other subnet is out of sight. Adopted, B's Network would own a network
// that carries another project's subnet: its MTU is B's to change, and
// its delete, for ever blocked, B's to wait on. Nothing is marked.
func TestAdoptionRefusesANetworkWithASubnetItCannotSee(t *testing.T) {
	f := newFixture(t, inPlace("project-a", "")(adopting(newNetwork(v4CIDR, v4GW), seededNet)), func(f *neutronfake.Neutron) {
		f.SetProject("project-a")
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-v4", "", v4CIDR, v4GW)
		f.In("project-b", func() { f.AddSubnet(id, "theirs", "another project's", "10.9.0.0/24", "10.9.0.1") })
	})
	out := f.sync("net")
	if out.Err == nil {
		t.Errorf("the adoption of a network holding another project's subnet succeeded")
	}
	for _, n := range f.neutron.Networks() {
		if n.Description != "made by a person" {
			t.Errorf("network %s was changed: %q / %q", n.ID, n.Name, n.Description)
		}
	}
	for _, s := range f.neutron.Subnets() {
		if s.Name != "handmade-v4" && s.Name != "theirs" {
			t.Errorf("subnet %s was changed: %q / %q", s.ID, s.Name, s.Description)
		}
	}
}
