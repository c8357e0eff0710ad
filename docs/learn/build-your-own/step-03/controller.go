package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	informers "example.com/greeting/generated/informers/externalversions/tutorial/v1"
	listers "example.com/greeting/generated/listers/tutorial/v1"
)

// Controller watches Greetings. In this step it only logs what changes.
type Controller struct {
	// The lister reads the informer's cache: every read of a controller
	// comes from here, never from the API server.
	greetingsLister listers.GreetingLister
	greetingsSynced cache.InformerSynced
}

// NewController asks for the Greeting informer and adds its handlers. The
// informers must be started after it, so that they run with its handlers.
func NewController(greetingInformer informers.GreetingInformer) (*Controller, error) {
	c := &Controller{
		greetingsLister: greetingInformer.Lister(),
		greetingsSynced: greetingInformer.Informer().HasSynced,
	}
	// The objects handed over are the cache's own: read them, never modify them.
	_, err := greetingInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { logEvent("Added", obj) },
		UpdateFunc: func(_, new any) { logEvent("Updated", new) },
		DeleteFunc: func(obj any) { logEvent("Deleted", obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding the Greeting handler: %w", err)
	}
	return c, nil
}

// logEvent logs what happened to the Greeting obj (or to the tombstone the
// informer hands over when it missed a delete).
func logEvent(what string, obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	klog.InfoS(what, "greeting", key, "err", err)
}

// Run waits until the cache holds every Greeting, then until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	// Before the first list has arrived, an empty cache means "not yet
	// known", not "none": nothing may act on it.
	if !cache.WaitForCacheSync(ctx.Done(), c.greetingsSynced) {
		return fmt.Errorf("the Greeting cache did not sync")
	}
	greetings, err := c.greetingsLister.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing the cache: %w", err)
	}
	klog.FromContext(ctx).Info("Cache synced", "greetings", len(greetings))
	<-ctx.Done()
	return nil
}
