package inventory

import "time"

// MinListGap is the least time between the end of one list of a place and
// the start of the next, however often a list is asked for.
const MinListGap = time.Second

// pace spaces the lists of one place. Lists are asked for by every
// namespace the place serves (a credential swapped, a 412, a lost answer,
// an orphan to confirm), and each asks at once; requests coalesce, but one
// namespace that keeps asking would otherwise keep a list running back to
// back, and a list of a large project is the most expensive thing the
// controller asks of Neutron, whose workers every namespace of the place
// shares. So the next list starts no sooner than MinListGap after the last
// ended, nor sooner than the last one took: lists hold at most half of the
// time, whoever asks. The periodic list (minutes) never meets the bound.
type pace struct {
	// next is when the next list may start; zero before the first.
	next time.Time
}

// listed records a list that ran from started to ended.
func (p *pace) listed(started, ended time.Time) {
	p.next = ended.Add(max(MinListGap, ended.Sub(started)))
}

// wait is how long a list asked for at now must wait: zero when it may
// start.
func (p *pace) wait(now time.Time) time.Duration {
	return max(0, p.next.Sub(now))
}
