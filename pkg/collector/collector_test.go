package collector

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	"github.com/samplecrd/network-controller/pkg/reconcile"
)

const gone = types.UID("9e9e9e9e-0000-4000-8000-000000000009")

// project answers every collection with outcome, and records the calls.
type project struct {
	outcome reconcile.Outcome
	calls   []string
}

func (p *project) CollectOrphans(_ context.Context, uid types.UID, cached bool) reconcile.Outcome {
	p.calls = append(p.calls, map[bool]string{true: "CollectOrphans cached", false: "CollectOrphans uncached"}[cached])
	return p.outcome
}

var (
	own    = credential{}
	letGo  = credential{"default/cloud/team"}
	capped = reconcile.Outcome{Events: []reconcile.Event{{Type: corev1.EventTypeWarning, Reason: "OrphanCollectionCapped",
		Regarding: &corev1.ObjectReference{Kind: "Namespace", Name: "default"}}}}
)

func TestTheCollectorsSync(t *testing.T) {
	for _, tc := range []struct {
		name         string
		key          Key[credential]
		cached       bool
		outcome      reconcile.Outcome
		fenced       bool
		wantCalls    []string
		wantEvents   []string
		wantRequeues int
	}{
		{name: "an orphan of a project no longer held: let go, its next list sights it again", key: Key[credential]{Tenant: letGo, UID: gone}},
		{name: "an orphan: CollectOrphans, told the Network is not cached; its Event goes on the namespace",
			key: Key[credential]{UID: gone}, outcome: capped, wantCalls: []string{"CollectOrphans uncached"}, wantEvents: []string{"Warning OrphanCollectionCapped"}},
		{name: "the UID of a Network still in the cache: CollectOrphans says so",
			key: Key[credential]{UID: gone}, cached: true, wantCalls: []string{"CollectOrphans cached"}},
		{name: "a collection that failed: retried with backoff",
			key: Key[credential]{UID: gone}, outcome: reconcile.Outcome{Requeue: reconcile.AddRateLimited, Err: errors.New("down")},
			wantCalls: []string{"CollectOrphans uncached"}, wantRequeues: 1},
		{name: "a replica that cannot prove it leads records no Event, and retries",
			key: Key[credential]{UID: gone}, outcome: capped, fenced: true, wantCalls: []string{"CollectOrphans uncached"}, wantRequeues: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &project{outcome: tc.outcome}
			recorder := record.NewFakeRecorder(10)
			var fence func() error
			if tc.fenced {
				fence = func() error { return errors.New("the Lease was last renewed 12s ago") }
			}
			c := New(Options[credential]{
				Project:  func(k credential) (Project, bool) { return p, k == own },
				Cached:   func(types.UID) bool { return tc.cached },
				Recorder: recorder, Fence: fence, MaxRetryDelay: time.Minute,
			})
			_, ctx := ktesting.NewTestContext(t)
			c.Enqueue(tc.key.Tenant, tc.key.UID)
			c.processNextItem(ctx)
			if !slices.Equal(p.calls, tc.wantCalls) {
				t.Errorf("calls %q, want %q", p.calls, tc.wantCalls)
			}
			if got := events(recorder); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %q, want %q", got, tc.wantEvents)
			}
			if got := c.queue.NumRequeues(tc.key); got != tc.wantRequeues {
				t.Errorf("NumRequeues = %d, want %d", got, tc.wantRequeues)
			}
		})
	}
}

// TestRunStopsWithItsContext: Run returns once ctx ends.
func TestRunStopsWithItsContext(t *testing.T) {
	c := New(Options[credential]{Project: func(credential) (Project, bool) { return nil, false }, MaxRetryDelay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c.Run(ctx, 2)
		close(done)
	}()
	c.Enqueue(own, gone)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func events(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			f := strings.Fields(e)
			out = append(out, strings.Join(f[:min(2, len(f))], " "))
		default:
			return out
		}
	}
}

// credential names a project, as pkg/tenancy's Key does.
type credential struct{ name string }

func (c credential) String() string { return c.name }
