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
// Keys are of any type K whose namespace a function tells: the Network
// queue's cache.ObjectName (NewRateLimiter), the garbage collector's
// orphans (NewRateLimiterFor).
type RateLimiter[K comparable] struct {
	backoff   workqueue.TypedRateLimiter[K]
	namespace func(K) string

	mu sync.Mutex
	// buckets holds the bucket and the failing keys of each namespace
	// with a failing key.
	buckets map[string]*namespaceBucket[K]
}

// namespaceBucket is the retry budget of one namespace, and the keys in
// it that have failed since they were last forgotten.
type namespaceBucket[K comparable] struct {
	limiter *rate.Limiter
	failing sets.Set[K]
}

var _ workqueue.TypedRateLimiter[cache.ObjectName] = (*RateLimiter[cache.ObjectName])(nil)

// NewRateLimiter returns a RateLimiter of the Network queue's keys whose
// per-key backoff is capped at maxDelay.
func NewRateLimiter(maxDelay time.Duration) *RateLimiter[cache.ObjectName] {
	return NewRateLimiterFor(maxDelay, objectNamespace)
}

// NewRateLimiterFor returns a RateLimiter of keys whose namespace is
// namespace's, whose per-key backoff is capped at maxDelay.
func NewRateLimiterFor[K comparable](maxDelay time.Duration, namespace func(K) string) *RateLimiter[K] {
	return &RateLimiter[K]{
		backoff:   workqueue.NewTypedItemExponentialFailureRateLimiter[K](BaseDelay, maxDelay),
		namespace: namespace,
		buckets:   map[string]*namespaceBucket[K]{},
	}
}

// When records a failure of key and returns how long to wait before it is
// retried.
func (r *RateLimiter[K]) When(key K) time.Duration {
	backoff := r.backoff.When(key)

	r.mu.Lock()
	namespace := r.namespace(key)
	b, ok := r.buckets[namespace]
	if !ok {
		b = &namespaceBucket[K]{limiter: rate.NewLimiter(QPS, Burst), failing: sets.New[K]()}
		r.buckets[namespace] = b
	}
	b.failing.Insert(key)
	bucket := b.limiter.Reserve().Delay()
	r.mu.Unlock()

	return max(backoff, bucket)
}

// Forget clears key's failures, and its namespace's bucket once no key of
// the namespace is failing.
func (r *RateLimiter[K]) Forget(key K) {
	r.backoff.Forget(key)

	r.mu.Lock()
	defer r.mu.Unlock()
	namespace := r.namespace(key)
	b, ok := r.buckets[namespace]
	if !ok {
		return
	}
	b.failing.Delete(key)
	if b.failing.Len() == 0 {
		delete(r.buckets, namespace)
	}
}

// NumRequeues returns how many times key has failed since it was last
// forgotten.
func (r *RateLimiter[K]) NumRequeues(key K) int {
	return r.backoff.NumRequeues(key)
}

// namespaces returns how many namespaces hold a bucket.
func (r *RateLimiter[K]) namespaces() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buckets)
}
