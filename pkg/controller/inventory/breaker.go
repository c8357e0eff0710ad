package inventory

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
)

// breaker is the inventory's circuit breaker on Neutron. When threshold
// requests in a row get no answer (or a 5xx), Neutron is known to be down:
// the breaker opens, and every Neutron request a sync would make fails at
// once with ErrNeutronDown instead of waiting out --neutron-timeout, so
// each affected Network says why within moments and the workers do not
// queue behind a dead server. Networks already in sync need no request and
// stay Ready. One failure among answers does not open it: a trickle of
// 5xx or timeouts must not stop every Network's writes. (The Network whose
// write went unanswered waits for a list all the same: door.go.)
//
// While the breaker is open, Neutron is probed every few seconds with its
// cheapest question (Inventory.Probe); the first answer to a probe, or a
// list, sent after the last failure closes it, and the next list that
// succeeds makes the controller queue every Network again.
type breaker struct {
	// clock tells the time of failures; the inventory's, a fake in tests.
	clock clock.PassiveClock
	// threshold is how many unanswered requests in a row open it.
	threshold int

	mu       sync.Mutex
	open     bool      // whether requests are refused
	since    time.Time // when the breaker opened
	last     time.Time // when a request last went unanswered
	failures int       // unanswered requests since the last answer
}

// breakerThreshold is how many Neutron requests in a row must go
// unanswered to open the breaker: more than one, so that a single lost
// answer among many does not stop every Network's writes, and few enough
// that the workers stop queueing behind a hung server within a round.
const breakerThreshold = 3

// ErrNeutronDown is what a request refused by the open breaker returns.
var ErrNeutronDown = errors.New("Neutron is not answering")

// fail counts a request that got no answer, and opens the breaker at the
// threshold-th in a row. What the request was is its own sync's to log,
// not the breaker's to repeat.
func (b *breaker) fail() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last = b.clock.Now()
	b.failures++
	if !b.open && b.failures >= max(b.threshold, 1) {
		b.open, b.since = true, b.last
		metrics.BreakerOpen.Inc()
	}
}

// succeed counts an answer: the failures in a row start again from none.
func (b *breaker) succeed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = 0
}

// resetAfter closes the breaker on the evidence of a list of Neutron that
// began at listStarted, and reports whether it was open. A list that began
// before a request last went unanswered proves nothing: it may have been read before
// a late create completed, so the breaker stays open for the next one.
func (b *breaker) resetAfter(listStarted time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open || listStarted.Before(b.last) {
		return false
	}
	b.open, b.failures = false, 0
	metrics.BreakerOpen.Dec()
	return true
}

// release takes an open breaker out of the count of open ones: its
// project's inventory is let go (its loop stopped), and says nothing more.
func (b *breaker) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		b.open = false
		metrics.BreakerOpen.Dec()
	}
}

// allow returns nil when requests may go to Neutron, else why not. The
// reason names no request: the one that tripped the breaker was some
// other Network's, perhaps in another namespace, and its text (its name,
// a response body) is not this Network's to show. It is in the log where
// the breaker tripped.
func (b *breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return nil
	}
	return fmt.Errorf("%w since %s; probing it every few seconds", ErrNeutronDown,
		b.since.UTC().Format(time.RFC3339))
}

// isOpen reports whether the breaker is open.
func (b *breaker) isOpen() bool { return b.allow() != nil }
