package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/events"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/component/tracing"
	"github.com/samplecrd/network-controller/pkg/controller/configmap"
	"github.com/samplecrd/network-controller/pkg/controller/fairqueue"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	networkscheme "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v2"
)

const (
	// controllerAgentName names the controller in Events and as the field
	// manager of everything it writes through server-side apply.
	controllerAgentName = "network-controller"

	// queueName names the work queue in the workqueue_* metrics.
	queueName = "networks"
)

// Options tune a Controller; pkg/controller/options has the flags' defaults.
type Options struct {
	// MaxRetryDelay caps the per-key exponential backoff of failed syncs:
	// Neutron unavailable, over quota, or a delete blocked by ports. It is
	// how long, at most, a Network waits to notice that the cause is gone.
	MaxRetryDelay time.Duration
	// EventLimit bounds the Events all Networks together write (none when
	// zero): --event-qps and --event-burst.
	EventLimit events.Limit
	// Tracer starts the span of each sync (pkg/component/tracing); nil starts none.
	Tracer trace.Tracer
}

// Reconciler makes Neutron match one Network per call, and says what it
// did in an Outcome that the controller writes down: pkg/controller/reconcile has the
// controller's, the tests a small fake.
type Reconciler interface {
	// Preflight refuses what cannot be reconciled now, before the
	// finalizer goes on; ok says Reconcile may go on.
	Preflight(network *samplecrdv2.Network) (_ reconcile.Outcome, ok bool)
	// Reconcile makes Neutron match network.
	Reconcile(ctx context.Context, network *samplecrdv2.Network) reconcile.Outcome
	// Delete deletes or releases network's Neutron resources; the
	// Outcome is Finalized when the finalizer may go.
	Delete(ctx context.Context, network *samplecrdv2.Network) reconcile.Outcome
}

// Projects finds the OpenStack project a Network lives in (the
// controller's own, or the one its namespace's credentials name) and the
// Reconciler that acts there: pkg/controller/tenancy, which also runs each project's
// Neutron informer and the garbage collector of its orphans.
type Projects interface {
	// Start waits for the policy's caches, lists Neutron in the controller's
	// own project, then returns; from then on every list of a project, and
	// every change of a namespace's grants, enqueues the Networks it concerns.
	Start(ctx context.Context, enqueue func(obj any)) error
	// For returns the Reconciler of network's project, or an error: a
	// *reconcile.NotAllowedError when its namespace is not granted what it
	// names, a *neutron.CredentialsError when its credentials cannot be used.
	For(ctx context.Context, network *samplecrdv2.Network) (Reconciler, error)
}

// Controller keeps Neutron equal to the declared Networks. It is the
// controller of kubernetes/sample-controller: an informer's event handlers
// put keys on a rate-limited work queue, and workers take them off and call
// syncHandler, which compares desired and actual state and acts.
type Controller struct {
	// networkclientset talks to the samplecrd.k8s.io API.
	networkclientset clientset.Interface

	// networksLister reads Networks from the informer's Indexer: a local,
	// eventually consistent copy of the API server's state. Objects it
	// returns are shared with the cache and must never be modified.
	networksLister listers.NetworkLister
	networksSynced cache.InformerSynced
	// configMapsSynced and configMaps are for the objects the controller
	// owns, the ConfigMaps Networks publish into (pkg/controller/configmap).
	configMapsSynced cache.InformerSynced
	configMaps       configmap.Publisher

	// projects hand each Network the reconciler of its OpenStack project.
	projects Projects

	// workqueue holds the Networks to sync, by namespace/name: deduped,
	// one worker per key, retries rate-limited per key, namespaces served
	// in turn.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]

	// recorder writes Events, which `kubectl describe` shows.
	recorder record.EventRecorder
	// tracer starts the span of each sync.
	tracer trace.Tracer
}

// NewController returns a controller that reconciles the Networks of
// networkInformer into Neutron, each with its project's reconciler.
func NewController(
	ctx context.Context,
	kubeclientset kubernetes.Interface,
	networkclientset clientset.Interface,
	networkInformer informers.NetworkInformer,
	configMapInformer coreinformers.ConfigMapInformer,
	projects Projects,
	opts Options,
) (*Controller, error) {
	logger := klog.FromContext(ctx)

	// Events of our own type need our scheme to name the object's kind.
	utilruntime.Must(networkscheme.AddToScheme(scheme.Scheme))
	eventBroadcaster := events.NewBroadcaster(ctx, kubeclientset, opts.EventLimit, metrics.EventsDropped.Inc)
	eventBroadcaster.StartStructuredLogging(0)
	recorder := eventBroadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})

	c := &Controller{
		networkclientset: networkclientset,
		networksLister:   networkInformer.Lister(),
		networksSynced:   networkInformer.Informer().HasSynced,
		configMapsSynced: configMapInformer.Informer().HasSynced,
		configMaps: configmap.Publisher{Client: kubeclientset.CoreV1(), Lister: configMapInformer.Lister(),
			FieldManager: controllerAgentName, Recorder: recorder},
		projects: projects,
		// Retries back off per key, capped at MaxRetryDelay; each namespace
		// has its own 10/s bucket and FIFO, served in turn, so that one
		// namespace's failures or backlog delay only its own (chapter 3).
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			fairqueue.NewRateLimiter(opts.MaxRetryDelay), fairqueue.QueueConfig(queueName)),
		recorder: recorder,
		tracer:   cmp.Or[trace.Tracer](opts.Tracer, noop.Tracer{}),
	}

	// The cache keeps only what the controller reads: managedFields (often
	// larger than the rest of a Network) and kubectl's last-applied copy are
	// dropped as objects arrive, before they are stored.
	if err := networkInformer.Informer().SetTransform(stripForCache); err != nil {
		return nil, fmt.Errorf("setting the informer transform: %w", err)
	}

	logger.Info("Setting up event handlers")
	// Level-triggered: every notification only queues the key, and the
	// sync looks at the whole current state.
	if _, err := networkInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueNetwork,
		UpdateFunc: func(old, new any) {
			if needsSync(old.(*samplecrdv2.Network), new.(*samplecrdv2.Network)) {
				c.enqueueNetwork(new)
			}
		},
		DeleteFunc: c.enqueueNetwork,
	}); err != nil {
		return nil, fmt.Errorf("registering event handlers: %w", err)
	}
	// The owned objects: a ConfigMap a Network controls that changes or
	// goes queues that Network, which repairs it (chapter 9).
	if err := configMapInformer.Informer().SetTransform(configmap.StripForCache); err != nil {
		return nil, fmt.Errorf("setting the ConfigMap informer transform: %w", err)
	}
	if _, err := configMapInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.handleObject,
		UpdateFunc: func(old, new any) {
			if old.(*corev1.ConfigMap).ResourceVersion != new.(*corev1.ConfigMap).ResourceVersion {
				c.handleObject(new)
			}
		},
		DeleteFunc: c.handleObject,
	}); err != nil {
		return nil, fmt.Errorf("registering ConfigMap event handlers: %w", err)
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
	if ok := cache.WaitForCacheSync(ctx.Done(), c.networksSynced, c.configMapsSynced); !ok {
		return errors.New("failed to wait for caches to sync")
	}

	// Neutron is listed once before the workers start, so that a normal
	// start finds its informer's cache ready too.
	if err := c.projects.Start(ctx, c.enqueueNetwork); err != nil {
		return fmt.Errorf("starting the projects: %w", err)
	}

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

// stripForCache is the informer's transform, run on every object before
// the Indexer stores it (it may modify it: fresh from the decoder).
func stripForCache(obj any) (any, error) {
	if n, ok := obj.(*samplecrdv2.Network); ok {
		n.ManagedFields = nil
		delete(n.Annotations, corev1.LastAppliedConfigAnnotation)
	}
	return obj, nil
}

// needsSync filters update notifications: it passes resyncs (the same
// resourceVersion), spec changes, the start of a deletion and our
// finalizer taken away, and drops the rest — above all the controller's
// own status and finalizer writes coming back, which a sync would only
// pass over. The spec is compared, not only the generation: a v1 write
// can change v2's spec and keep the generation (chapter 14).
func needsSync(old, new *samplecrdv2.Network) bool {
	return old.ResourceVersion == new.ResourceVersion ||
		old.Generation != new.Generation || !equality.Semantic.DeepEqual(old.Spec, new.Spec) ||
		!old.DeletionTimestamp.Equal(new.DeletionTimestamp) ||
		hasFinalizer(old) && !hasFinalizer(new)
}

// runWorker processes the queue until it shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem syncs one key from the queue and puts it back as the
// sync's result says.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Done tells the queue this worker no longer holds the key, so it may
	// be handed out again (it may have been re-added meanwhile).
	defer c.workqueue.Done(key)

	// Each sync is a span, whose trace ID every Neutron request of the
	// sync carries to Neutron's log (pkg/component/tracing).
	ctx, span := c.tracer.Start(ctx, "Sync Network", trace.WithAttributes(attribute.String("network", key.String())))
	defer span.End()
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "key", key, "requestID", tracing.RequestID(ctx))
	ctx = klog.NewContext(ctx, logger)

	start := time.Now()
	res := c.syncHandler(ctx, key)
	if res.err != nil {
		span.SetStatus(codes.Error, res.err.Error())
	}
	metrics.ObserveSync(res.requeue.MetricResult(res.err != nil), time.Since(start))
	logger.V(4).Info("Finished syncing", "duration", time.Since(start), "requeue", res.requeue, "after", res.after, "reason", res.err)
	switch res.requeue {
	case reconcile.Forget, reconcile.ForgetUntilSpecChanges:
		// Only an event (a change of the spec, of Neutron) brings it back.
		c.workqueue.Forget(key)
	case reconcile.AddRateLimited:
		if res.err != nil {
			utilruntime.HandleErrorWithContext(ctx, res.err, "Error syncing; requeuing for later retry", "key", key)
		}
		c.workqueue.AddRateLimited(key)
	case reconcile.AddAfter:
		c.workqueue.Forget(key)
		c.workqueue.AddAfter(key, res.after)
	}
	return true
}

// result is how a sync ends: when its key comes back, and why.
type result struct {
	requeue reconcile.Requeue
	after   time.Duration
	err     error
}

// failed is the result of a sync stopped by err, retried with backoff.
func failed(err error) result { return result{requeue: reconcile.AddRateLimited, err: err} }

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

// syncHandler makes Neutron equal to the Network named by key and records
// the outcome in the Network's status. It is level-triggered: it does not
// know which event queued the key, and it does not need to.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) result {
	network, err := c.networksLister.Networks(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// Gone: its Neutron resources, if any are left, are the garbage
		// collector's (pkg/controller/tenancy hands them over).
		return result{}
	}
	if err != nil {
		return failed(fmt.Errorf("reading Network %s from the cache: %w", key, err))
	}

	if network.DeletionTimestamp != nil && !hasFinalizer(network) {
		return result{}
	}
	tracing.LinkFrom(ctx, network.Annotations)
	// The project the Network lives in, the controller's or its
	// namespace's (spec.cloudCredentialsRef), if its namespace may use
	// it and what it names there.
	r, err := c.projects.For(ctx, network)
	if out, refused := reconcile.ProjectRefused(network, err); refused {
		return c.record(ctx, network, out)
	}
	if err != nil {
		return failed(fmt.Errorf("finding the project of Network %s: %w", key, err))
	}

	if network.DeletionTimestamp != nil {
		out := r.Delete(ctx, network)
		if !out.Finalized {
			return c.record(ctx, network, out)
		}
		c.recordEvents(network, out.Events)
		if err := c.setFinalizer(ctx, network, false); err != nil {
			return failed(err)
		}
		klog.FromContext(ctx).V(2).Info("Released the finalizer")
		return result{}
	}

	if out, ok := r.Preflight(network); !ok {
		return c.record(ctx, network, out)
	}
	// The finalizer goes on before anything exists in Neutron, so that no
	// Neutron resource can outlive its Network unnoticed.
	if !hasFinalizer(network) {
		if err := c.setFinalizer(ctx, network, true); err != nil {
			return failed(err)
		}
		klog.FromContext(ctx).V(2).Info("Added finalizer")
	}
	out := r.Reconcile(ctx, network)
	res := c.record(ctx, network, out)
	if err := c.configMaps.Sync(ctx, network, out.Observed); err != nil {
		return failed(errors.Join(res.err, err))
	}
	return res
}

// handleObject queues the Network that controls obj, a ConfigMap that was
// made, changed or deleted, so that an edit by hand is repaired at once,
// not at the next resync. A ConfigMap no Network controls is ignored: the
// controller never writes it.
func (c *Controller) handleObject(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	object, ok := obj.(metav1.Object)
	if !ok {
		utilruntime.HandleError(fmt.Errorf("a ConfigMap notification of a %T", obj))
		return
	}
	name, ok := configmap.ControllerName(object)
	if !ok {
		return
	}
	network, err := c.networksLister.Networks(object.GetNamespace()).Get(name)
	if err != nil || network.UID != metav1.GetControllerOfNoCopy(object).UID {
		return // its Network is gone: the garbage collector deletes it
	}
	c.enqueueNetwork(network)
}

// record writes down what a pass of the reconciler did and found: its
// Events, then the Ready condition and observed state in status, with a
// Warning Event when a condition that is not Ready changes (so a Network
// stuck for one reason says so once, not at every retry).
func (c *Controller) record(ctx context.Context, network *samplecrdv2.Network, out reconcile.Outcome) result {
	c.recordEvents(network, out.Events)
	res := result{requeue: out.Requeue, after: out.After, err: out.Err}
	if out.Condition == nil {
		return res
	}
	changed, err := c.applyStatus(ctx, network, *out.Condition, out.Observed)
	if changed && out.Warning != "" {
		c.recorder.Event(network, corev1.EventTypeWarning, out.Warning, out.Condition.Message)
	}
	if err != nil {
		return failed(errors.Join(out.Err, err))
	}
	return res
}

// recordEvents records events on network, or on the object each names.
func (c *Controller) recordEvents(network *samplecrdv2.Network, events []reconcile.Event) {
	for _, e := range events {
		var obj runtime.Object = network
		if e.Regarding != nil {
			obj = e.Regarding
		}
		c.recorder.Event(obj, e.Type, e.Reason, e.Message)
	}
}

// applyStatus applies cond (Ready), its kstatus companions and what
// Neutron holds to network's status with server-side apply, and reports
// whether Ready itself changed. It writes nothing when status already says
// the same, so a resync of an in-sync cluster is free for the API server.
// Why server-side apply: docs/learn/07-status-conditions-apply.md.
func (c *Controller) applyStatus(ctx context.Context, network *samplecrdv2.Network, cond metav1.Condition, obs reconcile.Observed) (condChanged bool, _ error) {
	ac, condChanged := reconcile.StatusApply(network, cond, obs)
	if ac == nil {
		return false, nil
	}
	if _, err := c.networkclientset.SamplecrdV2().Networks(network.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: controllerAgentName, Force: true}); err != nil {
		return condChanged, fmt.Errorf("applying status: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Updated status", "ready", cond.Status, "reason", cond.Reason, "networkID", obs.NetworkID, "subnets", len(obs.Subnets))
	return condChanged, nil
}

// finalizerFieldManager owns the finalizer, apart from the status's
// manager: client-go's fake tracker, unlike the API server, does not keep a
// manager's fields of status and main resource apart.
const finalizerFieldManager = controllerAgentName + "-finalizer"

// setFinalizer adds (present) or removes the controller's finalizer with
// server-side apply: metadata.finalizers is a set, so the controller's
// apply adds or withdraws its own entry and leaves everyone else's alone.
func (c *Controller) setFinalizer(ctx context.Context, network *samplecrdv2.Network, present bool) error {
	ac := applyv2.Network(network.Name, network.Namespace)
	if present {
		ac.WithFinalizers(samplecrdv1.NetworkFinalizer)
	}
	if _, err := c.networkclientset.SamplecrdV2().Networks(network.Namespace).Apply(ctx, ac,
		metav1.ApplyOptions{FieldManager: finalizerFieldManager, Force: true}); err != nil {
		return fmt.Errorf("applying the finalizer (present: %t): %w", present, err)
	}
	return nil
}

func hasFinalizer(network *samplecrdv2.Network) bool {
	return slices.Contains(network.Finalizers, samplecrdv1.NetworkFinalizer)
}
