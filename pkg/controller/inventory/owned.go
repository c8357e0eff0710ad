package inventory

import (
	"reflect"
	"slices"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Owned is what Neutron holds for one Network.
type Owned struct {
	// Owner is parsed back from the resources' names.
	Owner    neutron.Owner
	Networks []neutron.Network
	Subnets  []neutron.Subnet
	// Routers are the routers made for the Network (spec.router's
	// externalNetwork); never a router someone else made.
	Routers []neutron.Router
}

// Empty reports whether o holds nothing.
func (o Owned) Empty() bool { return len(o.Networks)+len(o.Subnets)+len(o.Routers) == 0 }

func (o *Owned) equal(p *Owned) bool {
	if o == nil || p == nil {
		return o == p
	}
	return sameElements(o.Networks, p.Networks) && sameElements(o.Subnets, p.Subnets) && sameElements(o.Routers, p.Routers)
}

// sameElements compares as sets; resources hold slices (a subnet's routes
// and pools), so elements are compared deeply.
func sameElements[T any](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y T) bool { return reflect.DeepEqual(x, y) }) {
			return false
		}
	}
	return true
}

// Only is the part of o on network id: that network and its subnets.
func (o Owned) Only(networkID string) Owned {
	out := Owned{Owner: o.Owner}
	for _, n := range o.Networks {
		if n.ID == networkID {
			out.Networks = append(out.Networks, n)
		}
	}
	for _, s := range o.Subnets {
		if s.NetworkID == networkID {
			out.Subnets = append(out.Subnets, s)
		}
	}
	return out
}
