package neutron

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Inventory is the controller's cached view of the Neutron resources that
// carry its Mark, keyed by the UID of the owning Network. It plays for
// Neutron the part an informer's cache plays for the API server: syncs read
// it instead of asking Neutron, so a resync of N in-sync Networks costs two
// list requests per page (networks and subnets) instead of N gets.
//
// That is its one job. It is filled by Refresh, and the controller records
// its own writes in it (Add*, Remove*) as Neutron confirms them, so a sync
// always sees what the previous sync did. It makes no write requests.
type Inventory struct {
	client Interface
	mark   Mark

	mu     sync.RWMutex
	status Status
	byUID  map[types.UID]*Owned
	// writes counts recorded writes; written[uid] is the count at the last
	// write for uid. A refresh whose lists began before a write to uid
	// keeps the written state: the list may predate the write.
	writes  uint64
	written map[types.UID]uint64
}

// Owned is what Neutron holds for one Network.
type Owned struct {
	// Owner is parsed back from the resources' names.
	Owner    Owner
	Networks []Network
	Subnets  []Subnet
}

// Status is the health of the inventory, as readiness and syncs see it.
type Status struct {
	// Synced is true once a refresh has succeeded.
	Synced bool
	// LastSuccess is when the latest successful refresh finished.
	LastSuccess time.Time
	// Err is the error of the latest refresh, nil when it succeeded.
	Err error
	// Unrecognised counts the resources that carry the mark but whose
	// name does not parse as ours: left alone, reported for an operator.
	Unrecognised int
}

// ErrNotSynced is returned by syncs that need the inventory before its first
// successful refresh.
var ErrNotSynced = errors.New("the Neutron inventory has not been listed yet")

// NewInventory returns an empty, unsynced inventory of the resources that
// carry mark, listed through client.
func NewInventory(client Interface, mark Mark) *Inventory {
	return &Inventory{client: client, mark: mark, byUID: map[types.UID]*Owned{}, written: map[types.UID]uint64{}}
}

// Status returns the inventory's health.
func (inv *Inventory) Status() Status {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return inv.status
}

// Healthy returns nil when the latest refresh succeeded, else why not.
func (st Status) Healthy() error {
	switch {
	case st.Err != nil:
		return fmt.Errorf("listing Neutron: %w", st.Err)
	case !st.Synced:
		return ErrNotSynced
	}
	return nil
}

// Get returns a copy of what Neutron holds for uid.
func (inv *Inventory) Get(uid types.UID) Owned {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	o := inv.byUID[uid]
	if o == nil {
		return Owned{}
	}
	return Owned{Owner: o.Owner, Networks: slices.Clone(o.Networks), Subnets: slices.Clone(o.Subnets)}
}

// UIDs returns every UID that owns something in Neutron.
func (inv *Inventory) UIDs() []types.UID {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	out := make([]types.UID, 0, len(inv.byUID))
	for uid := range inv.byUID {
		out = append(out, uid)
	}
	return out
}

// Refresh lists the marked networks and subnets and replaces the inventory
// with them. It returns the UIDs whose resources changed since the last
// refresh (not counting the controller's own recorded writes), so the
// controller re-checks exactly those: that is how drift made behind its
// back (a subnet deleted by hand) and creates that completed after their
// sender gave up are noticed.
func (inv *Inventory) Refresh(ctx context.Context) (changed []types.UID, err error) {
	inv.mu.RLock()
	startWrites := inv.writes
	inv.mu.RUnlock()

	nets, err := inv.client.ListNetworks(ctx, inv.mark.Description())
	var subs []Subnet
	if err == nil {
		subs, err = inv.client.ListSubnets(ctx, inv.mark.Description())
	}
	if err != nil {
		inv.mu.Lock()
		inv.status.Err = err
		inv.mu.Unlock()
		return nil, err
	}
	fresh, unrecognised := inv.index(nets, subs)
	return inv.replace(fresh, unrecognised, startWrites), nil
}

// index keeps what provably belongs to the mark, keyed by owner UID. The
// description is checked again here: a server that ignored the filter must
// not make everything look like ours.
func (inv *Inventory) index(nets []Network, subs []Subnet) (map[types.UID]*Owned, int) {
	fresh := map[types.UID]*Owned{}
	unrecognised := 0
	get := func(o Owner) *Owned {
		e := fresh[o.UID]
		if e == nil {
			e = &Owned{Owner: o}
			fresh[o.UID] = e
		}
		if e.Owner.ClusterUID != o.ClusterUID {
			// Resources of one Network that disagree on their cluster
			// prove no cluster: none may collect them.
			e.Owner.ClusterUID = ""
		}
		return e
	}
	for _, n := range nets {
		if o, ok := inv.mark.OwnerOf(n.Name, n.Description); ok {
			e := get(o)
			e.Networks = append(e.Networks, n)
		} else if n.Description == inv.mark.Description() {
			unrecognised++
		}
	}
	for _, s := range subs {
		if o, ok := inv.mark.OwnerOf(s.Name, s.Description); ok {
			e := get(o)
			e.Subnets = append(e.Subnets, s)
		} else if s.Description == inv.mark.Description() {
			unrecognised++
		}
	}
	return fresh, unrecognised
}

func (inv *Inventory) replace(fresh map[types.UID]*Owned, unrecognised int, startWrites uint64) []types.UID {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for uid, at := range inv.written {
		if at > startWrites {
			// Written during the lists: keep what the write recorded.
			if cur := inv.byUID[uid]; cur != nil {
				fresh[uid] = cur
			} else {
				delete(fresh, uid)
			}
		} else {
			delete(inv.written, uid)
		}
	}
	var changed []types.UID
	for uid, o := range fresh {
		if !inv.byUID[uid].equal(o) {
			changed = append(changed, uid)
		}
	}
	for uid := range inv.byUID {
		if _, ok := fresh[uid]; !ok {
			changed = append(changed, uid)
		}
	}
	inv.byUID = fresh
	inv.status = Status{Synced: true, LastSuccess: time.Now(), Unrecognised: unrecognised}
	return changed
}

func (o *Owned) equal(p *Owned) bool {
	if o == nil || p == nil {
		return o == p
	}
	return sameElements(o.Networks, p.Networks) && sameElements(o.Subnets, p.Subnets)
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

// AddNetwork records a network of owner that Neutron confirmed.
func (inv *Inventory) AddNetwork(owner Owner, n Network) {
	inv.record(owner, func(o *Owned) {
		o.Networks = append(slices.DeleteFunc(o.Networks, func(x Network) bool { return x.ID == n.ID }), n)
	})
}

// AddSubnet records a subnet of owner that Neutron confirmed (created,
// adopted or updated).
func (inv *Inventory) AddSubnet(owner Owner, s Subnet) {
	inv.record(owner, func(o *Owned) {
		o.Subnets = append(slices.DeleteFunc(o.Subnets, func(x Subnet) bool { return x.ID == s.ID }), s)
	})
}

// RemoveSubnet forgets a subnet of owner that Neutron deleted.
func (inv *Inventory) RemoveSubnet(owner Owner, id string) {
	inv.record(owner, func(o *Owned) {
		o.Subnets = slices.DeleteFunc(o.Subnets, func(x Subnet) bool { return x.ID == id })
	})
}

// RemoveNetwork forgets a network of owner that Neutron deleted, and its
// subnets: Neutron deletes them with it.
func (inv *Inventory) RemoveNetwork(owner Owner, id string) {
	inv.record(owner, func(o *Owned) {
		o.Networks = slices.DeleteFunc(o.Networks, func(x Network) bool { return x.ID == id })
		o.Subnets = slices.DeleteFunc(o.Subnets, func(x Subnet) bool { return x.NetworkID == id })
	})
}

// record applies a write to owner's entry.
func (inv *Inventory) record(owner Owner, change func(o *Owned)) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	o := inv.byUID[owner.UID]
	if o == nil {
		// What the controller writes is named with its own cluster's UID.
		owner.ClusterUID = inv.mark.ClusterUID()
		o = &Owned{Owner: owner}
	}
	// Copy on write: a refresh may be comparing against the old entry.
	o = &Owned{Owner: o.Owner, Networks: slices.Clone(o.Networks), Subnets: slices.Clone(o.Subnets)}
	change(o)
	if len(o.Networks) == 0 && len(o.Subnets) == 0 {
		delete(inv.byUID, owner.UID)
	} else {
		inv.byUID[owner.UID] = o
	}
	inv.writes++
	inv.written[owner.UID] = inv.writes
}
