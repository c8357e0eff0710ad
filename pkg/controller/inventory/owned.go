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

	// listed holds the IDs of the networks whose record here is as a list
	// read it, with the subnets on it as the same list read them after it:
	// what proves a DELETE onto the record's revision (Store.
	// ListedRevision). A write recorded on such a network, or a subnet on
	// it, takes its ID out.
	listed []string
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

// clone returns a copy of o that shares no slice with it: entries are
// copied on write (Store.record).
func (o *Owned) clone() *Owned {
	return &Owned{Owner: o.Owner, Networks: slices.Clone(o.Networks), Subnets: slices.Clone(o.Subnets),
		Routers: slices.Clone(o.Routers), listed: slices.Clone(o.listed)}
}

// unlist takes network id's record out of what a list proves (listed):
// a write changed it, or a subnet on it.
func (o *Owned) unlist(networkID string) {
	o.listed = slices.DeleteFunc(o.listed, func(id string) bool { return id == networkID })
}

// listedRevision is the revision of network id as a list read it, if o's
// record of it and of every subnet on it is still that list's: at that
// revision the network carried the mark, and each of its subnets (its
// SubnetIDs) did too, for the subnets were listed after the networks and
// any change of a subnet raises its network's revision. A DELETE sent
// onto it (If-Match) takes nothing the list did not see as the owner's.
func (o *Owned) listedRevision(networkID string) (int, bool) {
	if !slices.Contains(o.listed, networkID) {
		return 0, false
	}
	i := slices.IndexFunc(o.Networks, func(n neutron.Network) bool { return n.ID == networkID })
	if i < 0 {
		return 0, false
	}
	n := o.Networks[i]
	onIt := 0
	for _, s := range o.Subnets {
		if s.NetworkID != networkID {
			continue
		}
		if !slices.Contains(n.SubnetIDs, s.ID) {
			return 0, false // listed after the network was: a 412 to come
		}
		onIt++
	}
	// Every subnet the network had at its revision is held as the
	// owner's (a subnet not listed as the owner's is another's).
	return n.RevisionNumber, onIt == len(n.SubnetIDs)
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
