package main

import (
	"slices"
	"testing"
)

func TestPercentsIsTheMedianThenEachInOrder(t *testing.T) {
	for _, tc := range []struct {
		ratios []float64
		want   string
	}{
		{[]float64{0.97}, "97% (97%)"},
		{[]float64{0.99, 0.84, 0.95}, "95% (99%, 84%, 95%)"},
		{[]float64{0.90, 1.00}, "95% (90%, 100%)"},
	} {
		if got := percents(tc.ratios); got != tc.want {
			t.Errorf("percents(%v) = %q, want %q", tc.ratios, got, tc.want)
		}
	}
}

// TestBracketedComparesEachRunWithTheLoopsOnBothSides: a plain loop that
// slows steadily over the run charges nothing to a controller that keeps
// its pace; the loop just before alone would.
func TestBracketedComparesEachRunWithTheLoopsOnBothSides(t *testing.T) {
	plain := []rates{{6, 6}, {5, 5}, {4, 4}}
	ctrl := []rates{{5.5, 2.75}, {4.5, 2.25}}
	creates, deletes := bracketed(plain, ctrl)
	if want := []float64{1, 1}; !slices.Equal(creates, want) {
		t.Errorf("creates = %v, want %v", creates, want)
	}
	if want := []float64{0.5, 0.5}; !slices.Equal(deletes, want) {
		t.Errorf("deletes = %v, want %v", deletes, want)
	}
}
