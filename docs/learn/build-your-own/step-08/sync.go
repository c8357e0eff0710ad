package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
)

// result is how a sync ends, and so what processNextWorkItem does with its
// key: err set, retry with backoff; after set, look again then; neither,
// forget it until an event. network-controller's reconcile.Outcome says
// the same and more (Events, observed Neutron state); this is all a
// Greeting needs.
type result struct {
	after time.Duration
	err   error
}

// failed is the result of a sync stopped by err.
func failed(err error) result { return result{err: err} }

// notOwnedRetry is how long a Greeting whose ConfigMap name is taken waits
// before it looks again: that ConfigMap's events do not queue it.
const notOwnedRetry = time.Minute

// syncHandler makes the world match the Greeting named by key: its
// ConfigMap holds spec.message, its status says so. It is level-triggered:
// it does not know which event queued the key, and does not need to.
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) result {
	greeting, err := c.greetingsLister.Greetings(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return result{} // gone; its ConfigMap is the garbage collector's
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

	cond, res := c.publish(ctx, greeting)
	if err := c.updateStatus(ctx, greeting, cond); err != nil {
		return failed(errors.Join(res.err, err))
	}
	return res
}

// publish makes the Greeting's ConfigMap hold its message, and says in a
// Ready condition whether it does.
func (c *Controller) publish(ctx context.Context, greeting *tutorialv1.Greeting) (metav1.Condition, result) {
	want := newConfigMap(greeting)
	cm, err := c.configMapsLister.ConfigMaps(greeting.Namespace).Get(want.Name)
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.kubeClient.CoreV1().ConfigMaps(want.Namespace).Create(ctx, want, metav1.CreateOptions{})
	case err != nil:
	case !metav1.IsControlledBy(cm, greeting):
		// Someone else's: never overwrite what the controller does not own.
		msg := fmt.Sprintf("ConfigMap %s exists and is not controlled by this Greeting", cm.Name)
		return condition(metav1.ConditionFalse, "ConfigMapNotOwned", msg), result{after: notOwnedRetry}
	case !equality.Semantic.DeepEqual(cm.Data, want.Data):
		cm = cm.DeepCopy() // never modify the cache's copy
		cm.Data = want.Data
		_, err = c.kubeClient.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return condition(metav1.ConditionFalse, "PublishFailed", err.Error()), failed(fmt.Errorf("publishing ConfigMap %s: %w", want.Name, err))
	}
	klog.FromContext(ctx).V(2).Info("Published", "greeting", klog.KObj(greeting))
	return condition(metav1.ConditionTrue, "Published", "ConfigMap "+want.Name+" holds the message"), result{}
}

// newConfigMap is the ConfigMap a Greeting wants: its name, its message,
// and an ownerReference that makes the Greeting its controller, so that
// the garbage collector deletes it with the Greeting.
func newConfigMap(greeting *tutorialv1.Greeting) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      greeting.Name,
			Namespace: greeting.Namespace,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(greeting, tutorialv1.SchemeGroupVersion.WithKind("Greeting")),
			},
		},
		Data: map[string]string{"message": greeting.Spec.Message},
	}
}

// condition is a Ready condition.
func condition(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: tutorialv1.ConditionReady, Status: status, Reason: reason, Message: message}
}

// updateStatus writes cond and the generation it describes into status,
// and writes nothing when status already says so: a resync of a Greeting
// in order costs the API server nothing.
func (c *Controller) updateStatus(ctx context.Context, greeting *tutorialv1.Greeting, cond metav1.Condition) error {
	updated := greeting.DeepCopy()
	cond.ObservedGeneration = greeting.Generation
	meta.SetStatusCondition(&updated.Status.Conditions, cond) // keeps lastTransitionTime unless status changes
	updated.Status.ObservedGeneration = greeting.Generation
	if equality.Semantic.DeepEqual(updated.Status, greeting.Status) {
		return nil
	}
	// The status subresource: this write cannot change the spec, and a
	// stale resourceVersion is refused (a conflict, retried with backoff).
	if _, err := c.greetingClient.TutorialV1().Greetings(greeting.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the status of Greeting %s: %w", greeting.Name, err)
	}
	return nil
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
