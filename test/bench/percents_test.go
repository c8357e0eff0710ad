package main

import "testing"

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
