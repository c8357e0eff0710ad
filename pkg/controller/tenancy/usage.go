package tenancy

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// Usage is tp's status as the caches say it now: how many namespaces tp
// applies to, how many of them are at their cap, how many Networks wait
// for one, and the fullest MaxNamespacesInStatus namespaces with Networks.
// Each namespace's cap is the one that binds it (GrantsFor: the smallest
// of every policy that applies to it), and its waiting Networks are those
// Check refuses for the cap (waitingForCap). The cost is one pass over the
// namespaces and their Networks, whatever the status holds.
func (p *Policy) Usage(tp *samplecrdv1.TenantPolicy) (samplecrdv1.TenantPolicyStatus, error) {
	status := samplecrdv1.TenantPolicyStatus{ObservedGeneration: tp.Generation}
	namespaces, err := p.namespaces.List(labels.Everything())
	if err != nil {
		return status, fmt.Errorf("listing namespaces from the cache: %w", err)
	}
	var usage []samplecrdv1.NamespaceUsage
	for _, ns := range namespaces {
		if !tp.Spec.Default && !selects(tp, ns) {
			continue
		}
		status.Namespaces++
		g, err := p.GrantsFor(ns.Name)
		if err != nil {
			return status, err
		}
		networks, err := p.networks.Networks(ns.Name).List(labels.Everything())
		if err != nil {
			return status, fmt.Errorf("listing the Networks of namespace %s from the cache: %w", ns.Name, err)
		}
		u := usageOf(ns.Name, networks, g.MaxNetworks)
		if u.MaxNetworks != nil && u.AtWork >= *u.MaxNetworks {
			status.NamespacesAtCap++
		}
		status.NetworksWaiting += u.Waiting
		if len(networks) > 0 {
			usage = append(usage, u)
		}
	}
	slices.SortFunc(usage, fuller)
	if len(usage) > samplecrdv1.MaxNamespacesInStatus {
		usage = usage[:samplecrdv1.MaxNamespacesInStatus]
	}
	status.Usage = usage
	return status, nil
}

// Applying returns the names of the policies that apply to namespace:
// those whose status a change of its Networks may change.
func (p *Policy) Applying(namespace string) ([]string, error) {
	policies, err := p.applying(namespace)
	names := make([]string, len(policies))
	for i, tp := range policies {
		names[i] = tp.Name
	}
	return names, err
}

// usageOf is one namespace's Networks at work against its cap, limit (nil:
// none), with the names of the first MaxWaitingInStatus that wait for it.
func usageOf(namespace string, networks []*samplecrdv2.Network, limit *int32) samplecrdv1.NamespaceUsage {
	u := samplecrdv1.NamespaceUsage{Namespace: namespace, MaxNetworks: limit}
	for _, n := range networks {
		if atWork(n) {
			u.AtWork++
		}
	}
	if limit == nil {
		return u
	}
	waiting := waitingForCap(networks, *limit)
	u.Waiting = int32(len(waiting))
	for _, n := range waiting[:min(len(waiting), samplecrdv1.MaxWaitingInStatus)] {
		u.WaitingNetworks = append(u.WaitingNetworks, n.Name)
	}
	return u
}

// fuller orders the status's namespaces: the most Networks waiting first,
// then those with a cap before those without, then the fullest against
// their cap, then the most at work, then by name.
func fuller(a, b samplecrdv1.NamespaceUsage) int {
	if c := cmp.Compare(b.Waiting, a.Waiting); c != 0 {
		return c
	}
	if (a.MaxNetworks == nil) != (b.MaxNetworks == nil) {
		if a.MaxNetworks != nil {
			return -1
		}
		return 1
	}
	if a.MaxNetworks != nil {
		// a.AtWork/a.Max against b.AtWork/b.Max, without division (a cap
		// may be 0).
		if c := cmp.Compare(int64(b.AtWork)*int64(*a.MaxNetworks), int64(a.AtWork)*int64(*b.MaxNetworks)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(b.AtWork, a.AtWork); c != 0 {
		return c
	}
	return cmp.Compare(a.Namespace, b.Namespace)
}
