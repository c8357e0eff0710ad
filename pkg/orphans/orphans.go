// Package orphans decides when Neutron resources whose Network is gone
// may be collected. The controller's view of both sides is a cache: the
// informer's of the API server, the inventory's of Neutron. A cache that is
// behind (a leader resuming after a pause, a restore from backup, a watch
// that has not caught up) makes a living Network look gone, and what is
// deleted in Neutron cannot be undone. So, like kube-controller-manager's
// garbage collector, the controller collects only what it has seen
// orphaned twice, at least a grace period apart, and then confirmed with a
// live read; and no more than a fixed number per list of Neutron, so that
// a wrong view of the world costs a bounded, visible amount.
//
// A Tracker holds the sightings and the per-list budget; the live read is
// the reconciler's (pkg/reconcile, CollectOrphans).
package orphans

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Tracker remembers when each orphan was sighted and how many deletions
// the latest list of Neutron still allows.
type Tracker struct {
	grace      time.Duration
	maxPerList int

	mu        sync.Mutex
	sightings map[types.UID]sighting
	budget    int
	// capped is whether the cap has held back a deletion since the latest
	// list: the Warning is sent once per list, not once per orphan.
	capped bool
}

// sighting is when lists of Neutron found one UID orphaned: the first list
// to, and the latest.
type sighting struct{ first, last time.Time }

// New returns a Tracker that allows a deletion once an orphan has been
// seen by two lists begun at least grace apart, and at most maxPerList
// deletions per list.
func New(grace time.Duration, maxPerList int) *Tracker {
	return &Tracker{grace: grace, maxPerList: maxPerList, sightings: map[types.UID]sighting{}}
}

// NewList starts the budget of a list of Neutron that began at started and
// found orphans, and forgets every UID it did not find orphaned. It
// reports the UIDs sighted for the first time, for which a second list is
// due a grace period later.
func (t *Tracker) NewList(started time.Time, orphans []types.UID) (firstSighted []types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.budget, t.capped = t.maxPerList, false
	seen := make(map[types.UID]sighting, len(orphans))
	for _, uid := range orphans {
		s, ok := t.sightings[uid]
		if !ok {
			s.first = started
			firstSighted = append(firstSighted, uid)
		}
		s.last = started
		seen[uid] = s
	}
	t.sightings = seen
	return firstSighted
}

// Due reports whether uid has been seen orphaned by two lists begun at
// least the grace period apart.
func (t *Tracker) Due(uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sightings[uid]
	return ok && s.last.Sub(s.first) >= t.grace
}

// Sighted reports whether a list has found uid orphaned yet.
func (t *Tracker) Sighted(uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.sightings[uid]
	return ok
}

// Take takes one deletion from the latest list's budget. When none is
// left it returns false, and firstRefusal is true the first time in that
// list, so the caller warns once.
func (t *Tracker) Take() (ok, firstRefusal bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.budget > 0 {
		t.budget--
		return true, false
	}
	first := !t.capped
	t.capped = true
	return false, first
}

// Forget drops uid: its Network is there after all, or it was collected.
func (t *Tracker) Forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sightings, uid)
}
