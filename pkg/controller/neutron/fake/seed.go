package fake

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// SeedOwned stores a network and subnet of o carrying mark m, as the
// controller that writes m would have made them, and returns their IDs.
func (f *Neutron) SeedOwned(m neutron.Mark, o neutron.Owner, cidr, gateway string) (networkID, subnetID string) {
	networkID = f.AddNetwork(m.ResourceName(o), m.Description())
	return networkID, f.AddSubnet(networkID, m.ResourceName(o), m.Description(), cidr, gateway)
}

// StrangersSeeded is how many networks SeedStrangers stores.
const StrangersSeeded = 5

// SeedStrangers stores what other tools, people and clusters leave in a
// shared project, each with a name that once fooled a controller of mark
// ours: none of it may ever be touched. other is another cluster's mark;
// owner is a Network of ours, whose name the other cluster uses too; gone
// is the UID of no Network, whose network the other cluster still holds.
// One copy for every package's tests: a name found to fool the controller
// once is added here, and every test of "never touch" sees it.
func (f *Neutron) SeedStrangers(ours, other neutron.Mark, owner neutron.Owner, gone types.UID) {
	f.AddNetwork("k8s-clusterapi-cluster-default-foo", "")
	f.AddNetwork("k8s-"+string(owner.UID), "")
	f.SeedOwned(other, owner, "172.16.0.0/24", "172.16.0.1")
	f.SeedOwned(other, neutron.Owner{Namespace: owner.Namespace, Name: "gone", UID: gone}, "172.16.1.0/24", "172.16.1.1")
	f.AddNetwork(owner.Namespace+"/"+owner.Name+"/not-a-uid", ours.Description())
}

// StrangersLeft counts the networks of SeedStrangers that Neutron still
// holds: StrangersSeeded while nothing touched them. (One of them carries
// ours' description under a name that is no resource name of ours.)
func (f *Neutron) StrangersLeft(ours neutron.Mark) int {
	left := 0
	for _, n := range f.Networks() {
		if n.Description != ours.Description() || strings.Contains(n.Name, "not-a-uid") {
			left++
		}
	}
	return left
}
