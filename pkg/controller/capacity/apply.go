package capacity

import (
	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
)

// statusApply is the whole of status as an apply configuration of policy
// name: applied whole, it also removes what the field manager set before
// and status no longer holds (a namespace that left the list).
func statusApply(name string, status samplecrdv1.TenantPolicyStatus) *applyv1.TenantPolicyApplyConfiguration {
	st := applyv1.TenantPolicyStatus().
		WithObservedGeneration(status.ObservedGeneration).
		WithNamespaces(status.Namespaces).
		WithNamespacesAtCap(status.NamespacesAtCap).
		WithNetworksWaiting(status.NetworksWaiting)
	for _, u := range status.Usage {
		ac := applyv1.NamespaceUsage().WithNamespace(u.Namespace).WithAtWork(u.AtWork).WithWaiting(u.Waiting).
			WithWaitingNetworks(u.WaitingNetworks...)
		if u.MaxNetworks != nil {
			ac.WithMaxNetworks(*u.MaxNetworks)
		}
		st.WithUsage(ac)
	}
	return applyv1.TenantPolicy(name).WithStatus(st)
}
