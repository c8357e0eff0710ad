package inventory

import (
	"sync"
	"time"
)

// MinListGap is the least time between the end of one list of an
// Inventory and the start of the next, however often a list is asked for,
// when no other credential lists the same project.
const MinListGap = time.Second

// pace spaces the lists of one Inventory, that is of one credential
// (pkg/controller/tenancy builds one per credential). Every namespace the
// credential serves asks for lists (a credential swapped, a 412, a lost
// answer, an orphan to confirm), each at once. Requests coalesce, but one
// namespace that kept asking would keep a list running back to back: the
// most expensive request the controller makes, and Neutron's workers are
// shared by every namespace of the project. So the next list starts no
// sooner than MinListGap after the last ended, nor sooner than the last
// one took: lists hold at most half of the time, whoever asks.
//
// Credentials that reach one project (Options.Share) each space their
// lists share times wider: together they list the project no more often
// than one credential would, and no credential waits on another's turn,
// so none can take another's. The periodic list (minutes) meets the bound
// only when hundreds of credentials share a project; it then comes as
// often as the project's list rate allows each of them.
type pace struct {
	// mu guards the rest: Refresh records a list from whichever
	// goroutine makes it (Run's, or the worker's first list).
	mu sync.Mutex
	// ended is when the last list ended, took how long it ran; zero
	// before the first.
	ended time.Time
	took  time.Duration
}

// listed records a list that ran from started to ended.
func (p *pace) listed(started, ended time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended, p.took = ended, ended.Sub(started)
}

// wait is how long a list asked for at now must wait, this inventory's
// share of its project's list rate being 1/share: zero when it may start.
func (p *pace) wait(now time.Time, share int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended.IsZero() {
		return 0
	}
	gap := time.Duration(max(share, 1)) * max(MinListGap, p.took)
	return max(0, p.ended.Add(gap).Sub(now))
}
