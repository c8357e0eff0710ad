package main

import (
	"errors"
	"testing"
	"time"
)

// TestBreakerClosesOnlyOnAListThatBeganAfterTheLastTrip: a list read
// before a lost answer may not show the late create that answer was for,
// so only a list begun after the latest trip may close the breaker.
func TestBreakerClosesOnlyOnAListThatBeganAfterTheLastTrip(t *testing.T) {
	var b breaker
	if err := b.allow(); err != nil {
		t.Fatalf("a new breaker refuses: %v", err)
	}
	if b.resetAfter(time.Now()) {
		t.Error("resetAfter reported a closed breaker as open")
	}

	b.trip(errors.New("first timeout"))
	listBetween := time.Now()
	b.trip(errors.New("second timeout"))
	err := b.allow()
	if !errors.Is(err, errNeutronDown) {
		t.Fatalf("an open breaker allowed a request: %v", err)
	}
	if b.resetAfter(listBetween) {
		t.Error("a list begun before the last trip closed the breaker")
	}
	if !b.isOpen() {
		t.Fatal("the breaker closed")
	}
	if !b.resetAfter(time.Now()) {
		t.Error("a list begun after the last trip did not close the breaker")
	}
	if err := b.allow(); err != nil {
		t.Errorf("a closed breaker refuses: %v", err)
	}
}
