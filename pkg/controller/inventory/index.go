package inventory

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// index builds a Store's next contents from one list of Neutron, a page at
// a time as the pages arrive, so that a list holds one page of what
// Neutron sent beside the contents it builds. It keeps what provably
// belongs to the mark, keyed by owner UID.
//
// A resource that has not changed since the contents being replaced is
// kept as their copy of it, not the one just decoded: the two contents
// then share their strings, and a list in steady state costs the map and
// its entries, not a second inventory.
type index struct {
	mark neutron.Mark
	// previous looks up what the contents being replaced hold for uid.
	previous func(uid types.UID) *Owned
	fresh    map[types.UID]*Owned
	// unrecognised holds the IDs of resources that carry the mark but whose
	// name does not parse as ours: by ID, since a page may come twice.
	unrecognised map[string]struct{}
}

func newIndex(mark neutron.Mark, previous func(types.UID) *Owned) *index {
	return &index{mark: mark, previous: previous, fresh: map[types.UID]*Owned{}, unrecognised: map[string]struct{}{}}
}

// addNetworks indexes one page of listed networks. Each is noted as
// listed (Owned.listed): every page of networks comes before the first of
// subnets (Store.Refresh), so its subnets are then read after it.
func (x *index) addNetworks(page []neutron.Network) error {
	addPage(x, page, func(n neutron.Network) (string, string, string) { return n.ID, n.Name, n.Description },
		func(o *Owned) *[]neutron.Network { return &o.Networks })
	for _, n := range page {
		if o, ok := x.mark.OwnerOf(n.Name, n.Description); ok {
			e := x.entry(o)
			e.unlist(n.ID) // a network on two pages is listed once
			e.listed = append(e.listed, n.ID)
		}
	}
	return nil
}

// addSubnets indexes one page of listed subnets.
func (x *index) addSubnets(page []neutron.Subnet) error {
	addPage(x, page, func(s neutron.Subnet) (string, string, string) { return s.ID, s.Name, s.Description },
		func(o *Owned) *[]neutron.Subnet { return &o.Subnets })
	return nil
}

// addRouters indexes one page of listed routers.
func (x *index) addRouters(page []neutron.Router) error {
	addPage(x, page, func(r neutron.Router) (string, string, string) { return r.ID, r.Name, r.Description },
		func(o *Owned) *[]neutron.Router { return &o.Routers })
	return nil
}

// addPage indexes one page of resources of one kind: fields reads a
// resource's ID, name and description, and of is where an entry holds
// that kind. The description is checked again here: a server that ignored
// the filter must not make everything look like ours.
func addPage[T any](x *index, page []T, fields func(T) (id, name, description string), of func(*Owned) *[]T) {
	id := func(r T) string {
		i, _, _ := fields(r)
		return i
	}
	for _, r := range page {
		rid, name, description := fields(r)
		o, ok := x.mark.OwnerOf(name, description)
		if !ok {
			x.noteUnrecognised(rid, description)
			continue
		}
		if prev := x.previous(o.UID); prev != nil {
			r = unchanged(*of(prev), r, id)
		}
		held := of(x.entry(o))
		*held = upsert(*held, r, id)
	}
}

func (x *index) noteUnrecognised(id, description string) {
	if description == x.mark.Description() {
		x.unrecognised[id] = struct{}{}
	}
}

// entry returns o's entry, made on first sight.
func (x *index) entry(o neutron.Owner) *Owned {
	e := x.fresh[o.UID]
	if e == nil {
		e = &Owned{Owner: o}
		x.fresh[o.UID] = e
	}
	if e.Owner.ClusterUID != o.ClusterUID {
		// Resources of one Network that disagree on their cluster
		// prove no cluster: none may collect them.
		e.Owner.ClusterUID = ""
	}
	return e
}

// unchanged returns the previous copy of r when it equals r, else r.
func unchanged[T any](previous []T, r T, id func(T) string) T {
	i := slices.IndexFunc(previous, func(p T) bool { return id(p) == id(r) })
	if i >= 0 && reflect.DeepEqual(previous[i], r) {
		return previous[i]
	}
	return r
}

// upsert puts r into rs in place of the element with its ID, if any: the
// last sighting of a resource listed twice wins.
func upsert[T any](rs []T, r T, id func(T) string) []T {
	if i := slices.IndexFunc(rs, func(p T) bool { return id(p) == id(r) }); i >= 0 {
		rs[i] = r
		return rs
	}
	return append(rs, r)
}
