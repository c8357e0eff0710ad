package main

import "testing"

// TestMemoryBudget: --memory-budget is a quantity, at least what the
// largest review holds beside the places of the waiting (108.1 MiB); the
// default is that and more.
func TestMemoryBudget(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want int64
		ok   bool
	}{
		{defaultMemoryBudget, 128 << 20, true},
		{"1Gi", 1 << 30, true},
		{"109Mi", 109 << 20, true},
		{"108Mi", 0, false},
		{"100Mi", 0, false},
		{"64Mi", 0, false},
		{"lots", 0, false},
	} {
		got, err := (&options{memoryBudget: tc.flag}).budget()
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("--memory-budget=%s: %d, %v; want %d, ok %v", tc.flag, got, err, tc.want, tc.ok)
		}
	}
}
