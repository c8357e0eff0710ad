package neutron

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Inventory is the controller's cached view of the Neutron resources it
// owns, indexed by the namespace/name of their Network. It plays for Neutron
// the part an informer's cache plays for the API server: syncs read it
// instead of asking Neutron, so a resync of N in-sync Networks costs two
// list requests per page (networks and subnets) instead of N gets.
//
// It is refreshed by listing on a period (Refresh), and written through by
// the controller's own changes (the Create*, Update* and Delete* methods
// call Neutron and record the answer), so a sync always sees what the
// previous sync did.
type Inventory struct {
	client Interface

	mu       sync.RWMutex
	synced   bool
	lastErr  error
	lastSync time.Time
	byKey    map[string]*owned
	// untagged are the networks named like ours but untagged, by UID, that
	// are older than untaggedGrace.
	untagged      map[types.UID][]Network
	untaggedGrace time.Duration
	// sweepAt, when not zero, is when the next refresh must also list the
	// untagged networks. Duplicates can only come from a create whose
	// answer was lost — the controller died, or the request failed on the
	// wire — so the sweep runs one grace period after start and after such
	// a failure, and costs nothing in steady state.
	sweepAt time.Time
	// writes counts write-throughs; written[key] is the count at the last
	// write for key. A refresh whose lists began before a write to key
	// keeps the written state: the list may predate the write.
	writes  uint64
	written map[string]uint64
	// lastRequestErr is the error of the latest write-through request if
	// Neutron was unreachable for it, nil after any answered request.
	lastRequestErr error
}

// owned is what Neutron holds for one Network key.
type owned struct {
	Networks []Network
	Subnets  []Subnet
}

// NewInventory returns an empty, unsynced inventory over client.
// untaggedGrace is how old an untagged network must be before the inventory
// reports it: younger ones may be a create of this very controller whose tag
// request is still to come.
func NewInventory(client Interface, untaggedGrace time.Duration) *Inventory {
	return &Inventory{client: client, byKey: map[string]*owned{}, written: map[string]uint64{},
		untaggedGrace: untaggedGrace, sweepAt: time.Now().Add(untaggedGrace)}
}

// Untagged returns the networks named for uid that never got our tags and
// are older than the grace period: left by a create whose tagging was cut
// short, or by a create request that Neutron completed after the controller
// that sent it had died (and its successor had made another).
func (inv *Inventory) Untagged() map[types.UID][]Network {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	out := make(map[types.UID][]Network, len(inv.untagged))
	for uid, ns := range inv.untagged {
		out[uid] = slices.Clone(ns)
	}
	return out
}

// UntaggedOf returns the untagged networks named for uid (see Untagged).
func (inv *Inventory) UntaggedOf(uid types.UID) []Network {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return slices.Clone(inv.untagged[uid])
}

// ForgetUntagged drops an untagged network the controller deleted or adopted.
func (inv *Inventory) ForgetUntagged(uid types.UID, id string) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.untagged[uid] = slices.DeleteFunc(inv.untagged[uid], func(n Network) bool { return n.ID == id })
	if len(inv.untagged[uid]) == 0 {
		delete(inv.untagged, uid)
	}
}

// Synced reports whether a refresh has ever succeeded.
func (inv *Inventory) Synced() bool {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return inv.synced
}

// LastRefresh returns the error of the latest refresh (nil when it
// succeeded) and when the latest successful one finished.
func (inv *Inventory) LastRefresh() (time.Time, error) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	return inv.lastSync, inv.lastErr
}

// Healthy returns nil when the latest list of Neutron succeeded and the
// latest request reached Neutron; otherwise why not. Readiness probes use
// it: it costs Neutron nothing.
func (inv *Inventory) Healthy() error {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	switch {
	case !inv.synced && inv.lastErr == nil:
		return ErrNotSynced
	case inv.lastErr != nil:
		return inv.lastErr
	default:
		return inv.lastRequestErr
	}
}

// observe remembers whether a request reached Neutron.
func (inv *Inventory) observe(err error) error {
	var rejected *RejectedError
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if err == nil || errors.As(err, &rejected) {
		inv.lastRequestErr = nil
	} else {
		inv.lastRequestErr = err
		// The request may have been carried out anyway.
		if at := time.Now().Add(inv.untaggedGrace); inv.sweepAt.IsZero() || at.Before(inv.sweepAt) {
			inv.sweepAt = at
		}
	}
	return err
}

// Lookup returns copies of the networks and subnets recorded for key.
func (inv *Inventory) Lookup(key string) ([]Network, []Subnet) {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	o := inv.byKey[key]
	if o == nil {
		return nil, nil
	}
	return slices.Clone(o.Networks), slices.Clone(o.Subnets)
}

// Keys returns every key that owns something in Neutron.
func (inv *Inventory) Keys() []string {
	inv.mu.RLock()
	defer inv.mu.RUnlock()
	keys := make([]string, 0, len(inv.byKey))
	for k := range inv.byKey {
		keys = append(keys, k)
	}
	return keys
}

// Refresh lists the owned networks and subnets and replaces the inventory
// with them. It returns the keys whose resources changed since the last
// refresh (not counting the controller's own writes), so the controller can
// re-check exactly those Networks: that is how drift made behind its back
// (a subnet deleted by hand) is noticed.
func (inv *Inventory) Refresh(ctx context.Context) (changed []string, err error) {
	inv.mu.RLock()
	startWrites := inv.writes
	sweep := !inv.sweepAt.IsZero() && !time.Now().Before(inv.sweepAt)
	inv.mu.RUnlock()

	nets, err := inv.client.ListNetworks(ctx)
	if err == nil {
		var subs []Subnet
		if subs, err = inv.client.ListSubnets(ctx); err == nil {
			if !sweep {
				return inv.replace(nets, subs, startWrites), nil
			}
			var untagged []Network
			if untagged, err = inv.client.ListUntagged(ctx); err == nil {
				inv.setUntagged(untagged)
				return inv.replace(nets, subs, startWrites), nil
			}
		}
	}
	inv.mu.Lock()
	inv.lastErr = err
	inv.mu.Unlock()
	return nil, err
}

func (inv *Inventory) setUntagged(nets []Network) {
	byUID := map[types.UID][]Network{}
	for _, n := range nets {
		if time.Since(n.CreatedAt) >= inv.untaggedGrace {
			byUID[n.Owner.UID] = append(byUID[n.Owner.UID], n)
		}
	}
	inv.mu.Lock()
	inv.untagged = byUID
	if !time.Now().Before(inv.sweepAt) {
		inv.sweepAt = time.Time{}
	}
	inv.mu.Unlock()
}

func (inv *Inventory) replace(nets []Network, subs []Subnet, startWrites uint64) []string {
	fresh := map[string]*owned{}
	get := func(key string) *owned {
		if fresh[key] == nil {
			fresh[key] = &owned{}
		}
		return fresh[key]
	}
	for _, n := range nets {
		o := get(n.Owner.Key())
		o.Networks = append(o.Networks, n)
	}
	for _, s := range subs {
		o := get(s.Owner.Key())
		o.Subnets = append(o.Subnets, s)
	}

	inv.mu.Lock()
	defer inv.mu.Unlock()
	for key, at := range inv.written {
		if at > startWrites {
			// Written during the lists: keep what the write recorded.
			if cur := inv.byKey[key]; cur != nil {
				fresh[key] = cur
			} else {
				delete(fresh, key)
			}
		} else {
			delete(inv.written, key)
		}
	}
	var changed []string
	for key, o := range fresh {
		if !inv.byKey[key].equal(o) {
			changed = append(changed, key)
		}
	}
	for key := range inv.byKey {
		if _, ok := fresh[key]; !ok {
			changed = append(changed, key)
		}
	}
	inv.byKey = fresh
	inv.synced = true
	inv.lastErr = nil
	inv.lastSync = time.Now()
	return changed
}

func (o *owned) equal(p *owned) bool {
	if o == nil || p == nil {
		return o == p
	}
	return sameElements(o.Networks, p.Networks) && sameElements(o.Subnets, p.Subnets)
}

func sameElements[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// record applies a write-through change to key's entry.
func (inv *Inventory) record(key string, change func(o *owned)) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	o := inv.byKey[key]
	if o == nil {
		o = &owned{}
	}
	// Copy on write: Lookup handed out clones, but keep entries immutable
	// for a refresh that may be comparing against them.
	o = &owned{Networks: slices.Clone(o.Networks), Subnets: slices.Clone(o.Subnets)}
	change(o)
	if len(o.Networks) == 0 && len(o.Subnets) == 0 {
		delete(inv.byKey, key)
	} else {
		inv.byKey[key] = o
	}
	inv.writes++
	inv.written[key] = inv.writes
}

// FindNetworks asks Neutron (not the inventory) for the networks named for
// owner, tagged or not.
func (inv *Inventory) FindNetworks(ctx context.Context, owner Owner) ([]Network, error) {
	nets, err := inv.client.FindNetworks(ctx, owner)
	return nets, inv.observe(err)
}

// SubnetsOf asks Neutron (not the inventory) for the subnets of a network,
// tagged or not.
func (inv *Inventory) SubnetsOf(ctx context.Context, networkID string) ([]Subnet, error) {
	subs, err := inv.client.SubnetsOf(ctx, networkID)
	return subs, inv.observe(err)
}

// AdoptNetwork tags network n as owner's and records it.
func (inv *Inventory) AdoptNetwork(ctx context.Context, n Network, owner Owner) (Network, error) {
	if err := inv.observe(inv.client.TagNetwork(ctx, n.ID, owner)); err != nil {
		return Network{}, err
	}
	n.Owner = owner
	inv.record(owner.Key(), func(o *owned) {
		o.Networks = append(slices.DeleteFunc(o.Networks, func(x Network) bool { return x.ID == n.ID }), n)
	})
	return n, nil
}

// AdoptSubnet tags subnet s as owner's and records it.
func (inv *Inventory) AdoptSubnet(ctx context.Context, s Subnet, owner Owner) (Subnet, error) {
	if err := inv.observe(inv.client.TagSubnet(ctx, s.ID, owner)); err != nil {
		return Subnet{}, err
	}
	s.Owner = owner
	inv.record(owner.Key(), func(o *owned) {
		o.Subnets = append(slices.DeleteFunc(o.Subnets, func(x Subnet) bool { return x.ID == s.ID }), s)
	})
	return s, nil
}

// CreateNetwork creates a network for owner and records it.
func (inv *Inventory) CreateNetwork(ctx context.Context, owner Owner) (Network, error) {
	n, err := inv.client.CreateNetwork(ctx, owner)
	if inv.observe(err) != nil {
		return Network{}, err
	}
	n.Owner = owner
	inv.record(owner.Key(), func(o *owned) { o.Networks = append(o.Networks, n) })
	return n, nil
}

// CreateSubnet creates a subnet for owner and records it.
func (inv *Inventory) CreateSubnet(ctx context.Context, owner Owner, networkID, cidr, gateway string) (Subnet, error) {
	s, err := inv.client.CreateSubnet(ctx, owner, networkID, cidr, gateway)
	if inv.observe(err) != nil {
		return Subnet{}, err
	}
	s.Owner = owner
	inv.record(owner.Key(), func(o *owned) { o.Subnets = append(o.Subnets, s) })
	return s, nil
}

// UpdateSubnetGateway moves the gateway of subnet s and records it.
func (inv *Inventory) UpdateSubnetGateway(ctx context.Context, s Subnet, gateway string) (Subnet, error) {
	updated, err := inv.client.UpdateSubnetGateway(ctx, s.ID, s.CIDR, gateway)
	if inv.observe(err) != nil {
		return Subnet{}, err
	}
	updated.Owner = s.Owner
	inv.record(s.Owner.Key(), func(o *owned) {
		for i := range o.Subnets {
			if o.Subnets[i].ID == s.ID {
				o.Subnets[i] = updated
			}
		}
	})
	return updated, nil
}

// DeleteSubnet deletes subnet s and forgets it.
func (inv *Inventory) DeleteSubnet(ctx context.Context, s Subnet) error {
	if err := inv.observe(inv.client.DeleteSubnet(ctx, s.ID)); err != nil {
		return err
	}
	inv.record(s.Owner.Key(), func(o *owned) {
		o.Subnets = slices.DeleteFunc(o.Subnets, func(x Subnet) bool { return x.ID == s.ID })
	})
	return nil
}

// DeleteNetwork deletes network n and forgets it.
func (inv *Inventory) DeleteNetwork(ctx context.Context, n Network) error {
	if err := inv.observe(inv.client.DeleteNetwork(ctx, n.ID)); err != nil {
		return err
	}
	inv.record(n.Owner.Key(), func(o *owned) {
		o.Networks = slices.DeleteFunc(o.Networks, func(x Network) bool { return x.ID == n.ID })
		// Neutron deletes a network's subnets with it.
		o.Subnets = slices.DeleteFunc(o.Subnets, func(x Subnet) bool { return x.NetworkID == n.ID })
	})
	return nil
}

// ErrNotSynced is returned by syncs that need the inventory before its first
// successful refresh.
var ErrNotSynced = errors.New("the Neutron inventory has not been listed yet")
