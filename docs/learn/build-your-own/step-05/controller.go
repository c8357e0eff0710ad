package main

import (
	"context"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clientset "example.com/greeting/generated/clientset/versioned"
	informers "example.com/greeting/generated/informers/externalversions/tutorial/v1"
	listers "example.com/greeting/generated/listers/tutorial/v1"
)

// Controller publishes each Greeting's message in a ConfigMap.
type Controller struct {
	kubeClient     kubernetes.Interface
	greetingClient clientset.Interface

	// The listers read the informers' caches: every read of the sync
	// comes from here, never from the API server.
	greetingsLister  listers.GreetingLister
	greetingsSynced  cache.InformerSynced
	configMapsLister corelisters.ConfigMapLister
	configMapsSynced cache.InformerSynced

	// workqueue holds the keys of the Greetings to sync: each key once,
	// however many events named it, and never in two workers at once.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// NewController wires the informers' events to the work queue. The
// informers must be started after it, so that they run with its handlers.
func NewController(kubeClient kubernetes.Interface, greetingClient clientset.Interface,
	greetingInformer informers.GreetingInformer, configMapInformer coreinformers.ConfigMapInformer) (*Controller, error) {
	c := &Controller{
		kubeClient:       kubeClient,
		greetingClient:   greetingClient,
		greetingsLister:  greetingInformer.Lister(),
		greetingsSynced:  greetingInformer.Informer().HasSynced,
		configMapsLister: configMapInformer.Lister(),
		configMapsSynced: configMapInformer.Informer().HasSynced,
		workqueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "greetings"}),
	}
	// Handlers only queue keys: the sync reads the object itself, later.
	_, err := greetingInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueGreeting,
		UpdateFunc: func(_, new any) { c.enqueueGreeting(new) },
		DeleteFunc: c.enqueueGreeting,
	})
	if err != nil {
		return nil, fmt.Errorf("adding the Greeting handler: %w", err)
	}
	// The ConfigMap informer has no handler yet: the sync only reads its
	// cache. Step 8 makes a ConfigMap's change queue its Greeting.
	return c, nil
}

// Run waits for the caches, then runs workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	// ShutDown makes Get return shutdown=true: the workers' loops end.
	defer c.workqueue.ShutDown()
	logger := klog.FromContext(ctx)

	// A sync on a cache not yet filled would take "absent" for "gone".
	if !cache.WaitForCacheSync(ctx.Done(), c.greetingsSynced, c.configMapsSynced) {
		return fmt.Errorf("the caches did not sync")
	}
	logger.Info("Starting workers", "count", workers)
	for range workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	logger.Info("Shutting down workers")
	return nil
}

// runWorker processes the queue until it shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem syncs one key and puts it back as the result says.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Done: this worker no longer holds the key; it may be handed out again.
	defer c.workqueue.Done(key)

	res := c.syncHandler(ctx, key)
	switch {
	case res.err != nil:
		utilruntime.HandleErrorWithContext(ctx, res.err, "Error syncing; requeuing for later retry", "key", key)
		c.workqueue.AddRateLimited(key) // again, after a backoff that grows
	case res.after > 0:
		c.workqueue.Forget(key) // not a failure: the backoff starts over
		c.workqueue.AddAfter(key, res.after)
	default:
		c.workqueue.Forget(key) // done until an event queues it again
	}
	return true
}

// enqueueGreeting queues the key of a Greeting (or of the tombstone the
// informer hands over when it missed a delete).
func (c *Controller) enqueueGreeting(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.workqueue.Add(key)
}
