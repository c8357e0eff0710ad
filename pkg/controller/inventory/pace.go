package inventory

import "time"

// MinListGap is the least time between the end of one list of an
// Inventory and the start of the next, however often a list is asked for.
const MinListGap = time.Second

// pace spaces the lists of one Inventory, that is of one credential
// (pkg/controller/tenancy builds one per credential). Every namespace the
// credential serves asks for lists (a credential swapped, a 412, a lost
// answer, an orphan to confirm), each at once. Requests coalesce, but one
// namespace that kept asking would keep a list running back to back: the
// most expensive request the controller makes with that credential, whose
// rate budget every namespace using it shares. So the next list starts no
// sooner than MinListGap after the last ended, nor sooner than the last
// one took: lists hold at most half of the time, whoever asks. The
// periodic list (minutes) never meets the bound. A namespace's own
// credentials have paces of their own, as they have budgets of their own.
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
