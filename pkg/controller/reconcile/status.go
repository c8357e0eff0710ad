package reconcile

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
)

// StatusApply is the status the controller applies to network after a
// pass, with server-side apply: cond (Ready) and the conditions that go
// with it (nextConditions), observedGeneration and obs. It is nil
// when the status already says all of that, which is what makes a resync
// of an in-sync cluster free for the API server. condChanged reports
// whether Ready itself changed (status, reason or message): a Warning
// Event is due.
//
// The apply names every field the controller owns: one it applied before
// and leaves out now (Reconciling, once Ready; status.router, once
// detached) is removed by the API server. A pass that stopped before it
// read the subnets (obs.Subnets nil) keeps status.subnets as they are, so
// that a failure does not blank them.
func StatusApply(network *samplecrdv2.Network, cond metav1.Condition, obs Observed) (_ *applyv2.NetworkApplyConfiguration, condChanged bool) {
	if obs.Subnets == nil {
		obs.Subnets = LastObserved(network.Status).Subnets
	}
	conditions, changed, condChanged := nextConditions(network.Status.Conditions, network.Generation, cond, obs.Quota)
	if !changed && network.Status.ObservedGeneration == network.Generation && obs.Equal(network.Status) {
		return nil, false
	}
	status := applyv2.NetworkStatus().WithObservedGeneration(network.Generation)
	for _, c := range conditions {
		status.WithConditions(conditionApply(c))
	}
	obs.Apply(status)
	return applyv2.Network(network.Name, network.Namespace).WithStatus(status), condChanged
}

// nextConditions are the conditions to apply to a Network of generation
// whose current ones are current: cond as Ready, the kstatus condition
// that goes with it (ProgressCondition), and QuotaNearlyFull while quota
// says the project is nearly full (quota.go). changed says whether any
// changed, condChanged whether Ready itself did (status, reason or
// message).
func nextConditions(current []metav1.Condition, generation int64, cond metav1.Condition, quota *neutron.Quota) (apply []metav1.Condition, changed, condChanged bool) {
	cond.ObservedGeneration = generation
	// SetStatusCondition keeps lastTransitionTime unless the status flips.
	// It works on a copy: the lister's object belongs to the cache.
	conditions := slices.Clone(current)
	old := meta.FindStatusCondition(conditions, cond.Type)
	if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && sameMessage(old.Message, cond.Message) {
		cond.Message = old.Message // the first refusal's request ID
	}
	condChanged = old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message
	changed = meta.SetStatusCondition(&conditions, cond)
	ready := *meta.FindStatusCondition(conditions, samplecrdv1.ConditionReady)
	apply = []metav1.Condition{ready}
	progress := ProgressCondition(ready)
	for _, t := range []string{samplecrdv1.ConditionReconciling, samplecrdv1.ConditionStalled} {
		if progress != nil && progress.Type == t {
			changed = meta.SetStatusCondition(&conditions, *progress) || changed
			apply = append(apply, *meta.FindStatusCondition(conditions, t))
		} else {
			changed = meta.RemoveStatusCondition(&conditions, t) || changed
		}
	}
	quotaCond, quotaChanged := nextQuotaCondition(&conditions, generation, quota)
	if quotaCond != nil {
		apply = append(apply, *quotaCond)
	}
	return apply, changed || quotaChanged, condChanged
}

// conditionApply is cond as an apply configuration.
func conditionApply(cond metav1.Condition) *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(cond.Type).WithStatus(cond.Status).WithReason(cond.Reason).WithMessage(cond.Message).
		WithObservedGeneration(cond.ObservedGeneration).WithLastTransitionTime(cond.LastTransitionTime)
}
