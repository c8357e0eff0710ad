package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
)

// result is how a sync ends, and so what processNextWorkItem does with its
// key: err set, retry with backoff; after set, look again then (step 8
// needs it); neither, forget it until an event. network-controller's reconcile.Outcome says
// the same and more (Events, observed Neutron state); this is all a
// Greeting needs.
type result struct {
	after time.Duration
	err   error
}

// failed is the result of a sync stopped by err.
func failed(err error) result { return result{err: err} }

// syncHandler makes the world match the Greeting named by key: its
// ConfigMap holds spec.message. It is level-triggered: it does not know
// which event queued the key, and does not need to.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) result {
	greeting, err := c.greetingsLister.Greetings(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return result{} // gone; its ConfigMap stays behind until step 8
	}
	if err != nil {
		return failed(fmt.Errorf("reading Greeting %s from the cache: %w", key, err))
	}

	if greeting.DeletionTimestamp != nil {
		if !hasFinalizer(greeting) {
			return result{}
		}
		// The finalizer comes off last: once it is off the Greeting may
		// vanish, and nothing would ever say farewell again.
		if err := c.farewell(ctx, greeting); err != nil {
			return failed(fmt.Errorf("farewell of Greeting %s: %w", key, err))
		}
		_, err := c.setFinalizer(ctx, greeting, false)
		return failed(err) // a nil err forgets the key
	}
	// The finalizer goes on first: before anything exists that it guards.
	if !hasFinalizer(greeting) {
		if greeting, err = c.setFinalizer(ctx, greeting, true); err != nil {
			return failed(err)
		}
	}

	return c.publish(ctx, greeting)
}

// publish makes the Greeting's ConfigMap hold its message: read, compare,
// and write only what differs.
func (c *Controller) publish(ctx context.Context, greeting *tutorialv1.Greeting) result {
	want := newConfigMap(greeting)
	cm, err := c.configMapsLister.ConfigMaps(greeting.Namespace).Get(want.Name)
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.kubeClient.CoreV1().ConfigMaps(want.Namespace).Create(ctx, want, metav1.CreateOptions{})
	case err != nil:
	case !equality.Semantic.DeepEqual(cm.Data, want.Data):
		cm = cm.DeepCopy() // never modify the cache's copy
		cm.Data = want.Data
		_, err = c.kubeClient.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return failed(fmt.Errorf("publishing ConfigMap %s: %w", want.Name, err))
	}
	klog.FromContext(ctx).V(2).Info("Published", "greeting", klog.KObj(greeting))
	return result{}
}

// newConfigMap is the ConfigMap a Greeting wants: its name and message.
func newConfigMap(greeting *tutorialv1.Greeting) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      greeting.Name,
			Namespace: greeting.Namespace,
		},
		Data: map[string]string{"message": greeting.Spec.Message},
	}
}

// setFinalizer adds (present) or removes the controller's finalizer, and
// returns the Greeting as the API server now holds it.
func (c *Controller) setFinalizer(ctx context.Context, greeting *tutorialv1.Greeting, present bool) (*tutorialv1.Greeting, error) {
	updated := greeting.DeepCopy()
	updated.Finalizers = slices.DeleteFunc(updated.Finalizers, func(f string) bool { return f == tutorialv1.Finalizer })
	if present {
		updated.Finalizers = append(updated.Finalizers, tutorialv1.Finalizer)
	}
	updated, err := c.greetingClient.TutorialV1().Greetings(greeting.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("setting the finalizer of Greeting %s (present: %t): %w", greeting.Name, present, err)
	}
	return updated, nil
}

// hasFinalizer reports whether the controller's finalizer is on greeting.
func hasFinalizer(greeting *tutorialv1.Greeting) bool {
	return slices.Contains(greeting.Finalizers, tutorialv1.Finalizer)
}
