package capacity

import (
	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
)

// statusApply is the whole of status as an apply configuration of policy
// name: applied whole, it also removes what the field manager set before
// and status no longer holds (a namespace that left the list). A zero
// count is left out, as the API leaves it out of the object (omitempty):
// set, it would be a field the object never shows, and what the field
// manager applied (ExtractTenantPolicyStatus) would never equal it.
func statusApply(name string, status samplecrdv1.TenantPolicyStatus) *applyv1.TenantPolicyApplyConfiguration {
	st := applyv1.TenantPolicyStatus()
	if status.ObservedGeneration != 0 {
		st.WithObservedGeneration(status.ObservedGeneration)
	}
	if status.Namespaces != 0 {
		st.WithNamespaces(status.Namespaces)
	}
	if status.NamespacesAtCap != 0 {
		st.WithNamespacesAtCap(status.NamespacesAtCap)
	}
	if status.NetworksWaiting != 0 {
		st.WithNetworksWaiting(status.NetworksWaiting)
	}
	for _, u := range status.Usage {
		ac := applyv1.NamespaceUsage().WithNamespace(u.Namespace).WithAtWork(u.AtWork)
		if u.MaxNetworks != nil {
			ac.WithMaxNetworks(*u.MaxNetworks)
		}
		if u.Waiting != 0 {
			ac.WithWaiting(u.Waiting)
		}
		if len(u.WaitingNetworks) > 0 {
			ac.WithWaitingNetworks(u.WaitingNetworks...)
		}
		st.WithUsage(ac)
	}
	return applyv1.TenantPolicy(name).WithStatus(st)
}
