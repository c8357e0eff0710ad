package collector

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// tracker remembers, for one project, when each orphan was sighted and how
// many deletions the latest list of Neutron still allows. It decides when
// an orphan may be collected: once two lists begun at least the grace
// period apart found it orphaned, and while the list's budget lasts.
type tracker struct {
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

// newTracker returns a tracker that allows a deletion once an orphan has been
// seen by two lists begun at least grace apart, and at most maxPerList
// deletions per list.
func newTracker(grace time.Duration, maxPerList int) *tracker {
	return &tracker{grace: grace, maxPerList: maxPerList, sightings: map[types.UID]sighting{}}
}

// NewList starts the budget of a list of Neutron that began at started and
// found orphans, and forgets every UID it did not find orphaned. It
// reports the UIDs sighted for the first time, for which a second list is
// due a grace period later.
func (t *tracker) NewList(started time.Time, orphans []types.UID) (firstSighted []types.UID) {
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
func (t *tracker) Due(uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sightings[uid]
	return ok && s.last.Sub(s.first) >= t.grace
}

// Sighted reports whether a list has found uid orphaned yet.
func (t *tracker) Sighted(uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.sightings[uid]
	return ok
}

// Take takes one deletion from the latest list's budget. When none is
// left it returns false, and firstRefusal is true the first time in that
// list, so the caller warns once.
func (t *tracker) Take() (ok, firstRefusal bool) {
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

// GiveBack returns a deletion taken from the budget that sent nothing to
// Neutron (the delete was refused before it was sent), so that another
// orphan of the list may have it.
func (t *tracker) GiveBack() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.budget++
}

// Forget drops uid: its Network is there after all, or it was collected.
func (t *tracker) Forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sightings, uid)
}
