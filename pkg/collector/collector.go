// Package collector is the garbage collector of what Neutron holds for
// Networks that are gone: a small controller of its own, apart from the
// Network controller, as kube-controller-manager's garbage collector is
// apart from its ReplicaSet controller. Its queue holds orphans, by the
// UID their Neutron resources carry and the project they are in: the
// Network informer's delete events queue them, and so does every list of
// Neutron that finds resources without a Network in the cache. Its sync
// asks that project's reconciler to collect them, which decides when that
// is safe (pkg/reconcile/orphans.go).
//
// The collector is generic over P, what names a project: any comparable
// fmt.Stringer (the queue's key holds it, the log prints it). The
// controller's P is pkg/tenancy's Key; pkg/tenancy imports this package,
// so this package cannot name that type (test/layout's order).
package collector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/reconcile"
)

// Key is one orphan: the Network UID its Neutron resources carry (their
// namespace/name in Neutron may be cut short, so the UID is the only
// exact handle), in the project of Tenant. P names a project (pkg/tenancy's
// Key); the collector never looks inside it, only hands it back to
// Options.Project.
type Key[P projectName] struct {
	Tenant P
	UID    types.UID
}

func (k Key[P]) String() string { return "uid " + string(k.UID) + " in " + k.Tenant.String() }

// Project collects the orphans of one project: pkg/reconcile's Reconciler.
type Project interface {
	// CollectOrphans collects what Neutron holds for uid; cached says
	// the Network informer's cache still holds a Network of uid.
	CollectOrphans(ctx context.Context, uid types.UID, cached bool) reconcile.Outcome
}

// Options configure a Collector of projects named by P.
type Options[P projectName] struct {
	// Project returns the reconciler of key's project while it is
	// held; once it is let go its lists stop, and a new one sights the
	// orphan anew when a Network names the project again.
	Project func(key P) (Project, bool)
	// Cached reports whether the Network informer's cache holds a
	// Network of uid.
	Cached func(uid types.UID) bool
	// Recorder writes the Events of a collection (on a namespace).
	Recorder record.EventRecorder
	// Fence, when set, is asked before any Event is written: a deposed
	// leader says nothing (pkg/leader's Fence.Check).
	Fence func() error
	// MaxRetryDelay caps the backoff of a collection that failed.
	MaxRetryDelay time.Duration
}

// projectName is what names a project: comparable, to be a queue's key, and
// printable, for the log (pkg/tenancy's Key).
type projectName interface {
	comparable
	fmt.Stringer
}

// Collector drains a rate-limited queue of orphans with its own workers.
type Collector[P projectName] struct {
	opts  Options[P]
	queue workqueue.TypedRateLimitingInterface[Key[P]]
}

// New returns a Collector with an empty queue.
func New[P projectName](opts Options[P]) *Collector[P] {
	limiter := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[Key[P]](5*time.Millisecond, opts.MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[Key[P]]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
	return &Collector[P]{opts: opts, queue: workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[Key[P]]{Name: "orphans"})}
}

// Enqueue queues the collection of what the project of tenant holds for
// uid.
func (c *Collector[P]) Enqueue(tenant P, uid types.UID) {
	c.queue.Add(Key[P]{Tenant: tenant, UID: uid})
}

// Len is how many orphans wait in the queue.
func (c *Collector[P]) Len() int { return c.queue.Len() }

// Run collects with workers until ctx ends, then lets each finish its
// current orphan and returns. Collection is never urgent: one worker is
// enough, and leaves Neutron's capacity to the Networks being made.
func (c *Collector[P]) Run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		c.queue.ShutDownWithDrain()
	}()
	done := make(chan struct{}, workers)
	for range workers {
		go func() {
			for c.processNextItem(ctx) {
			}
			done <- struct{}{}
		}()
	}
	for range workers {
		<-done
	}
}

// processNextItem collects one orphan and puts it back as the collection
// says.
func (c *Collector[P]) processNextItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "orphan", key))
	requeue, after, err := c.sync(ctx, key)
	switch requeue {
	case reconcile.AddRateLimited:
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Collecting orphans failed; requeuing for later retry", "orphan", key)
		}
		c.queue.AddRateLimited(key)
	case reconcile.AddAfter:
		c.queue.Forget(key)
		c.queue.AddAfter(key, after)
	default:
		c.queue.Forget(key)
	}
	return true
}

// sync collects what Neutron holds for key, and records the Events the
// collection reports.
func (c *Collector[P]) sync(ctx context.Context, key Key[P]) (reconcile.Requeue, time.Duration, error) {
	p, ok := c.opts.Project(key.Tenant)
	if !ok {
		// Let go since it was queued: its lists stopped, and a new one,
		// when a Network asks for the project again, sights the orphan
		// anew.
		return reconcile.Forget, 0, nil
	}
	out := p.CollectOrphans(ctx, key.UID, c.opts.Cached(key.UID))
	if c.opts.Fence != nil {
		if err := c.opts.Fence(); err != nil {
			return reconcile.AddRateLimited, 0, errors.Join(out.Err, fmt.Errorf("not recording the collection's Events: %w", err))
		}
	}
	for _, e := range out.Events {
		var obj runtime.Object
		if e.Regarding != nil {
			obj = e.Regarding
		}
		if obj == nil {
			continue // an orphan has no Network to record on
		}
		c.opts.Recorder.Event(obj, e.Type, e.Reason, e.Message)
	}
	return out.Requeue, out.After, out.Err
}
