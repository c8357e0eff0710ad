package inventory

import (
	"errors"
	"testing"
	"time"

	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
)

// TestBreakerClosesOnlyOnAListThatBeganAfterTheLastTrip: a list read
// before a lost answer may not show the late create that answer was for,
// so only a list begun after the latest trip may close the breaker.
func TestBreakerClosesOnlyOnAListThatBeganAfterTheLastTrip(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1e9, 0))
	b := breaker{clock: clk, threshold: 1}
	if err := b.allow(); err != nil {
		t.Fatalf("a new breaker refuses: %v", err)
	}
	if b.resetAfter(clk.Now()) {
		t.Error("resetAfter reported a closed breaker as open")
	}

	b.fail()
	clk.SetTime(clk.Now().Add(time.Second))
	listBetween := clk.Now()
	clk.SetTime(clk.Now().Add(time.Second))
	b.fail()
	err := b.allow()
	if !errors.Is(err, ErrNeutronDown) {
		t.Fatalf("an open breaker allowed a request: %v", err)
	}
	if b.resetAfter(listBetween) {
		t.Error("a list begun before the last trip closed the breaker")
	}
	if !b.isOpen() {
		t.Fatal("the breaker closed")
	}
	if !b.resetAfter(clk.Now()) {
		t.Error("a list begun at the last trip did not close the breaker")
	}
	if err := b.allow(); err != nil {
		t.Errorf("a closed breaker refuses: %v", err)
	}
}

// TestTheBreakerSaysSinceWhenNeutronIsDown: the refusal gives the time of
// the first trip of this outage, not of the latest.
func TestTheBreakerSaysSinceWhenNeutronIsDown(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	b := breaker{clock: clk, threshold: 1}
	b.fail()
	clk.SetTime(clk.Now().Add(time.Minute))
	b.fail()
	if err := b.allow(); err == nil || err.Error() != "Neutron is not answering since 2026-11-24T03:00:00Z; probing it every few seconds" {
		t.Errorf("allow() = %v", err)
	}
}

// TestTheBreakerOpensOnFailuresInARow: an answer between two unanswered
// requests starts the count again; the threshold-th in a row opens it.
func TestTheBreakerOpensOnFailuresInARow(t *testing.T) {
	b := breaker{clock: clocktesting.NewFakePassiveClock(time.Unix(1e9, 0)), threshold: 3}
	for _, step := range []struct {
		answered bool
		wantOpen bool
	}{
		{false, false}, {false, false}, {true, false}, // an answer in between
		{false, false}, {false, false}, {false, true}, // three in a row
	} {
		if step.answered {
			b.succeed()
		} else {
			b.fail()
		}
		if got := b.isOpen(); got != step.wantOpen {
			t.Fatalf("after %+v: open = %v, want %v (failures %d)", step, got, step.wantOpen, b.failures)
		}
	}
}

// TestTheGaugeCountsEveryProjectsOpenBreaker: each project has its own
// breaker; one closing, or let go with its project, leaves the others'
// counted.
func TestTheGaugeCountsEveryProjectsOpenBreaker(t *testing.T) {
	metrics.RegisterController() // a component-base metric counts once registered
	clk := clocktesting.NewFakePassiveClock(time.Unix(1e9, 0))
	open := func() float64 {
		t.Helper()
		v, err := testutil.GetGaugeMetricValue(metrics.BreakerOpen)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := open()
	a, b := breaker{clock: clk, threshold: 1}, breaker{clock: clk, threshold: 1}
	a.fail()
	b.fail()
	if got := open() - before; got != 2 {
		t.Fatalf("two projects' breakers open: the gauge rose by %v, want 2", got)
	}
	a.resetAfter(clk.Now())
	if got := open() - before; got != 1 {
		t.Errorf("one closed, one still open: the gauge is up by %v, want 1", got)
	}
	b.release()
	b.release()
	if got := open() - before; got != 0 {
		t.Errorf("the open one let go (twice): the gauge is up by %v, want 0", got)
	}
}
