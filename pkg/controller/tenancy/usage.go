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
// Each namespace's cap is the one that binds it (its grants: the smallest
// of every policy that applies to it), and its waiting Networks are those
// Check refuses for the cap and for nothing else (waitingForCap, then
// checkGrants). The policies are read and their selectors parsed once:
// the cost is one pass over the namespaces, their Networks and the
// policies, whatever the status holds.
func (p *Policy) Usage(tp *samplecrdv1.TenantPolicy) (samplecrdv1.TenantPolicyStatus, error) {
	status := samplecrdv1.TenantPolicyStatus{ObservedGeneration: tp.Generation}
	policies, err := p.parsedPolicies()
	if err != nil {
		return status, err
	}
	namespaces, err := p.namespaces.List(labels.Everything())
	if err != nil {
		return status, fmt.Errorf("listing namespaces from the cache: %w", err)
	}
	self := parse(tp)
	var usage []samplecrdv1.NamespaceUsage
	for _, ns := range namespaces {
		if !self.appliesTo(ns) {
			continue
		}
		status.Namespaces++
		networks, err := p.networks.Networks(ns.Name).List(labels.Everything())
		if err != nil {
			return status, fmt.Errorf("listing the Networks of namespace %s from the cache: %w", ns.Name, err)
		}
		u := p.usageOf(ns.Name, networks, p.grantsOf(ns.Name, ns, policies))
		if atCap(u) {
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
	policies, ns, err := p.policiesAndNamespace(namespace)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pp := range policies {
		if pp.appliesTo(ns) {
			names = append(names, pp.Name)
		}
	}
	return names, nil
}

// usageOf is one namespace's Networks at work against its cap (g's), with
// the names of the first MaxWaitingInStatus that wait for it: refused by
// the cap, and by nothing else (a Network that names what is not granted
// is not made when an older one goes).
func (p *Policy) usageOf(namespace string, networks []*samplecrdv2.Network, g Grants) samplecrdv1.NamespaceUsage {
	u := samplecrdv1.NamespaceUsage{Namespace: namespace, MaxNetworks: g.MaxNetworks}
	for _, n := range networks {
		if atWork(n) {
			u.AtWork++
		}
	}
	if g.MaxNetworks == nil {
		return u
	}
	for _, n := range waitingForCap(networks, *g.MaxNetworks) {
		if p.checkGrants(g, n) != nil {
			continue
		}
		u.Waiting++
		if len(u.WaitingNetworks) < samplecrdv1.MaxWaitingInStatus {
			u.WaitingNetworks = append(u.WaitingNetworks, n.Name)
		}
	}
	return u
}

// atCap reports whether u has as many Networks at work as its cap allows.
func atCap(u samplecrdv1.NamespaceUsage) bool {
	return u.MaxNetworks != nil && u.AtWork >= *u.MaxNetworks
}

// fuller orders the status's namespaces: the most Networks waiting first,
// then those at their cap, then those with a cap before those without,
// then the fullest against their cap, then the most at work, then by
// name. A namespace at its cap is never cut from the list while one below
// its cap is in it.
func fuller(a, b samplecrdv1.NamespaceUsage) int {
	if c := cmp.Compare(b.Waiting, a.Waiting); c != 0 {
		return c
	}
	if atCap(a) != atCap(b) {
		if atCap(a) {
			return -1
		}
		return 1
	}
	if (a.MaxNetworks == nil) != (b.MaxNetworks == nil) {
		if a.MaxNetworks != nil {
			return -1
		}
		return 1
	}
	if a.MaxNetworks != nil {
		// a.AtWork/a.Max against b.AtWork/b.Max, without division (a cap
		// may be 0): int32 products fit an int64.
		if c := cmp.Compare(int64(b.AtWork)*int64(*a.MaxNetworks), int64(a.AtWork)*int64(*b.MaxNetworks)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(b.AtWork, a.AtWork); c != 0 {
		return c
	}
	return cmp.Compare(a.Namespace, b.Namespace)
}
