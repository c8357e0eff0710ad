package inventory

import (
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestBreakerClosesOnlyOnAListThatBeganAfterTheLastTrip: a list read
// before a lost answer may not show the late create that answer was for,
// so only a list begun after the latest trip may close the breaker.
func TestBreakerClosesOnlyOnAListThatBeganAfterTheLastTrip(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1e9, 0))
	b := breaker{clock: clk}
	if err := b.allow(); err != nil {
		t.Fatalf("a new breaker refuses: %v", err)
	}
	if b.resetAfter(clk.Now()) {
		t.Error("resetAfter reported a closed breaker as open")
	}

	b.trip()
	clk.SetTime(clk.Now().Add(time.Second))
	listBetween := clk.Now()
	clk.SetTime(clk.Now().Add(time.Second))
	b.trip()
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
	b := breaker{clock: clk}
	b.trip()
	clk.SetTime(clk.Now().Add(time.Minute))
	b.trip()
	if err := b.allow(); err == nil || err.Error() != "Neutron is not answering since 2026-11-24T03:00:00Z; waiting for a list of Neutron to succeed" {
		t.Errorf("allow() = %v", err)
	}
}
