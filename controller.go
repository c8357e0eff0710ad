package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	networkscheme "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v1"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/metrics"
	"github.com/samplecrd/network-controller/pkg/neutron"
	"github.com/samplecrd/network-controller/pkg/orphans"
)

const (
	// controllerAgentName names the controller in Events and as the field
	// manager of everything it writes through server-side apply.
	controllerAgentName = "network-controller"

	// queueName names the work queue in the workqueue_* metrics.
	queueName = "networks"

	// rejectedRetryInterval is how long a Network that Neutron refused waits
	// before it is tried again unchanged (a change to it retries at once):
	// the refusal may have been caused by something else, e.g. an
	// overlapping Network that has since been deleted.
	rejectedRetryInterval = 5 * time.Minute

	// unsyncedRefreshInterval is how often Neutron is listed while the
	// latest list failed.
	unsyncedRefreshInterval = 5 * time.Second

	// uidIndex indexes Networks by UID, which is how a Neutron resource
	// names its owner.
	uidIndex = "uid"
)

// Options tune a Controller. The zero value is not useful: see main.go for
// the defaults.
type Options struct {
	// NeutronResyncPeriod is how often the Neutron inventory is listed
	// anew, which is how drift made outside the controller is noticed.
	NeutronResyncPeriod time.Duration
	// LateCompletionGrace is how long a Neutron request whose answer was
	// lost may still complete in Neutron (a request timeout is enough).
	// The inventory is listed again this long after start and after any
	// such request, so a create that completed late is seen, and its
	// duplicate removed, then rather than at the next periodic list.
	LateCompletionGrace time.Duration
	// MaxRetryDelay caps the per-key exponential backoff of failed syncs:
	// Neutron unavailable, over quota, or a delete blocked by ports. It is
	// how long, at most, a Network waits to notice that the cause is gone.
	MaxRetryDelay time.Duration
	// Namespace, when not empty, is the only namespace whose Networks the
	// controller manages; Neutron resources of other namespaces are left
	// alone, even when they look orphaned from here.
	Namespace string
	// AdoptionNamespaces are the namespaces whose Networks may adopt an
	// existing Neutron network (spec.adopt); "*" allows every namespace.
	// Adoption takes a resource the controller did not make, so it is a
	// cluster administrator's to allow, not every Network author's.
	AdoptionNamespaces []string
	// CollectOrphans turns the collection of Neutron resources whose
	// Network is gone on; off, they are only counted.
	CollectOrphans bool
	// OrphanGracePeriod is how long a resource must have been seen
	// orphaned, by two lists of Neutron, before it is collected.
	OrphanGracePeriod time.Duration
	// MaxOrphansPerList caps the orphans collected per list of Neutron.
	MaxOrphansPerList int
	// Clock is the real clock when nil.
	Clock clock.WithTickerAndDelayedExecution
}

// adoptionAllowed reports whether Networks of namespace may adopt.
func (o Options) adoptionAllowed(namespace string) bool {
	return slices.Contains(o.AdoptionNamespaces, "*") || slices.Contains(o.AdoptionNamespaces, namespace)
}

// Controller keeps Neutron equal to the declared Networks. It is the
// controller of kubernetes/sample-controller: an informer's event handlers
// put keys on a rate-limited work queue, and workers take them off and call
// syncHandler, which compares desired and actual state and acts.
type Controller struct {
	// kubeclientset talks to the core API (Events).
	kubeclientset kubernetes.Interface
	// networkclientset talks to the samplecrd.k8s.io API.
	networkclientset clientset.Interface

	// networksLister reads Networks from the informer's Indexer: a local,
	// eventually consistent copy of the API server's state. Objects it
	// returns are shared with the cache and must never be modified.
	networksLister listers.NetworkLister
	networksSynced cache.InformerSynced
	// networksByUID is the informer's Indexer, with an index by UID.
	networksByUID cache.Indexer

	// neutron makes the requests; inventory is the cached view of what
	// Neutron holds under our mark, in which our own writes are recorded.
	neutron   neutron.Interface
	inventory *neutron.Inventory
	mark      neutron.Mark
	// refreshSoon asks the refresh loop for an extra list (see
	// Options.LateCompletionGrace).
	refreshSoon chan struct{}
	// neutronUp is the circuit breaker that makes syncs fail fast while
	// Neutron is known to be down.
	neutronUp breaker
	// orphans decides when a resource whose Network is gone may go, and
	// listStarted is when the latest successful list of Neutron began.
	orphans     *orphans.Tracker
	clock       clock.WithTickerAndDelayedExecution
	listMu      sync.Mutex
	listStarted time.Time

	// workqueue holds the Networks to sync, and the UIDs of Neutron
	// resources whose Network is gone. It dedupes (a key queued twice is
	// synced once), never hands one key to two workers at once, and
	// rate-limits retries per key with exponential backoff, so a failing
	// Network cannot starve the others.
	workqueue workqueue.TypedRateLimitingInterface[queueKey]

	// recorder writes Events to the API server, where `kubectl describe`
	// shows them.
	recorder record.EventRecorder

	opts Options
}

// NewController returns a controller that reconciles the Networks of
// networkInformer into Neutron through neutronClient, marking what it
// creates, and touching only what carries, with mark.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	networkclientset clientset.Interface,
	networkInformer informers.NetworkInformer,
	neutronClient neutron.Interface,
	mark neutron.Mark,
	opts Options,
) (*Controller, error) {
	logger := klog.FromContext(ctx)

	// Events of our own type need our scheme to name the object's kind.
	utilruntime.Must(networkscheme.AddToScheme(scheme.Scheme))
	eventBroadcaster := record.NewBroadcaster(record.WithContext(ctx))
	eventBroadcaster.StartStructuredLogging(0)
	eventBroadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeclientset.CoreV1().Events("")})
	recorder := eventBroadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})

	c := &Controller{
		kubeclientset:    kubeclientset,
		networkclientset: networkclientset,
		networksLister:   networkInformer.Lister(),
		networksSynced:   networkInformer.Informer().HasSynced,
		neutron:          neutronClient,
		inventory:        neutron.NewInventory(neutronClient, mark),
		mark:             mark,
		refreshSoon:      make(chan struct{}, 1),
		orphans:          orphans.New(opts.OrphanGracePeriod, opts.MaxOrphansPerList),
		clock:            cmp.Or[clock.WithTickerAndDelayedExecution](opts.Clock, clock.RealClock{}),
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			rateLimiter(opts.MaxRetryDelay),
			workqueue.TypedRateLimitingQueueConfig[queueKey]{Name: queueName},
		),
		recorder: recorder,
		opts:     opts,
	}
	c.neutronUp.clock = c.clock

	// The cache keeps only what the controller reads: managedFields (often
	// larger than the rest of a Network) and kubectl's last-applied copy are
	// dropped as objects arrive, before they are stored.
	if err := networkInformer.Informer().SetTransform(stripForCache); err != nil {
		return nil, fmt.Errorf("setting the informer transform: %w", err)
	}
	// An index by UID maps a Neutron resource, which names its Network by
	// UID (its namespace/name in Neutron may be cut short), back to it.
	if err := networkInformer.Informer().AddIndexers(cache.Indexers{uidIndex: func(obj any) ([]string, error) {
		return []string{string(obj.(*samplecrdv1.Network).UID)}, nil
	}}); err != nil {
		return nil, fmt.Errorf("adding the UID index: %w", err)
	}
	c.networksByUID = networkInformer.Informer().GetIndexer()

	logger.Info("Setting up event handlers")
	// Level-triggered: every notification, whatever it says changed, only
	// queues the key, and the sync looks at the whole current state. The
	// informer's periodic resync re-delivers every object as an update, so
	// every Network is checked against the (cached) Neutron state
	// regularly even when nothing happens.
	if _, err := networkInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueNetwork,
		UpdateFunc: func(old, new any) {
			if needsSync(old.(*samplecrdv1.Network), new.(*samplecrdv1.Network)) {
				c.enqueueNetwork(new)
			}
		},
		// A Network that is gone is also queued by UID: should anything of
		// it remain in Neutron (its finalizer was removed by hand), that
		// sync collects it.
		DeleteFunc: func(obj any) {
			c.enqueueNetwork(obj)
			if n, ok := deletedNetwork(obj); ok {
				c.enqueueOrphan(n.UID)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("registering event handlers: %w", err)
	}
	return c, nil
}

// Run waits for the informer's cache to fill and for a first list of
// Neutron, then starts workers that process the queue until ctx ends. It
// returns once every worker has finished its current item.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)

	logger.Info("Starting Network controller")
	logger.Info("Waiting for informer caches to sync")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.networksSynced); !ok {
		return errors.New("failed to wait for caches to sync")
	}

	// Neutron is listed once before the workers start, so that a normal
	// start finds the inventory ready, then on a period. Workers start even
	// if the first list fails: their syncs then report NeutronUnavailable.
	// One more list comes a grace period after start: a predecessor that
	// died may have left a create in flight.
	c.refreshNeutron(ctx)
	c.requestRefreshAfter(c.opts.LateCompletionGrace)
	go c.runNeutronRefresh(ctx)

	logger.Info("Starting workers", "count", workers)
	var running wait.Group
	for range workers {
		running.StartWithContext(ctx, func(ctx context.Context) {
			wait.UntilWithContext(ctx, c.runWorker, time.Second)
		})
	}
	logger.Info("Started workers")

	<-ctx.Done()
	// ShutDownWithDrain lets every worker finish the item it holds; then
	// Get returns shutdown and the workers return.
	c.workqueue.ShutDownWithDrain()
	running.Wait()
	logger.Info("Shut down workers")
	return nil
}

// stripForCache is the informer's transform: it runs on every object
// before the Indexer stores it (and may modify it: the object is fresh from
// the decoder).
func stripForCache(obj any) (any, error) {
	if n, ok := obj.(*samplecrdv1.Network); ok {
		n.ManagedFields = nil
		delete(n.Annotations, corev1.LastAppliedConfigAnnotation)
	}
	return obj, nil
}

// runNeutronRefresh lists Neutron every NeutronResyncPeriod, every few
// seconds while the latest list failed, and when requestRefreshAfter asks.
func (c *Controller) runNeutronRefresh(ctx context.Context) {
	for {
		interval := c.opts.NeutronResyncPeriod
		if st := c.inventory.Status(); !st.Synced || st.Err != nil || c.neutronUp.isOpen() {
			// The list is also the breaker's probe.
			interval = min(interval, unsyncedRefreshInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		case <-c.refreshSoon:
		}
		c.refreshNeutron(ctx)
	}
}

// requestRefreshAfter asks for one extra list of Neutron after d.
func (c *Controller) requestRefreshAfter(d time.Duration) {
	c.clock.AfterFunc(d, func() {
		select {
		case c.refreshSoon <- struct{}{}:
		default: // one is already pending
		}
	})
}

// needsSync filters update notifications. Resyncs (the same
// resourceVersion), spec changes (a new generation) and the start of a
// deletion are synced. Everything else — above all the controller's own
// status and finalizer writes coming back — changes nothing a sync acts on,
// and syncing it would only cost a pass through the queue.
func needsSync(old, new *samplecrdv1.Network) bool {
	return old.ResourceVersion == new.ResourceVersion ||
		old.Generation != new.Generation ||
		!old.DeletionTimestamp.Equal(new.DeletionTimestamp)
}

// refreshNeutron lists Neutron anew and queues the Networks whose Neutron
// resources changed behind our back, and the UIDs of resources that have no
// Network any more. It only reads: every write, garbage collection
// included, is a worker's, so no two writers ever act on one Network.
func (c *Controller) refreshNeutron(ctx context.Context) {
	started := c.clock.Now()
	changed, err := c.inventory.Refresh(ctx)
	metrics.ObserveRefresh(err, c.inventory.Status().Unrecognised)
	if err != nil {
		if neutron.Unreachable(err) {
			c.neutronUp.trip()
		}
		utilruntime.HandleErrorWithContext(ctx, err, "Listing Neutron failed; will retry")
		return
	}
	if c.neutronUp.resetAfter(started) {
		// Neutron answers again: whatever waited on it goes now, not at
		// the end of its backoff.
		klog.FromContext(ctx).Info("Neutron answers again; syncing every Network")
		c.enqueueAll()
	}
	for _, uid := range changed {
		if n, ok := c.networkByUID(uid); ok {
			c.enqueueNetwork(n)
		}
	}
	var orphaned []types.UID
	for _, uid := range c.inventory.UIDs() {
		if _, ok := c.networkByUID(uid); !ok && c.manages(c.inventory.Get(uid).Owner) {
			orphaned = append(orphaned, uid)
			c.enqueueOrphan(uid)
		}
	}
	c.listMu.Lock()
	c.listStarted = started
	c.listMu.Unlock()
	if len(c.orphans.NewList(started, orphaned)) > 0 {
		// A second sighting is due one grace period from now.
		c.requestRefreshAfter(c.opts.OrphanGracePeriod)
	}
	klog.FromContext(ctx).V(4).Info("Listed Neutron", "changed", len(changed), "orphans", len(orphaned))
}

// enqueueAll queues every Network in the cache.
func (c *Controller) enqueueAll() {
	for _, obj := range c.networksByUID.List() {
		c.enqueueNetwork(obj)
	}
}

// networkByUID returns the Network of uid from the informer's cache.
func (c *Controller) networkByUID(uid types.UID) (*samplecrdv1.Network, bool) {
	objs, err := c.networksByUID.ByIndex(uidIndex, string(uid))
	if err != nil || len(objs) == 0 {
		return nil, false
	}
	return objs[0].(*samplecrdv1.Network), true
}

// manages reports whether owner's Network is in the controller's scope
// (--namespace). A controller limited to one namespace cannot see the
// Networks of others, so their resources must not look orphaned to it.
func (c *Controller) manages(owner neutron.Owner) bool {
	return c.opts.Namespace == "" || owner.Namespace == c.opts.Namespace
}

// runWorker processes the queue until it shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// rateLimiter is client-go's default controller rate limiter — per-key
// exponential backoff from 5ms, and an overall 10 qps bucket — with the
// backoff capped at maxDelay instead of 1000s, so that a Network waiting
// on a quota or on ports is retried often enough to notice they changed.
func rateLimiter(maxDelay time.Duration) workqueue.TypedRateLimiter[queueKey] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[queueKey](5*time.Millisecond, maxDelay),
		&workqueue.TypedBucketRateLimiter[queueKey]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// processNextWorkItem syncs one key from the queue and puts it back as
// retryPolicy says.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Done tells the queue this worker no longer holds the key, so it may
	// be handed out again (it may have been re-added meanwhile).
	defer c.workqueue.Done(key)

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "key", key)
	ctx = klog.NewContext(ctx, logger)

	start := time.Now()
	err := c.syncHandler(ctx, key)
	logger.V(4).Info("Finished syncing", "duration", time.Since(start), "error", err)
	retry, after := retryPolicy(err)
	switch retry {
	case noRetry:
		metrics.ObserveSync(metrics.ResultSuccess, time.Since(start))
		c.workqueue.Forget(key)
	case noRetryUntilChanged:
		metrics.ObserveSync(metrics.ResultInvalid, time.Since(start))
		c.workqueue.Forget(key)
		logger.V(2).Info("Waiting for the spec to change", "reason", err)
	case retryAfterDelay:
		metrics.ObserveSync(metrics.ResultRejected, time.Since(start))
		c.workqueue.Forget(key)
		c.workqueue.AddAfter(key, after)
		logger.V(2).Info("Will retry later", "reason", err, "after", after)
	case retryWithBackoff:
		metrics.ObserveSync(metrics.ResultError, time.Since(start))
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "key", key)
		c.workqueue.AddRateLimited(key)
	}
	return true
}

// retry is how a key goes back on the queue after a sync.
type retry int

const (
	// noRetry: the sync succeeded; the key's backoff is reset.
	noRetry retry = iota
	// noRetryUntilChanged: the spec is one Neutron would refuse; only a
	// change to it, which queues the key again, can help.
	noRetryUntilChanged
	// retryAfterDelay: nothing will change by retrying soon (Neutron
	// refused the request); the key comes back after a fixed delay, or
	// at once when the Network changes.
	retryAfterDelay
	// retryWithBackoff: the failure may pass (Neutron unreachable, a
	// conflict); the key comes back with per-key exponential backoff.
	retryWithBackoff
)

// retryPolicy decides how the key of a sync that returned err is retried.
func retryPolicy(err error) (retry, time.Duration) {
	var after retryAfterError
	switch {
	case err == nil:
		return noRetry, 0
	case errors.Is(err, errSpecMustChange):
		return noRetryUntilChanged, 0
	case errors.As(err, &after):
		return retryAfterDelay, after.after
	default:
		return retryWithBackoff, 0
	}
}

// queueKey is what the work queue holds: a Network by namespace/name, or,
// with only OrphanUID set, the Neutron resources of a Network that is gone,
// by the UID they carry (their namespace/name in Neutron may be cut short,
// so the UID is the only exact handle).
type queueKey struct {
	cache.ObjectName
	OrphanUID types.UID
}

func (k queueKey) String() string {
	if k.OrphanUID != "" {
		return "orphans of uid " + string(k.OrphanUID)
	}
	return k.ObjectName.String()
}

// enqueueNetwork queues the key of a Network (or of the tombstone the
// informer hands over when it missed a delete).
func (c *Controller) enqueueNetwork(obj any) {
	objRef, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(queueKey{ObjectName: objRef})
}

// enqueueOrphan queues the collection of what Neutron holds for uid.
func (c *Controller) enqueueOrphan(uid types.UID) {
	c.workqueue.Add(queueKey{OrphanUID: uid})
}

// deletedNetwork returns the Network a delete notification is about.
func deletedNetwork(obj any) (*samplecrdv1.Network, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	n, ok := obj.(*samplecrdv1.Network)
	return n, ok
}

// errSpecMustChange ends a sync that stopped at a spec Neutron would
// refuse: the key is not retried, and the sync is counted as invalid.
var errSpecMustChange = errors.New("the spec must change")

// retryAfterError asks for the key to be synced again after a fixed delay
// rather than with backoff.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e retryAfterError) Error() string { return e.err.Error() }
func (e retryAfterError) Unwrap() error { return e.err }
