package fairqueue

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// The limits of client-go's default controller rate limiter
// (workqueue.DefaultTypedControllerRateLimiter), which RateLimiter applies
// per namespace instead of to the whole queue.
const (
	// BaseDelay is a key's first retry delay, doubled at each failure.
	BaseDelay = 5 * time.Millisecond
	// QPS is the rate at which one namespace's failed keys are retried
	// once its burst is spent.
	QPS = 10
	// Burst is how many failed keys of one namespace are retried without
	// waiting for the bucket.
	Burst = 100
)

// RateLimiter is client-go's default controller rate limiter made fair
// across namespaces: a key's retry delay is the larger of its own
// exponential backoff (from BaseDelay, capped at the maximum delay) and
// what its namespace's token bucket (QPS, Burst) asks for.
//
// There is no bucket across namespaces: any total that one namespace can
// spend is a budget it can take from the others, which is what this type
// removes. What bounds the controller's load on Neutron as a whole is
// the worker count (--workers syncs at a time), and a namespace's load
// is bounded by its own bucket.
//
// A namespace's bucket lives only while the namespace has a failing key:
// it is made at the first When and dropped when Forget leaves none, so
// the limiter holds no more buckets than there are keys failing now (the
// per-key backoff holds as many entries). A namespace whose keys all
// succeed starts again with a full bucket, as a new namespace does.
//
// Keys are the queue's cache.ObjectName (namespace and name).
type RateLimiter struct {
	backoff workqueue.TypedRateLimiter[cache.ObjectName]

	mu sync.Mutex
	// buckets holds the bucket and the failing names of each namespace
	// with a failing key.
	buckets map[string]*namespaceBucket
}

// namespaceBucket is the retry budget of one namespace, and the names in
// it that have failed since they were last forgotten.
type namespaceBucket struct {
	limiter *rate.Limiter
	failing sets.Set[string]
}

var _ workqueue.TypedRateLimiter[cache.ObjectName] = (*RateLimiter)(nil)

// NewRateLimiter returns a RateLimiter whose per-key backoff is capped at
// maxDelay.
func NewRateLimiter(maxDelay time.Duration) *RateLimiter {
	return &RateLimiter{
		backoff: workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](BaseDelay, maxDelay),
		buckets: map[string]*namespaceBucket{},
	}
}

// When records a failure of key and returns how long to wait before it is
// retried.
func (r *RateLimiter) When(key cache.ObjectName) time.Duration {
	backoff := r.backoff.When(key)

	r.mu.Lock()
	b, ok := r.buckets[key.Namespace]
	if !ok {
		b = &namespaceBucket{limiter: rate.NewLimiter(QPS, Burst), failing: sets.New[string]()}
		r.buckets[key.Namespace] = b
	}
	b.failing.Insert(key.Name)
	bucket := b.limiter.Reserve().Delay()
	r.mu.Unlock()

	return max(backoff, bucket)
}

// Forget clears key's failures, and its namespace's bucket once no key of
// the namespace is failing.
func (r *RateLimiter) Forget(key cache.ObjectName) {
	r.backoff.Forget(key)

	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[key.Namespace]
	if !ok {
		return
	}
	b.failing.Delete(key.Name)
	if b.failing.Len() == 0 {
		delete(r.buckets, key.Namespace)
	}
}

// NumRequeues returns how many times key has failed since it was last
// forgotten.
func (r *RateLimiter) NumRequeues(key cache.ObjectName) int {
	return r.backoff.NumRequeues(key)
}

// namespaces returns how many namespaces hold a bucket.
func (r *RateLimiter) namespaces() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buckets)
}
