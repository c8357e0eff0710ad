package inventory

import "time"

// DefaultWritesQuiet is how long the controller's writes to a project pause
// before its inventory lists what they did (Options.WritesQuiet).
const DefaultWritesQuiet = 2 * time.Second

// quietListsPerPeriod bounds the lists that writes pausing ask for: at most
// this many per ResyncPeriod, however the writes come. Under a steady
// trickle of writes that is the most lists they add to the periodic one,
// each spaced by the pace (pace.go) as any other.
const quietListsPerPeriod = 10

// pauseWatch decides, at each tick of WritesQuiet, whether the writes have
// paused since the tick before and a list is due for them.
type pauseWatch struct {
	// gap is the least time between two lists it asks for.
	gap time.Duration
	// seen is the store's write count at the tick before; asked is when
	// it last asked for a list (zero: never).
	seen  uint64
	asked time.Time
}

// due takes the store's write count, and whether the latest list may not
// show some of those writes (Store.Unlisted), at now: true when none was
// written since the tick before, some is unlisted, and gap has passed
// since the list asked for before.
func (w *pauseWatch) due(now time.Time, writes uint64, unlisted bool) bool {
	paused := writes == w.seen
	w.seen = writes
	if !paused || !unlisted || (!w.asked.IsZero() && now.Sub(w.asked) < w.gap) {
		return false
	}
	w.asked = now
	return true
}
