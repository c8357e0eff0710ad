package main

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	informers "example.com/greeting/generated/informers/externalversions/tutorial/v1"
	listers "example.com/greeting/generated/listers/tutorial/v1"
)

// Controller syncs Greetings from a work queue. In this step a sync only
// reads the Greeting and logs it.
type Controller struct {
	// The lister reads the informer's cache: every read of a controller
	// comes from here, never from the API server.
	greetingsLister listers.GreetingLister
	greetingsSynced cache.InformerSynced

	// workqueue holds the keys of the Greetings to sync: each key once,
	// however many events named it, and never in two workers at once.
	workqueue workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// NewController wires the informer's events to the work queue. The
// informers must be started after it, so that they run with its handlers.
func NewController(greetingInformer informers.GreetingInformer) (*Controller, error) {
	c := &Controller{
		greetingsLister: greetingInformer.Lister(),
		greetingsSynced: greetingInformer.Informer().HasSynced,
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
	return c, nil
}

// Run waits for the cache, then runs workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	// ShutDown makes Get return shutdown=true: the workers' loops end.
	defer c.workqueue.ShutDown()
	logger := klog.FromContext(ctx)

	// A sync on a cache not yet filled would take "absent" for "gone".
	if !cache.WaitForCacheSync(ctx.Done(), c.greetingsSynced) {
		return fmt.Errorf("the Greeting cache did not sync")
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

// processNextWorkItem syncs one key and puts it back if the sync failed.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.workqueue.Get()
	if shutdown {
		return false
	}
	// Done: this worker no longer holds the key; it may be handed out again.
	defer c.workqueue.Done(key)

	if err := c.syncHandler(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "key", key)
		c.workqueue.AddRateLimited(key) // again, after a backoff that grows
		return true
	}
	c.workqueue.Forget(key) // done until an event queues it again
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

// syncHandler reads the Greeting named by key from the cache. Step 5 makes
// it act.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	greeting, err := c.greetingsLister.Greetings(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).Info("Gone", "greeting", key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Greeting %s from the cache: %w", key, err)
	}
	klog.FromContext(ctx).Info("Syncing", "greeting", key, "message", greeting.Spec.Message)
	return nil
}
