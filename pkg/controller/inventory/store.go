package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Store is the cache of the Neutron resources that carry the controller's
// Mark, keyed by the UID of the owning Network: what an informer's Indexer
// is to the API server. Syncs read it instead of asking Neutron, so a
// resync of N in-sync Networks costs two list requests per page (networks
// and subnets) instead of N gets.
//
// That is its one job. It is filled by Refresh, and the Inventory records
// the controller's own writes in it (Add*, Remove*) as Neutron confirms
// them, so a sync always sees what the previous sync did. It makes no
// write requests. What it holds is of one place, the one it was last
// listed in (Status.Place): each write is recorded with the place it went
// to (in), and only while that is still the store's.
type Store struct {
	client neutron.Interface
	mark   neutron.Mark

	mu     sync.RWMutex
	status Status
	byUID  map[types.UID]*Owned
	// writes counts recorded writes; written[uid] is the count at the last
	// write for uid. A refresh whose lists began before a write to uid
	// keeps the written state: the list may predate the write.
	writes  uint64
	written map[types.UID]uint64
	// listedWrites is writes when the latest successful list began: a
	// write counted past it may not be in what the store was listed as.
	listedWrites uint64
	// ips are the address counts of the held networks' subnets, as the
	// latest list read them (ipavailability.go); recount are the UIDs
	// whose counts that list changed, and nothing else of theirs.
	ips     ipCounts
	recount []types.UID
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
	// Place is where the latest successful refresh listed: what the store
	// holds is that place's (zero for a noauth server's single one).
	Place neutron.Place
}

// ErrNotSynced is returned by syncs that need the inventory before its first
// successful refresh.
var ErrNotSynced = errors.New("the Neutron inventory has not been listed yet")

// NewStore returns an empty, unsynced store of the resources that
// carry mark, listed through client.
func NewStore(client neutron.Interface, mark neutron.Mark) *Store {
	return &Store{client: client, mark: mark, byUID: map[types.UID]*Owned{}, written: map[types.UID]uint64{}}
}

// Status returns the inventory's health.
func (inv *Store) Status() Status {
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
func (inv *Store) Get(uid types.UID) Owned {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	o := inv.byUID[uid]
	if o == nil {
		return Owned{}
	}
	return *o.clone()
}

// ListedRevision is the revision to send a DELETE of owner's network id
// onto (If-Match) without reading it first, nil when there is none: the
// revision the latest list read it at, while the store's record of it and
// of every subnet on it is still that list's, and held as owner's
// (Owned.listedRevision says why that proves the DELETE takes only
// owner's). Neutron refuses the DELETE (412) if anything of it changed
// since; a network the controller wrote to since the list has none.
func (inv *Store) ListedRevision(owner types.UID, networkID string) *int {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	o := inv.byUID[owner]
	if o == nil {
		return nil
	}
	if r, ok := o.listedRevision(networkID); ok {
		return &r
	}
	return nil
}

// Unlisted returns how many writes the store has recorded, and whether
// any was recorded after the latest successful list began, which may not
// show it.
func (inv *Store) Unlisted() (writes uint64, unlisted bool) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return inv.writes, inv.writes > inv.listedWrites
}

// UIDs returns every UID that owns something in Neutron.
func (inv *Store) UIDs() []types.UID {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	out := make([]types.UID, 0, len(inv.byUID))
	for uid := range inv.byUID {
		out = append(out, uid)
	}
	return out
}

// IPs returns the address counts of the subnets of network id, as the
// latest list read them, and whether it read any: false where Neutron
// refuses them to the credentials, for a network the list did not hold
// (made since), and for a network that is not owner's. The counts are
// read by owner, as Get is: a Network's status shows only the counts of
// a network the store holds as its own, whatever ID it asks for. The
// slice is the store's: do not change it.
func (inv *Store) IPs(owner types.UID, networkID string) ([]neutron.SubnetIPs, bool) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	o := inv.byUID[owner]
	if o == nil || !slices.ContainsFunc(o.Networks, func(n neutron.Network) bool { return n.ID == networkID }) {
		return nil, false
	}
	return inv.ips.counts(networkID)
}

// Recount returns the UIDs whose resources the latest successful list
// found as they were, and whose address counts it found changed: their
// status reports the counts, so they are synced again, though nothing of
// theirs drifted.
func (inv *Store) Recount() []types.UID {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return slices.Clone(inv.recount)
}

// Refresh lists the marked networks, subnets and routers and replaces the inventory
// with them. It returns the UIDs whose resources changed since the last
// refresh (not counting the controller's own recorded writes), so the
// controller re-checks exactly those: that is how drift made behind its
// back (a subnet deleted by hand) and creates that completed after their
// sender gave up are noticed. It reads the address counts of the networks
// listed with one more request (ipavailability.go); the UIDs whose counts
// alone changed are Recount's.
//
// The lists are indexed page by page as they arrive (index.go); the
// inventory in use stays in place, and answers Get, until both are done.
func (inv *Store) Refresh(ctx context.Context) (changed []types.UID, err error) {
	inv.mu.RLock()
	startWrites := inv.writes
	inv.mu.RUnlock()

	// The credentials may reach another place from one request to the
	// next (a clouds.yaml changed in place): each page of the lists must
	// come from the place they are recorded as (neutron.InPlace).
	place, err := inv.client.Place(ctx)
	if err != nil {
		return nil, inv.failed(err)
	}
	ctx = neutron.InPlace(ctx, place)
	x := newIndex(inv.mark, inv.current)
	// Networks first, then their subnets: a DELETE onto a revision this
	// list read needs the subnets read after it (ListedRevision).
	err = inv.client.ListNetworks(ctx, inv.mark.Description(), x.addNetworks)
	if err == nil {
		err = inv.client.ListSubnets(ctx, inv.mark.Description(), x.addSubnets)
	}
	if err == nil {
		err = inv.client.ListRouters(ctx, inv.mark.Description(), x.addRouters)
	}
	var ips ipCounts
	if err == nil {
		// Once per list, and only for the networks just listed as ours.
		ips, err = listIPs(ctx, inv.client, heldNetworks(x.fresh))
		if neutron.AnsweredBadly(err) {
			// The counts only decorate status, and every namespace of
			// the place waits on this list for its drift and orphans:
			// Neutron failing to answer them keeps the last ones.
			klog.FromContext(ctx).Error(err, "Neutron failed to answer the address counts; status keeps the last ones", "project", place.ProjectID)
			ips, err = inv.lastIPs(place), nil
		}
	}
	if err != nil {
		return nil, inv.failed(err)
	}
	inv.mu.RLock()
	first, was := !inv.status.Synced || inv.status.Place != place, inv.ips.allowed
	inv.mu.RUnlock()
	noteAllowed(ctx, first, was, ips.allowed, place)
	return inv.replace(x.fresh, ips, len(x.unrecognised), startWrites, place), nil
}

// lastIPs is the counts the latest list of place read, none if the
// latest list was of another place.
func (inv *Store) lastIPs(place neutron.Place) ipCounts {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	if inv.status.Place != place {
		return ipCounts{}
	}
	return inv.ips
}

// failed records err as the latest refresh's, and returns it.
func (inv *Store) failed(err error) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.status.Err = err
	return err
}

// current is the entry in use for uid, nil if none. Entries are copied on
// write (record), so the one returned never changes.
func (inv *Store) current(uid types.UID) *Owned {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return inv.byUID[uid]
}

func (inv *Store) replace(fresh map[types.UID]*Owned, ips ipCounts, unrecognised int, startWrites uint64, place neutron.Place) []types.UID {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	// A write recorded during the lists is of the place the store was
	// listed in before them: a list of another place keeps none of it.
	moved := place != inv.status.Place
	for uid, at := range inv.written {
		if at > startWrites && !moved {
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
	inv.recount = nil
	for uid, o := range fresh {
		if old := inv.byUID[uid]; old.equal(o) {
			// Its resources as held, and o's are garbage at once; what
			// the list proves is o's (a write since the last list took
			// old's proof away).
			o.Networks, o.Subnets, o.Routers = old.Networks, old.Subnets, old.Routers
			if !ips.equal(inv.ips, o) {
				// Only its counts changed: no drift, but its status
				// says them.
				inv.recount = append(inv.recount, uid)
			}
		} else {
			changed = append(changed, uid)
		}
	}
	for uid := range inv.byUID {
		if _, ok := fresh[uid]; !ok {
			changed = append(changed, uid)
		}
	}
	inv.byUID = fresh
	inv.listedWrites = startWrites
	inv.ips = ips
	inv.status = Status{Synced: true, LastSuccess: time.Now(), Unrecognised: unrecognised, Place: place}
	return changed
}

// AddNetwork records a network of owner that Neutron confirmed.
func (inv *Store) AddNetwork(in neutron.Place, owner neutron.Owner, n neutron.Network) {
	inv.record(in, owner, func(o *Owned) {
		o.Networks = append(slices.DeleteFunc(o.Networks, func(x neutron.Network) bool { return x.ID == n.ID }), n)
		o.unlist(n.ID)
	})
}

// AddSubnet records a subnet of owner that Neutron confirmed (created,
// adopted or updated).
func (inv *Store) AddSubnet(in neutron.Place, owner neutron.Owner, s neutron.Subnet) {
	inv.record(in, owner, func(o *Owned) {
		o.Subnets = append(slices.DeleteFunc(o.Subnets, func(x neutron.Subnet) bool { return x.ID == s.ID }), s)
		o.unlist(s.NetworkID)
	})
}

// RemoveSubnet forgets a subnet of owner that Neutron deleted.
func (inv *Store) RemoveSubnet(in neutron.Place, owner neutron.Owner, id string) {
	inv.record(in, owner, func(o *Owned) {
		o.Subnets = slices.DeleteFunc(o.Subnets, func(x neutron.Subnet) bool {
			if x.ID == id {
				o.unlist(x.NetworkID)
			}
			return x.ID == id
		})
	})
}

// RemoveNetwork forgets a network of owner that Neutron deleted, and its
// subnets: Neutron deletes them with it.
func (inv *Store) RemoveNetwork(in neutron.Place, owner neutron.Owner, id string) {
	inv.record(in, owner, func(o *Owned) {
		o.Networks = slices.DeleteFunc(o.Networks, func(x neutron.Network) bool { return x.ID == id })
		o.Subnets = slices.DeleteFunc(o.Subnets, func(x neutron.Subnet) bool { return x.NetworkID == id })
		o.unlist(id)
	})
}

// AddRouter records a router of owner that Neutron confirmed.
func (inv *Store) AddRouter(in neutron.Place, owner neutron.Owner, r neutron.Router) {
	inv.record(in, owner, func(o *Owned) {
		o.Routers = append(slices.DeleteFunc(o.Routers, func(x neutron.Router) bool { return x.ID == r.ID }), r)
	})
}

// RemoveRouter forgets a router of owner that Neutron deleted.
func (inv *Store) RemoveRouter(in neutron.Place, owner neutron.Owner, id string) {
	inv.record(in, owner, func(o *Owned) {
		o.Routers = slices.DeleteFunc(o.Routers, func(x neutron.Router) bool { return x.ID == id })
	})
}

// record applies a write to owner's entry, made in place in (the place
// the store was listed in when the door allowed it). The store holds only
// what is in the place it was last listed in (Status.Place): a write of
// another place, answered once a list of this one has replaced the store,
// is not recorded (the door requires the listed place of every request,
// so a read of that ID here would be another place's 404, counted as a
// delete). A list of its own place finds it again.
func (inv *Store) record(in neutron.Place, owner neutron.Owner, change func(o *Owned)) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if in != inv.status.Place {
		return
	}
	o := inv.byUID[owner.UID]
	if o == nil {
		// What the controller writes is named with its own cluster's UID.
		owner.ClusterUID = inv.mark.ClusterUID()
		o = &Owned{Owner: owner}
	}
	// Copy on write: a refresh may be comparing against the old entry.
	o = o.clone()
	change(o)
	if o.Empty() {
		delete(inv.byUID, owner.UID)
	} else {
		inv.byUID[owner.UID] = o
	}
	inv.writes++
	inv.written[owner.UID] = inv.writes
}
