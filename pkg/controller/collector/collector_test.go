package collector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

const goneUID = otherUID

// project answers every collection with outcome, and records the calls.
type project struct {
	outcome reconcile.Outcome
	calls   []string
}

func (p *project) Collect(_ context.Context, uid types.UID, cached bool) reconcile.Outcome {
	p.calls = append(p.calls, map[bool]string{true: "Collect cached", false: "Collect uncached"}[cached])
	return p.outcome
}

var (
	own    = credential{}
	letGo  = credential{name: "default/cloud/team", holder: "default"}
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
		{name: "an orphan of a project no longer held: let go, its next list sights it again", key: Key[credential]{Tenant: letGo, UID: goneUID}},
		{name: "an orphan: Collect, told the Network is not cached; its Event goes on the namespace",
			key: Key[credential]{UID: goneUID}, outcome: capped, wantCalls: []string{"Collect uncached"}, wantEvents: []string{"Warning OrphanCollectionCapped"}},
		{name: "the UID of a Network still in the cache: Collect says so",
			key: Key[credential]{UID: goneUID}, cached: true, wantCalls: []string{"Collect cached"}},
		{name: "a collection that failed: retried with backoff",
			key: Key[credential]{UID: goneUID}, outcome: reconcile.Outcome{Requeue: reconcile.AddRateLimited, Err: errors.New("down")},
			wantCalls: []string{"Collect uncached"}, wantRequeues: 1},
		{name: "a replica that cannot prove it leads records no Event, and retries",
			key: Key[credential]{UID: goneUID}, outcome: capped, fenced: true, wantCalls: []string{"Collect uncached"}, wantRequeues: 1},
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
			c.Enqueue(tc.key.Tenant, tc.key.Namespace, tc.key.UID)
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
	c.Enqueue(own, "default", goneUID)
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

// credential names a project, as pkg/controller/tenancy's Key does.
type credential struct{ name, holder string }

func (c credential) String() string { return c.name }
func (c credential) Holder() string { return c.holder }

// answering answers every collection with what answer says of its UID,
// and records the UIDs it was asked, in order.
type answering struct {
	answer func(uid types.UID) reconcile.Outcome
	asked  []types.UID
}

func (p *answering) Collect(_ context.Context, uid types.UID, _ bool) reconcile.Outcome {
	p.asked = append(p.asked, uid)
	return p.answer(uid)
}

// TestOneNamespacesOrphansDoNotDelayAnothers: the collector's queue is
// fair across namespaces, as the Network queue is (pkg/controller/fairqueue). With
// 1,000 orphans of namespace a queued, b's is served after at most one of
// a's; and with a's 1,000 failing, b's retry waits its own backoff, not
// a's spent budget (one shared 10/s bucket would hold it back a minute
// and a half).
func TestOneNamespacesOrphansDoNotDelayAnothers(t *testing.T) {
	const ofB = types.UID("b")
	ofA := func(i int) types.UID { return types.UID(fmt.Sprintf("a-%d", i)) }
	newCollector := func(p *answering) *Collector[credential] {
		return New(Options[credential]{
			Project:  func(credential) (Project, bool) { return p, true },
			Cached:   func(types.UID) bool { return false },
			Recorder: record.NewFakeRecorder(10), MaxRetryDelay: time.Minute,
		})
	}

	t.Run("waiting: b's orphan takes the next turn", func(t *testing.T) {
		p := &answering{answer: func(types.UID) reconcile.Outcome { return reconcile.Outcome{} }}
		c := newCollector(p)
		_, ctx := ktesting.NewTestContext(t)
		for i := range 1000 {
			c.Enqueue(own, "a", ofA(i))
		}
		c.Enqueue(own, "b", ofB)
		for range 2 {
			c.processNextItem(ctx)
		}
		if !slices.Contains(p.asked, ofB) {
			t.Errorf("collected %q first; want b's orphan among the first two, not behind a's 1,000", p.asked)
		}
	})

	t.Run("failing: b's retry is not behind a's 1,000", func(t *testing.T) {
		bTries := 0
		p := &answering{answer: func(uid types.UID) reconcile.Outcome {
			if uid == ofB {
				bTries++
				if bTries > 1 {
					return reconcile.Outcome{}
				}
			}
			return reconcile.Outcome{Requeue: reconcile.AddRateLimited}
		}}
		c := newCollector(p)
		_, ctx := ktesting.NewTestContext(t)
		for i := range 1000 {
			c.Enqueue(own, "a", ofA(i))
		}
		for range 1000 {
			c.processNextItem(ctx) // each of a's fails once: a's budget is spent
		}
		c.Enqueue(own, "b", ofB)
		deadline, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		go func() {
			<-deadline.Done()
			c.queue.ShutDown()
		}()
		for bTries < 2 && c.processNextItem(ctx) {
		}
		if bTries < 2 {
			t.Errorf("b's orphan failed once and was not retried within 10s: it waits behind a's failures")
		}
	})
}

// TestATenantsOrphansSpendItsOwnTurn: whoever holds a namespace's
// credentials may write any name in its project, the name of another
// namespace's Network too; the orphans sighted there take that
// namespace's turn and retry budget, not the one their names claim. Only
// in the controller's own project, where only the controller writes, do
// the names say whose they are.
func TestATenantsOrphansSpendItsOwnTurn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project credential
		want    string
	}{
		{"a namespace's project: the namespace whose credentials reach it", credential{name: "team-a/cloud/team", holder: "team-a"}, "team-a"},
		{"the controller's project: the namespace the name gives", own, gone.Namespace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, defaultConfig(), nil, nil, func(n *neutronfake.Neutron) {
				n.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1")
			})
			c := New(Options[credential]{MaxRetryDelay: time.Minute})
			defer c.queue.ShutDown()
			if n := c.Sight(tc.project, f.o, time.Now(), f.inv.UIDs()); n != 1 {
				t.Fatalf("%d orphans queued, want 1", n)
			}
			if key, _ := c.queue.Get(); key.Namespace != tc.want || key.UID != gone.UID {
				t.Errorf("queued %+v, want uid %s on namespace %q's turn", key, gone.UID, tc.want)
			}
		})
	}
}
