package leader

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// Fence tells a writer whether this process can still prove it holds the
// Lease. client-go does not fence: a leader frozen past its lease (SIGSTOP,
// a cgroup freeze, a paused VM) resumes with its work running and its
// cache stale, and its renew loop notices only once a request to the API
// server has come back. Asked before every write to the outside world, the
// fence closes that window: a write goes out only while the last renewal
// is less than the renew deadline old, the same bound after which the
// elector itself gives the Lease up.
//
// Why that bound is safe: another replica takes the Lease only after it
// has seen the same record unchanged for the lease duration, counted from
// no earlier than the renewal landed. The renewal is observed here when
// its answer arrives, so writes stop a lease duration minus the renew
// deadline (5 s with the defaults) before anyone else may start, as long
// as that answer took less than that to come back. A write already on the
// wire when the fence closes is not recalled; nothing can recall it.
//
// The zero Fence, and a nil one, never refuses: leader election is off.
type Fence struct {
	elector atomic.Pointer[watched]
}

// watched is the elector a Fence answers for, with its durations.
type watched struct {
	elector                      *leaderelection.LeaderElector
	leaseDuration, renewDeadline time.Duration
}

// ErrNotLeading is the fence's refusal while another replica holds the
// Lease, or none has been acquired yet.
var ErrNotLeading = errors.New("not the leader")

// watch makes f answer for elector, configured with leaseDuration and
// renewDeadline.
func (f *Fence) watch(elector *leaderelection.LeaderElector, leaseDuration, renewDeadline time.Duration) {
	if f == nil {
		return
	}
	f.elector.Store(&watched{elector, leaseDuration, renewDeadline})
}

// Check returns nil while this process holds the Lease and renewed it
// less than the renew deadline ago, and why not otherwise.
func (f *Fence) Check() error {
	if f == nil {
		return nil
	}
	w := f.elector.Load()
	if w == nil {
		return nil // never watched: leader election is off
	}
	if !w.elector.IsLeader() {
		return ErrNotLeading
	}
	// The elector's own check tolerates the lease duration plus its
	// argument since the last renewal: take the lease duration back off.
	if err := w.elector.Check(w.renewDeadline - w.leaseDuration); err != nil {
		return fmt.Errorf("the Lease was last renewed more than %v ago: %w", w.renewDeadline, err)
	}
	return nil
}
