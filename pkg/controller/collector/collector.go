package collector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/controller/fairqueue"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// Key is one orphan: the Network UID its Neutron resources carry (their
// name in Neutron may be cut short, so the UID is the only exact handle),
// in the project of Tenant. P names a project (pkg/controller/tenancy's Key); the
// collector never looks inside it, only hands it back to Options.Project.
// Namespace is the Network's, which the queue is fair across; a UID has
// one, so it adds nothing to the key's identity.
type Key[P projectName] struct {
	Tenant    P
	Namespace string
	UID       types.UID
}

func (k Key[P]) String() string { return "uid " + string(k.UID) + " in " + k.Tenant.String() }

// namespace is the namespace whose turn and retry budget k takes.
func (k Key[P]) namespace() string { return k.Namespace }

// Project collects the orphans of one project: *Orphans, or a test's.
type Project interface {
	// Collect collects what Neutron holds for uid; cached says the
	// Network informer's cache still holds a Network of uid.
	Collect(ctx context.Context, uid types.UID, cached bool) reconcile.Outcome
}

// Options configure a Collector of projects named by P.
type Options[P projectName] struct {
	// Project returns the collection of key's project (its Orphans)
	// while it is held; once it is let go its lists stop, and a new one
	// sights the orphan anew when a Network names the project again.
	Project func(key P) (Project, bool)
	// Cached reports whether the Network informer's cache holds a
	// Network of uid.
	Cached func(uid types.UID) bool
	// Recorder writes the Events of a collection (on a namespace).
	Recorder record.EventRecorder
	// Fence, when set, is asked before any Event is written: a deposed
	// leader says nothing (pkg/component/leader's Fence.Check).
	Fence func() error
	// MaxRetryDelay caps the backoff of a collection that failed.
	MaxRetryDelay time.Duration
}

// projectName is what names a project (pkg/controller/tenancy's Key):
// comparable, to be a queue's key; printable, for the log; and the
// namespace that holds its credentials, "" for the controller's own.
type projectName interface {
	comparable
	fmt.Stringer
	Holder() string
}

// Collector drains a rate-limited queue of orphans with its own workers.
type Collector[P projectName] struct {
	opts  Options[P]
	queue workqueue.TypedRateLimitingInterface[Key[P]]
}

// New returns a Collector with an empty queue. The queue is the Network
// queue's kind (pkg/controller/fairqueue): each namespace has its own retry bucket
// and its own turn, so one namespace's orphans, however many fail or
// wait, do not delay another's.
func New[P projectName](opts Options[P]) *Collector[P] {
	return &Collector[P]{opts: opts, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		fairqueue.NewRateLimiterFor(opts.MaxRetryDelay, Key[P].namespace),
		fairqueue.QueueConfigFor("orphans", Key[P].namespace))}
}

// Enqueue queues the collection of what the project of tenant holds for
// uid, a Network of namespace.
func (c *Collector[P]) Enqueue(tenant P, namespace string, uid types.UID) {
	c.queue.Add(Key[P]{Tenant: tenant, Namespace: namespace, UID: uid})
}

// Sight hands the collector what a list of tenant's Neutron, begun at
// started, found without a Network in the informer's cache: o, that
// project's collection, sights them, and those in the controller's scope
// are queued. It returns how many.
//
// Each takes the turn and retry budget of the namespace that holds
// tenant's credentials: who holds them may write any name in its project,
// another namespace's Network's too. Only in the controller's own project
// (Holder ""), where only the controller writes, does a resource's name
// say whose it is.
func (c *Collector[P]) Sight(tenant P, o *Orphans, started time.Time, missing []types.UID) int {
	orphaned := o.Sight(started, missing)
	for _, uid := range orphaned {
		c.Enqueue(tenant, cmp.Or(tenant.Holder(), o.namespaceOf(uid)), uid)
	}
	return len(orphaned)
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
	out := p.Collect(ctx, key.UID, c.opts.Cached(key.UID))
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
