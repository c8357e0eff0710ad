package inventory_test

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// loop is an Inventory's Run loop on a fake clock, and the lists it hands
// to its handler.
type loop struct {
	t     *testing.T
	clk   *clocktesting.FakeClock
	lists chan inventory.Listed
}

// runLoop starts inv's Run loop on clk until ctx ends.
func runLoop(ctx context.Context, t *testing.T, inv *inventory.Inventory, clk *clocktesting.FakeClock) *loop {
	l := &loop{t: t, clk: clk, lists: make(chan inventory.Listed, 10)}
	go inv.Run(ctx, func(_ context.Context, listed inventory.Listed) { l.lists <- listed })
	return l
}

// settle is how long, in real time, next waits for a list once the fake
// clock has reached its limit: the loop and its queue set their timers on
// goroutines of their own, which a loaded machine (CI, -race) may run
// late. The bound that matters is on fake time; this one only ends a
// test that would otherwise hang.
const settle = 10 * time.Second

// next moves the clock by unit at a time, up to limit, until a list
// comes, and returns it.
func (l *loop) next(what string, unit, limit time.Duration) inventory.Listed {
	l.t.Helper()
	start := l.clk.Now()
	for l.clk.Since(start) < limit {
		select {
		case listed := <-l.lists:
			return listed
		case <-time.After(time.Millisecond):
		}
		l.clk.Step(unit)
	}
	// The fake clock fires a timer only when it is set: one the loop sets
	// late (on a loaded machine) for a moment already reached would wait
	// for ever. Setting it where it is fires those, and moves no time.
	deadline := time.After(settle)
	for {
		select {
		case listed := <-l.lists:
			return listed
		case <-deadline:
			l.t.Fatalf("no list %s within %v of fake time", what, limit)
			return inventory.Listed{}
		case <-time.After(time.Millisecond):
			l.clk.Step(0)
		}
	}
}

// none fails the test if a list has come.
func (l *loop) none(what string) {
	l.t.Helper()
	select {
	case listed := <-l.lists:
		l.t.Errorf("a list %s: %+v", what, listed)
	default:
	}
}

// slowNeutron is a fake Neutron whose network list takes took of clk's
// time: a large project.
type slowNeutron struct {
	*fake.Neutron
	clk  *clocktesting.FakeClock
	took time.Duration
}

func (s *slowNeutron) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	s.clk.Step(s.took)
	return s.Neutron.ListNetworks(ctx, description, visit)
}

// TestListsAreSpacedHoweverOftenTheyAreAskedFor: requests for a list, as
// every namespace of a project makes them, coalesce into one list, which
// starts no sooner than MinListGap after the last list ended, nor sooner
// than the last list took: a namespace that keeps asking keeps Neutron
// busy listing at most half of the time. Where share namespaces list the
// project, a namespace's next list starts share such cycles after its
// last one started, so that together they start no more lists than one.
func TestListsAreSpacedHoweverOftenTheyAreAskedFor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		took  time.Duration
		share int
		want  time.Duration
	}{
		{"a quick list: the gap", 0, 1, inventory.MinListGap},
		{"a list of 10 s: as long again", 10 * time.Second, 1, 10 * time.Second},
		{"a quick list, one of 3 namespaces at its project: 3 gaps", 0, 3, 3 * inventory.MinListGap},
		{"a list of 10 s, one of 2 namespaces at its project: two cycles of 20 s from its start", 10 * time.Second, 2, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
			slow := &slowNeutron{Neutron: fake.New(), clk: clk}
			inv := inventory.New(slow, mark(t, "prod"), inventory.Options{
				ResyncPeriod: time.Hour, LateCompletionGrace: time.Minute, Clock: clk,
				Share: func() int { return tc.share },
			})
			l := runLoop(ctx, t, inv, clk)
			l.next("a grace after start", time.Second, 2*time.Minute)

			slow.took = tc.took
			inv.RequestRefresh(0)
			gap := time.Duration(tc.share) * inventory.MinListGap // the grace's list was quick
			first := l.next("on request", 100*time.Millisecond, gap+time.Second)
			ended := first.Started.Add(tc.took)
			for range 10 {
				inv.RequestRefresh(0)
			}
			second := l.next("on ten more requests", 100*time.Millisecond, 2*tc.want+time.Second)
			if gap := second.Started.Sub(ended); gap < tc.want {
				t.Errorf("the next list started %v after the last ended, want at least %v", gap, tc.want)
			}
			l.none("more for the ten requests")
		})
	}
}

// heldNeutron is a fake Neutron whose network list, once entered, waits
// for release: a list under way.
type heldNeutron struct {
	*fake.Neutron
	entered, release chan struct{}
}

func (h *heldNeutron) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	h.entered <- struct{}{}
	<-h.release
	return h.Neutron.ListNetworks(ctx, description, visit)
}

// TestInventoriesOnOnePaceListOneAtATime: the inventories of one
// namespace's credentials at one project keep one Pace. While one lists,
// the other does not, however long the list takes; it lists a gap after
// that list ended. Else a namespace's credentials, woken by one deadline,
// would each list, and split nothing.
func TestInventoriesOnOnePaceListOneAtATime(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	pace := &inventory.Pace{}
	opts := inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: clk, Pace: pace}
	held := &heldNeutron{Neutron: fake.New(), entered: make(chan struct{}), release: make(chan struct{})}
	first, second := inventory.New(held, mark(t, "prod"), opts), inventory.New(fake.New(), mark(t, "prod"), opts)

	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		if _, err := first.ListWhenDue(ctx); err != nil {
			t.Error(err)
		}
	}()
	<-held.entered
	secondListed := make(chan inventory.Listed, 1)
	go func() {
		if listed, err := second.ListWhenDue(ctx); err == nil {
			secondListed <- listed
		}
	}()
	for range 10 {
		clk.Step(time.Second)
		select {
		case <-secondListed:
			t.Fatalf("the second inventory listed %v into the first's list", clk.Since(time.Unix(1e9, 0)))
		case <-time.After(2 * time.Millisecond):
		}
	}
	close(held.release)
	<-firstDone
	ended := clk.Now()
	// The first list took 10 s of the clock: the gap is as long again.
	const want = 10 * time.Second
	l := &loop{t: t, clk: clk, lists: secondListed}
	listed := l.next("after the first's list", 100*time.Millisecond, 2*want+time.Second)
	if gap := listed.Started.Sub(ended); gap < want {
		t.Errorf("the second inventory listed %v after the first's list ended, want at least %v", gap, want)
	}
}
