package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
)

func ready() metav1.Condition {
	return metav1.Condition{
		Type:    samplecrdv1.ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  samplecrdv1.ReasonProvisioned,
		Message: "The Neutron network and subnet match the spec",
	}
}

func notReady(reason, message string) metav1.Condition {
	return metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}

// updateStatus records cond and the Neutron IDs in network's status with
// server-side apply, as the field manager network-controller. It writes
// nothing when the status already says the same thing, which is what makes
// a resync of an in-sync cluster free for the API server.
//
// Server-side apply is what lets the controller and users write the same
// object without clobbering each other: the controller owns exactly the
// fields it applies (status.conditions[type=Ready], observedGeneration and
// the IDs) and nothing else, and it needs no resourceVersion, so it never
// fails with a conflict against a concurrent spec change.
func (c *Controller) updateStatus(ctx context.Context, network *samplecrdv1.Network, cond metav1.Condition, networkID, subnetID string) error {
	cond.ObservedGeneration = network.Generation
	// SetStatusCondition keeps lastTransitionTime unless the status flips.
	// It works on a copy: the lister's object belongs to the cache.
	conditions := network.Status.DeepCopy().Conditions
	changed := meta.SetStatusCondition(&conditions, cond)
	st := network.Status
	if !changed && st.ObservedGeneration == network.Generation && st.NetworkID == networkID && st.SubnetID == subnetID {
		return nil
	}
	applied := meta.FindStatusCondition(conditions, samplecrdv1.ConditionReady)

	status := applyv1.NetworkStatus().
		WithObservedGeneration(network.Generation).
		WithConditions(metav1ac.Condition().
			WithType(applied.Type).
			WithStatus(applied.Status).
			WithReason(applied.Reason).
			WithMessage(applied.Message).
			WithObservedGeneration(applied.ObservedGeneration).
			WithLastTransitionTime(applied.LastTransitionTime))
	if networkID != "" {
		status.WithNetworkID(networkID)
	}
	if subnetID != "" {
		status.WithSubnetID(subnetID)
	}
	ac := applyv1.Network(network.Name, network.Namespace).WithStatus(status)
	if _, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: controllerAgentName, Force: true}); err != nil {
		return fmt.Errorf("applying status: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Updated status", "ready", applied.Status, "reason", applied.Reason, "networkID", networkID, "subnetID", subnetID)
	return nil
}

// finalizerFieldManager owns the finalizer. It is not the status's manager:
// the API server keeps a manager's fields of the main resource and of the
// status subresource apart, but not every implementation does (client-go's
// fake tracker does not), and with one name an apply of the status would
// then withdraw the finalizer.
const finalizerFieldManager = controllerAgentName + "-finalizer"

// setFinalizer adds (present) or removes the controller's finalizer with
// server-side apply: metadata.finalizers is a set, so the controller's
// apply adds or withdraws its own entry and leaves everyone else's alone.
func (c *Controller) setFinalizer(ctx context.Context, network *samplecrdv1.Network, present bool) error {
	ac := applyv1.Network(network.Name, network.Namespace)
	if present {
		ac.WithFinalizers(samplecrdv1.NetworkFinalizer)
	}
	if _, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).Apply(ctx, ac,
		metav1.ApplyOptions{FieldManager: finalizerFieldManager, Force: true}); err != nil {
		verb := "adding"
		if !present {
			verb = "removing"
		}
		return fmt.Errorf("%s the finalizer: %w", verb, err)
	}
	return nil
}
