package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Neutron settles after a burst: for some seconds after the last answer,
// OVN's northd and databases still work through the changes the burst
// made, and a phase that begins meanwhile pays for the one before it. Each timed
// phase begins once the Neutron side has used less than quietShare of a
// core over a second, or after quietDeadline at the most.
const (
	quietShare    = 0.15
	quietDeadline = time.Minute
)

// quietNeutron waits until Neutron has settled, and returns how long that
// took.
func quietNeutron(ctx context.Context) (time.Duration, error) {
	start, before := time.Now(), sampleCPU()
	for {
		if err := sleep(ctx, time.Second); err != nil {
			return 0, err
		}
		now := sampleCPU()
		if now.since(before, neutronSide) < quietShare || time.Since(start) >= quietDeadline {
			return time.Since(start), nil
		}
		before = now
	}
}

// settled is the waits of quietNeutron before the phases of a run, for
// the table.
type settled []time.Duration

// wait waits for Neutron to settle and records how long it took.
func (s *settled) wait(ctx context.Context) error {
	d, err := quietNeutron(ctx)
	*s = append(*s, d)
	return err
}

// String is the waits' median and longest.
func (s settled) String() string {
	if len(s) == 0 {
		return "no phase"
	}
	sorted := slices.Sorted(slices.Values(s))
	return fmt.Sprintf("median %s, longest %s, over %d phases", sorted[len(sorted)/2].Round(100*time.Millisecond), sorted[len(sorted)-1].Round(100*time.Millisecond), len(s))
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
