package fairqueue

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
)

// TestOneNamespaceDelaysOnlyItself: a namespace whose Networks all fail
// spends its own retry bucket, never another namespace's. After 1,200
// failures in "a", the first failure in "b" is retried after the per-key
// base delay, as if "a" did not exist.
func TestOneNamespaceDelaysOnlyItself(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failingA  int
		wantBMax  time.Duration
		wantAOver time.Duration // the delay of a's last failure is at least this
	}{
		{name: "a quiet neighbour", failingA: 0, wantBMax: BaseDelay},
		{name: "a burst's worth of failures", failingA: Burst, wantBMax: BaseDelay},
		{name: "1,200 failing keys", failingA: 1200, wantBMax: BaseDelay, wantAOver: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limiter := NewRateLimiter(time.Minute)
			var lastA time.Duration
			for i := range tc.failingA {
				lastA = limiter.When(cache.ObjectName{Namespace: "a", Name: fmt.Sprintf("net-%d", i)})
			}
			if lastA < tc.wantAOver {
				t.Errorf("a's last retry in %v, want at least %v: a's own bucket should hold a back", lastA, tc.wantAOver)
			}
			if got := limiter.When(cache.ObjectName{Namespace: "b", Name: "net"}); got > tc.wantBMax {
				t.Errorf("b's first retry in %v, want at most the base delay %v", got, tc.wantBMax)
			}
		})
	}
}

// TestBackoffPerKey: the per-key exponential backoff of client-go's default
// limiter is kept, capped at the maximum delay, and Forget resets it.
func TestBackoffPerKey(t *testing.T) {
	key := cache.ObjectName{Namespace: "a", Name: "net"}
	limiter := NewRateLimiter(5 * time.Second)
	for _, want := range []time.Duration{BaseDelay, 2 * BaseDelay, 4 * BaseDelay} {
		if got := limiter.When(key); got != want {
			t.Errorf("When = %v, want %v", got, want)
		}
	}
	if got := limiter.NumRequeues(key); got != 3 {
		t.Errorf("NumRequeues = %d, want 3", got)
	}
	for range 30 {
		limiter.When(key)
	}
	if got := limiter.When(key); got != 5*time.Second {
		t.Errorf("after 33 failures When = %v, want the cap 5s", got)
	}
	limiter.Forget(key)
	if got := limiter.When(key); got != BaseDelay {
		t.Errorf("after Forget When = %v, want the base delay %v", got, BaseDelay)
	}
}

// TestNamespacesAreForgotten: the limiter holds a bucket only for a
// namespace with a failing key, so its memory is bounded by the keys that
// are failing now, not by every namespace that ever failed.
func TestNamespacesAreForgotten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forget []string // names forgotten in each namespace, of net-0..net-2
		want   int
	}{
		{name: "nothing forgotten", forget: nil, want: 100},
		{name: "one key of three forgotten", forget: []string{"net-0"}, want: 100},
		{name: "every key forgotten", forget: []string{"net-0", "net-1", "net-2"}, want: 0},
		{name: "a key forgotten twice", forget: []string{"net-0", "net-0", "net-1", "net-2", "net-2"}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limiter := NewRateLimiter(time.Minute)
			for ns := range 100 {
				for i := range 3 {
					limiter.When(cache.ObjectName{Namespace: fmt.Sprintf("ns-%d", ns), Name: fmt.Sprintf("net-%d", i)})
				}
			}
			for ns := range 100 {
				for _, name := range tc.forget {
					limiter.Forget(cache.ObjectName{Namespace: fmt.Sprintf("ns-%d", ns), Name: name})
				}
			}
			if got := limiter.namespaces(); got != tc.want {
				t.Errorf("buckets held for %d namespaces, want %d", got, tc.want)
			}
		})
	}
}
