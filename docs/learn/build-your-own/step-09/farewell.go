package main

import (
	"context"

	"k8s.io/klog/v2"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
)

// Farewell undoes what a Greeting made outside the cluster, where no
// ownerReference reaches, before the Greeting may go: the finalizer waits
// for it. In network-controller it deletes the Neutron network; here it
// only logs, and the tests replace it.
type Farewell func(ctx context.Context, greeting *tutorialv1.Greeting) error

// sayFarewell is main's Farewell.
func sayFarewell(ctx context.Context, greeting *tutorialv1.Greeting) error {
	klog.FromContext(ctx).Info("Farewell", "greeting", klog.KObj(greeting), "message", greeting.Spec.Message)
	return nil
}
