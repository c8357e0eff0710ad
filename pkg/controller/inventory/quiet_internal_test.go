package inventory

import (
	"testing"
	"time"
)

// TestAListIsDueOnceTheWritesPause is pauseWatch's specification, tick by
// tick (a tick is WritesQuiet): a list is due at the first tick with no
// write since the one before, while a write is unlisted, and no sooner
// than gap after the list it asked for before.
func TestAListIsDueOnceTheWritesPause(t *testing.T) {
	type tick struct {
		at       time.Duration // since the start
		writes   uint64
		unlisted bool
		want     bool
	}
	for _, tc := range []struct {
		name  string
		ticks []tick
	}{
		{"nothing written: nothing due", []tick{{2 * time.Second, 0, false, false}, {4 * time.Second, 0, false, false}}},
		{"a burst: due at the first tick after it, not in it", []tick{
			{2 * time.Second, 3, true, false}, {4 * time.Second, 7, true, false}, {6 * time.Second, 9, true, false},
			{8 * time.Second, 9, true, true},
		}},
		{"asked once: not again while the list has not shown the writes", []tick{
			{2 * time.Second, 1, true, false}, {4 * time.Second, 1, true, true}, {6 * time.Second, 1, true, false},
		}},
		{"listed: nothing due", []tick{{2 * time.Second, 1, true, false}, {4 * time.Second, 1, true, true}, {6 * time.Second, 1, false, false}}},
		{"a second burst within gap waits for the gap", []tick{
			{2 * time.Second, 1, true, false}, {4 * time.Second, 1, true, true},
			{10 * time.Second, 2, true, false}, {12 * time.Second, 2, true, false},
			{time.Minute + 2*time.Second, 2, true, false}, {time.Minute + 4*time.Second, 2, true, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1e9, 0)
			w := pauseWatch{gap: time.Minute}
			for i, k := range tc.ticks {
				if got := w.due(start.Add(k.at), k.writes, k.unlisted); got != k.want {
					t.Errorf("tick %d (%v, %d writes, unlisted %v): due = %v, want %v", i, k.at, k.writes, k.unlisted, got, k.want)
				}
			}
		})
	}
}
