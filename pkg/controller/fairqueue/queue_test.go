package fairqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// key parses "namespace/name".
func key(s string) cache.ObjectName {
	ns, name, _ := strings.Cut(s, "/")
	return cache.ObjectName{Namespace: ns, Name: name}
}

// TestQueueServesNamespacesInTurn: Pop serves the namespaces with keys
// waiting round robin, each namespace's keys in the order they came. A
// step "ns/name" pushes that key; "-ns/name" pops and wants that key.
func TestQueueServesNamespacesInTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []string
	}{
		{"one namespace is a FIFO", []string{"a/1", "a/2", "a/3", "-a/1", "-a/2", "-a/3"}},
		{"a late namespace waits for one key of the one before it",
			[]string{"a/1", "a/2", "a/3", "b/1", "-a/1", "-b/1", "-a/2", "-a/3"}},
		{"three namespaces take turns in the order they came",
			[]string{"a/1", "a/2", "b/1", "b/2", "c/1", "-a/1", "-b/1", "-c/1", "-a/2", "-b/2"}},
		{"a namespace served goes to the back of the turns",
			[]string{"a/1", "a/2", "-a/1", "b/1", "-a/2", "-b/1"}},
		{"a namespace emptied and back takes a new turn at the back",
			[]string{"a/1", "b/1", "b/2", "-a/1", "a/2", "-b/1", "-a/2", "-b/2"}},
		{"pushes between pops keep each namespace's order",
			[]string{"a/1", "-a/1", "a/2", "b/1", "a/3", "-a/2", "-b/1", "-a/3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			waiting := 0
			for i, step := range tc.steps {
				if want, ok := strings.CutPrefix(step, "-"); ok {
					if got := q.Pop(); got != key(want) {
						t.Fatalf("step %d: Pop = %s, want %s", i, got, want)
					}
					waiting--
				} else {
					q.Push(key(step))
					waiting++
				}
				if q.Len() != waiting {
					t.Fatalf("step %d: Len = %d, want %d", i, q.Len(), waiting)
				}
			}
		})
	}
}

// TestNamespacesAreDropped: a namespace's FIFO lives only while the
// namespace has keys waiting, so the Queue does not grow with every
// namespace it has seen.
func TestNamespacesAreDropped(t *testing.T) {
	q := NewQueue()
	for i := range 1000 {
		q.Push(cache.ObjectName{Namespace: fmt.Sprintf("ns-%d", i), Name: "net"})
		q.Push(cache.ObjectName{Namespace: "busy", Name: fmt.Sprintf("net-%d", i)})
	}
	if got := q.namespaces(); got != 1001 {
		t.Fatalf("%d namespaces with keys waiting, want 1001", got)
	}
	for range 1000 {
		q.Pop()
	}
	// Served in turn: ns-0, busy, then ns-1 to ns-998 (busy waits at the
	// back of the turns), each of those emptied.
	if got := q.namespaces(); got != 2 {
		t.Errorf("after 1,000 pops, %d namespaces with keys waiting, want 2 (ns-999 and busy)", got)
	}
	for q.Len() > 0 {
		q.Pop()
	}
	if got := q.namespaces(); got != 0 {
		t.Errorf("emptied, the Queue still holds %d namespaces", got)
	}
	if got := q.Pop(); got != (cache.ObjectName{}) {
		t.Errorf("Pop of an empty Queue = %s, want the zero key", got)
	}
}

// TestTheWorkQueueKeepsItsGuarantees: the work queue QueueConfig makes
// hands keys out in the Queue's turns, and still dedups (a key added
// again while it waits keeps its place: Touch does not move it) and
// hands a key to one worker at a time (added while it is being synced,
// it is queued again at Done, at the back of its namespace's FIFO).
func TestTheWorkQueueKeepsItsGuarantees(t *testing.T) {
	for _, tc := range []struct {
		name string
		// steps, in order: "ns/name" adds that key, "get ns/name" gets the
		// next key, which must be that one, "done ns/name" marks it done.
		steps []string
		want  []string // the keys then handed out, in order
	}{
		{"namespaces take turns", []string{"a/1", "a/2", "a/3", "b/1"}, []string{"a/1", "b/1", "a/2", "a/3"}},
		{"a key added again keeps its place", []string{"a/1", "a/2", "b/1", "a/1", "a/2"}, []string{"a/1", "b/1", "a/2"}},
		{"a key added while it is synced comes back after Done",
			[]string{"a/1", "a/2", "get a/1", "a/1", "done a/1"}, []string{"a/2", "a/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueueWithConfig(NewRateLimiter(0), QueueConfig(""))
			defer q.ShutDown()
			for _, step := range tc.steps {
				switch verb, k, _ := strings.Cut(step, " "); verb {
				case "get":
					if got, _ := q.Get(); got != key(k) {
						t.Fatalf("%s: Get = %s", step, got)
					}
				case "done":
					q.Done(key(k))
				default:
					q.Add(key(step))
				}
			}
			var got []string
			for q.Len() > 0 {
				k, _ := q.Get()
				got = append(got, k.String())
				q.Done(k)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("handed out %q, want %q", got, tc.want)
			}
		})
	}
}
