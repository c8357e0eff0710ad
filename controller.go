package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	networkscheme "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v1"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/neutron"
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

	// unsyncedRefreshInterval is how often Neutron is listed while no list
	// has succeeded yet.
	unsyncedRefreshInterval = 5 * time.Second

	uidIndex = "uid"
)

// Options tune a Controller. The zero value is not useful: see main.go for
// the defaults.
type Options struct {
	// NeutronResyncPeriod is how often the Neutron inventory is listed
	// anew, which is how drift made outside the controller is noticed.
	NeutronResyncPeriod time.Duration
	// UntaggedGracePeriod is how old an untagged network named like ours
	// must be before it is adopted or deleted; younger ones may be a create
	// of this controller whose tag request is still under way.
	UntaggedGracePeriod time.Duration
	// Namespace, when not empty, is the only namespace whose Networks the
	// controller manages; Neutron resources of other namespaces are left
	// alone, even when they look orphaned from here.
	Namespace string
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

	// neutron is the cached view of what Neutron holds, written through
	// by our own changes.
	neutron *neutron.Inventory

	// workqueue holds the namespace/name of Networks to sync. It dedupes
	// (a key queued twice is synced once), never hands one key to two
	// workers at once, and rate-limits retries per key with exponential
	// backoff, so a failing Network cannot starve the others.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]

	// recorder writes Events to the API server, where `kubectl describe`
	// shows them.
	recorder record.EventRecorder

	opts Options
}

// NewController returns a controller that reconciles the Networks of
// networkInformer into Neutron through neutronClient.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	networkclientset clientset.Interface,
	networkInformer informers.NetworkInformer,
	neutronClient neutron.Interface,
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
		neutron:          neutron.NewInventory(neutronClient, opts.UntaggedGracePeriod),
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: queueName},
		),
		recorder: recorder,
		opts:     opts,
	}

	// The cache keeps only what the controller reads: managedFields (often
	// larger than the rest of a Network) and kubectl's last-applied copy are
	// dropped as objects arrive, before they are stored.
	if err := networkInformer.Informer().SetTransform(stripForCache); err != nil {
		return nil, fmt.Errorf("setting the informer transform: %w", err)
	}
	// An index by UID maps a Neutron resource, which knows only the UID of
	// its Network when its tags are missing, back to the Network.
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
		DeleteFunc: c.enqueueNetwork,
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
	c.refreshNeutron(ctx)
	go c.runNeutronRefresh(ctx)

	logger.Info("Starting workers", "count", workers)
	done := make(chan struct{}, workers)
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			wait.UntilWithContext(ctx, c.runWorker, time.Second)
		}()
	}
	logger.Info("Started workers")

	<-ctx.Done()
	// ShutDownWithDrain lets every worker finish the item it holds; then
	// Get returns shutdown and the workers return.
	c.workqueue.ShutDownWithDrain()
	for range workers {
		<-done
	}
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

// runNeutronRefresh lists Neutron every NeutronResyncPeriod, and every few
// seconds while no list has succeeded yet.
func (c *Controller) runNeutronRefresh(ctx context.Context) {
	for {
		interval := c.opts.NeutronResyncPeriod
		if !c.neutron.Synced() {
			interval = min(interval, unsyncedRefreshInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		c.refreshNeutron(ctx)
	}
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
// resources changed behind our back, and those whose resources have no
// Network any more (to be garbage-collected).
func (c *Controller) refreshNeutron(ctx context.Context) {
	logger := klog.FromContext(ctx)
	changed, err := c.neutron.Refresh(ctx)
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Listing Neutron failed; will retry", "retryIn", c.opts.NeutronResyncPeriod)
		return
	}
	for _, key := range changed {
		if ns, _, _ := cache.SplitMetaNamespaceKey(key); c.opts.Namespace == "" || ns == c.opts.Namespace {
			c.enqueueKey(key)
		}
	}
	orphans := 0
	for _, key := range c.neutron.Keys() {
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil || (c.opts.Namespace != "" && ns != c.opts.Namespace) {
			continue
		}
		if _, err := c.networksLister.Networks(ns).Get(name); apierrors.IsNotFound(err) {
			orphans++
			c.enqueueKey(key)
		}
	}
	// Untagged networks named like ours: their Network's sync adopts or
	// deletes them; those of no Network are deleted here.
	for uid, nets := range c.neutron.Untagged() {
		objs, err := c.networksByUID.ByIndex(uidIndex, string(uid))
		if err == nil && len(objs) > 0 {
			c.enqueueNetwork(objs[0])
			continue
		}
		for _, n := range nets {
			if err := c.neutron.DeleteNetwork(ctx, n); err != nil {
				utilruntime.HandleErrorWithContext(ctx, err, "Deleting an orphaned untagged Neutron network", "networkID", n.ID)
				continue
			}
			c.neutron.ForgetUntagged(uid, n.ID)
			orphans++
			logger.Info("Deleted orphaned untagged Neutron network", "networkID", n.ID, "uid", uid)
		}
	}
	logger.V(4).Info("Listed Neutron", "changed", len(changed), "orphans", orphans)
}

// runWorker processes the queue until it shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem syncs one key from the queue. A failed sync puts the
// key back with per-key exponential backoff; a successful one resets it.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	objRef, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Done tells the queue this worker no longer holds the key, so it may
	// be handed out again (it may have been re-added meanwhile).
	defer c.workqueue.Done(objRef)

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "objectRef", objRef)
	ctx = klog.NewContext(ctx, logger)

	start := time.Now()
	err := c.syncHandler(ctx, objRef)
	logger.V(4).Info("Finished syncing", "duration", time.Since(start), "error", err)
	var retryAfter retryAfterError
	switch {
	case err == nil:
		observeSync(resultSuccess, time.Since(start))
		c.workqueue.Forget(objRef)
	case errors.As(err, &retryAfter):
		// Not an error to back off from: come back after a fixed delay.
		observeSync(resultRejected, time.Since(start))
		c.workqueue.Forget(objRef)
		c.workqueue.AddAfter(objRef, retryAfter.after)
		logger.V(2).Info("Will retry later", "reason", err, "after", retryAfter.after)
	default:
		observeSync(resultError, time.Since(start))
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", objRef)
		c.workqueue.AddRateLimited(objRef)
	}
	return true
}

// enqueueNetwork queues the key of a Network (or of the tombstone the
// informer hands over when it missed a delete).
func (c *Controller) enqueueNetwork(obj any) {
	objRef, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(objRef)
}

func (c *Controller) enqueueKey(key string) {
	objRef, err := cache.ParseObjectName(key)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(objRef)
}

// retryAfterError asks for the key to be synced again after a fixed delay
// rather than with backoff.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e retryAfterError) Error() string { return e.err.Error() }
func (e retryAfterError) Unwrap() error { return e.err }
