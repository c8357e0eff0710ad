package reconcile

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
)

// selfHealing are the reasons of a Ready=False that the controller gets
// past by itself: kstatus's InProgress. Every other reason needs someone
// to act (docs/conditions.md) and is kstatus's Failed: a GitOps tool then
// reports the Network as stalled at once, instead of waiting out its
// timeout on something that will not change by itself.
var selfHealing = map[string]bool{
	samplecrdv1.ReasonProvisioning:       true,
	samplecrdv1.ReasonNeutronUnavailable: true,
	samplecrdv1.ReasonDeleting:           true,
}

// ProgressCondition is the kstatus condition that goes with ready:
// Reconciling or Stalled, True, with ready's reason and message, when ready
// is not True; nil when it is. kstatus's conditions are "abnormal-true":
// present only while they hold, so that a listing shows the one that does.
func ProgressCondition(ready metav1.Condition) *metav1.Condition {
	if ready.Status == metav1.ConditionTrue {
		return nil
	}
	typ := samplecrdv1.ConditionStalled
	if selfHealing[ready.Reason] {
		typ = samplecrdv1.ConditionReconciling
	}
	return &metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: ready.Reason, Message: ready.Message,
		ObservedGeneration: ready.ObservedGeneration}
}
