package inventory

import (
	"sync"
	"time"
)

// MinListGap is the least time between the end of one list of a Pace and
// the start of the next, however often a list is asked for, when no other
// namespace lists the same project.
const MinListGap = time.Second

// Pace spaces lists of one project. Every namespace a credential serves
// asks for lists (a credential swapped, a 412, a lost answer, an orphan to
// confirm), each at once. Requests coalesce, but one namespace that kept
// asking would keep a list running back to back: the most expensive
// request the controller makes, and Neutron's workers are shared by every
// namespace of the project. So the next list starts no sooner than
// MinListGap after the last ended, nor sooner than the last one took:
// alone, lists hold at most half of the time, whoever asks. That is one
// cycle, start to start: the list and its gap.
//
// A Pace outlives the inventories that keep it: pkg/controller/tenancy
// hands one to every inventory of one namespace's credentials at one
// project, built or built again, and each asks, before a list, how many
// namespaces share the project (Options.Share). A namespace's cycle is
// then share cycles long, whichever of its credentials lists, and however
// often it has them built anew: together the namespaces start no more
// lists of the project than one namespace alone would (their lists may
// overlap), none starts more than its equal part, and none waits on
// another's turn. The periodic list (minutes) meets the bound only when
// hundreds of namespaces share a project. The zero Pace has seen no list.
type Pace struct {
	mu sync.Mutex
	// ended is when the last list ended, took how long it ran; zero
	// before the first. listing says one is under way, claimed.
	ended   time.Time
	took    time.Duration
	listing bool
}

// gap is how long after the last list ended the next may start, share
// namespaces listing the project: share cycles from its start, less the
// list. p.mu is held.
func (p *Pace) gap(share int) time.Duration {
	cycle := p.took + max(MinListGap, p.took)
	return time.Duration(max(share, 1))*cycle - p.took
}

// wait is how long a list asked for at now must wait: zero when it may
// start. A list under way makes the asker look again a gap later.
func (p *Pace) wait(now time.Time, share int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitLocked(now, share)
}

func (p *Pace) waitLocked(now time.Time, share int) time.Duration {
	switch {
	case p.listing:
		return p.gap(share)
	case p.ended.IsZero():
		return 0
	}
	return max(0, p.ended.Add(p.gap(share)).Sub(now))
}

// claim is wait, except that when the list may start it is claimed: until
// listed or unclaim, every other asker of p waits. Two inventories of one
// namespace's credentials, woken by the same deadline, do not list
// together: one lists, the other a gap after it.
func (p *Pace) claim(now time.Time, share int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait := p.waitLocked(now, share)
	if wait == 0 {
		p.listing = true
	}
	return wait
}

// unclaim gives back a claim that listed nothing.
func (p *Pace) unclaim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listing = false
}

// listed records a list that ran from started to ended, and ends its
// claim.
func (p *Pace) listed(started, ended time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended, p.took, p.listing = ended, ended.Sub(started), false
}

// Idle reports whether no list of p is under way or due to wait at now,
// share namespaces listing its project: forgetting p then spaces no list
// less than keeping it would.
func (p *Pace) Idle(now time.Time, share int) bool {
	return p.wait(now, share) == 0
}
