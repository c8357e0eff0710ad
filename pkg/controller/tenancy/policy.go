// What a namespace may reach, and why. The Policy decides what a Network may name outside itself: the
// credentials (and so the OpenStack project) it is made with, an existing
// router, an external network for a router of its own, a subnet pool, an
// existing network to adopt. The answer is the cluster administrator's,
// written as TenantPolicies that select namespaces by label; grants of
// every policy that selects a namespace add up, and the stricter
// credentials rule holds. A default policy (spec.default) applies to every
// namespace, whatever its labels, and to one the cache does not know yet:
// its restriction binds even a namespace whose author can set its labels,
// and a namespace no other policy selects gets the default policies alone,
// beside the flags' defaults (the controller's deprecated
// --adoption-namespaces and --router-external-networks, which grant to
// every namespace they name).
//
// The controller asks before anything else of a Network that is not being
// deleted: a refusal says which field and which grant is missing, and
// nothing is asked of the Secret's project or of Neutron. Deletion is
// never refused: whatever a Network made, it may always remove.

package tenancy

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v1"
	informersv2 "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions/samplecrd/v2"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
	listersv2 "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v2"
)

// Defaults are what the controller's flags grant, before any policy:
// adoption to the namespaces named (or "*" for all), and routers of their
// own on the external networks named, to every namespace.
type Defaults struct {
	AdoptionNamespaces []string
	ExternalNetworks   []string
	// ControllerNamespace is the controller's own namespace ("" when not
	// known), whose Secrets are the controller's: see Check.
	ControllerNamespace string
}

// Policy answers from the informers' caches of TenantPolicies and
// Namespaces, and of Networks for a namespace's cap (maxNetworks).
type Policy struct {
	policies   listers.TenantPolicyLister
	namespaces corelisters.NamespaceLister
	networks   listersv2.NetworkLister
	defaults   Defaults
	// informers are nil in a Policy made by NewFromListers.
	policyInformer, namespaceInformer, networkInformer cache.SharedIndexInformer
}

// NewPolicy returns a Policy over the informers' caches, with the flags'
// defaults. networks are the Networks the controller serves, which a
// namespace's cap counts.
func NewPolicy(policies informers.TenantPolicyInformer, namespaces coreinformers.NamespaceInformer, networks informersv2.NetworkInformer, defaults Defaults) *Policy {
	p := NewPolicyFromListers(policies.Lister(), namespaces.Lister(), networks.Lister(), defaults)
	p.policyInformer, p.namespaceInformer, p.networkInformer = policies.Informer(), namespaces.Informer(), networks.Informer()
	return p
}

// NewPolicyFromListers returns a Policy over listers that need no sync.
func NewPolicyFromListers(policies listers.TenantPolicyLister, namespaces corelisters.NamespaceLister, networks listersv2.NetworkLister, defaults Defaults) *Policy {
	return &Policy{policies: policies, namespaces: namespaces, networks: networks, defaults: defaults}
}

// HasSynced reports whether the caches have synced: before that, a
// namespace's grants, and how many Networks it has at work, cannot be
// known.
func (p *Policy) HasSynced() bool {
	return p.policyInformer == nil ||
		(p.policyInformer.HasSynced() && p.namespaceInformer.HasSynced() && p.networkInformer.HasSynced())
}

// OnChange has changed called with a namespace whose grants may have
// changed (its labels did), or with "" when every namespace's may have (a
// TenantPolicy was made, changed or deleted): the controller queues their
// Networks again, so that a grant takes effect, and is withdrawn, without
// waiting for the resync. A Network deleted in a namespace with a cap
// (maxNetworks) that may have refused one of its Networks calls it with
// the namespace too (capMayHaveRefused, below): that Network may be made
// now. A deletion under the cap queues nothing.
func (p *Policy) OnChange(changed func(namespace string)) error {
	if p.policyInformer == nil {
		return nil
	}
	all := func(any) { changed("") }
	if _, err := p.policyInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: all, DeleteFunc: all,
		UpdateFunc: func(old, new any) {
			if old.(*samplecrdv1.TenantPolicy).Generation != new.(*samplecrdv1.TenantPolicy).Generation {
				changed("")
			}
		},
	}); err != nil {
		return fmt.Errorf("registering the TenantPolicy handler: %w", err)
	}
	if _, err := p.namespaceInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, new any) {
			o, n := old.(*corev1.Namespace), new.(*corev1.Namespace)
			if !labels.Equals(o.Labels, n.Labels) {
				changed(n.Name)
			}
		},
	}); err != nil {
		return fmt.Errorf("registering the Namespace handler: %w", err)
	}
	if _, err := p.networkInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			name, err := cache.DeletionHandlingObjectToName(obj)
			if err != nil {
				utilruntime.HandleError(err)
				return
			}
			if p.capMayHaveRefused(name.Namespace) {
				changed(name.Namespace)
			}
		},
	}); err != nil {
		return fmt.Errorf("registering the Network handler: %w", err)
	}
	return nil
}

// Grants is what the Networks of one namespace may name.
type Grants struct {
	// Credentials is the strictest credentials policy of those that
	// apply to the namespace (the default policies and those that select
	// it): Any, Namespace or Controller. Conflict is set
	// when one says Namespace and another Controller.
	Credentials samplecrdv1.CredentialsPolicy
	Conflict    bool
	// Routers, ExternalNetworks and SubnetPools are by name or ID, as the
	// policies write them.
	Routers, ExternalNetworks, SubnetPools sets.Set[string]
	Adoption                               bool
	// AdoptNetworks are the networks, by ID, granted for adoption one by
	// one (adoptNetworks): only these are adopted when another namespace
	// released them (pkg/controller/reconcile/adopt.go).
	AdoptNetworks sets.Set[string]
	// MaxNetworks is the smallest cap on the namespace's Networks at
	// work of the policies that select it; nil when none caps it.
	MaxNetworks *int32
}

// GrantsFor adds up what the flags' defaults, every default policy and
// every policy that selects namespace grant. A namespace not in the cache
// (not created yet, or the cache behind) gets the flags' defaults and the
// default policies alone.
func (p *Policy) GrantsFor(namespace string) (Grants, error) {
	policies, ns, err := p.policiesAndNamespace(namespace)
	if err != nil {
		return p.grantsOf(namespace, nil, nil), err
	}
	return p.grantsOf(namespace, ns, policies), nil
}

// grantsOf adds up what the flags' defaults and those of policies that
// apply to ns (namespace's, nil when the cache does not know it) grant.
func (p *Policy) grantsOf(namespace string, ns *corev1.Namespace, policies []parsedPolicy) Grants {
	g := Grants{
		Credentials: samplecrdv1.CredentialsAny,
		Routers:     sets.New[string](), SubnetPools: sets.New[string](), AdoptNetworks: sets.New[string](),
		ExternalNetworks: sets.New(p.defaults.ExternalNetworks...),
		Adoption:         slices.Contains(p.defaults.AdoptionNamespaces, "*") || slices.Contains(p.defaults.AdoptionNamespaces, namespace),
	}
	for _, pp := range policies {
		if pp.appliesTo(ns) {
			g.add(pp.Spec)
		}
	}
	return g
}

// policiesAndNamespace reads every policy, its selector parsed, and
// namespace from the caches; a namespace not in the cache (not created
// yet, or the cache behind) is nil, and has the default policies alone.
func (p *Policy) policiesAndNamespace(namespace string) ([]parsedPolicy, *corev1.Namespace, error) {
	policies, err := p.parsedPolicies()
	if err != nil {
		return nil, nil, err
	}
	ns, err := p.namespaces.Get(namespace)
	switch {
	case apierrors.IsNotFound(err):
		return policies, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("reading namespace %s from the cache: %w", namespace, err)
	}
	return policies, ns, nil
}

// parsedPolicy is a TenantPolicy with its namespace selector parsed once,
// so that asking it of many namespaces parses nothing again.
type parsedPolicy struct {
	*samplecrdv1.TenantPolicy
	// selector is nil when the selector does not parse (the schema lets
	// few through): it then selects nothing, for a grant is never wider
	// than written.
	selector labels.Selector
}

// parsedPolicies lists the policies from the cache, each parsed.
func (p *Policy) parsedPolicies() ([]parsedPolicy, error) {
	policies, err := p.policies.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing TenantPolicies from the cache: %w", err)
	}
	out := make([]parsedPolicy, len(policies))
	for i, tp := range policies {
		out[i] = parse(tp)
	}
	return out, nil
}

// parse parses tp's namespace selector.
func parse(tp *samplecrdv1.TenantPolicy) parsedPolicy {
	pp := parsedPolicy{TenantPolicy: tp}
	if sel, err := metav1.LabelSelectorAsSelector(&tp.Spec.NamespaceSelector); err == nil {
		pp.selector = sel
	}
	return pp
}

// appliesTo reports whether the policy applies to ns: a default policy to
// every namespace, one the cache does not know (nil) included (its
// selector is never asked: the schema requires {}); another to the
// namespaces its selector selects.
func (pp parsedPolicy) appliesTo(ns *corev1.Namespace) bool {
	if pp.Spec.Default {
		return true
	}
	return ns != nil && pp.selector != nil && pp.selector.Matches(labels.Set(ns.Labels))
}

func (g *Grants) add(spec samplecrdv1.TenantPolicySpec) {
	g.Routers.Insert(spec.Routers...)
	g.ExternalNetworks.Insert(spec.ExternalNetworks...)
	g.SubnetPools.Insert(spec.SubnetPools...)
	g.AdoptNetworks.Insert(spec.AdoptNetworks...)
	g.Adoption = g.Adoption || spec.Adoption
	if c := spec.MaxNetworks; c != nil && (g.MaxNetworks == nil || *c < *g.MaxNetworks) {
		g.MaxNetworks = ptr.To(*c)
	}
	switch c := spec.Credentials; {
	case c == "" || c == samplecrdv1.CredentialsAny || c == g.Credentials:
	case g.Credentials == samplecrdv1.CredentialsAny:
		g.Credentials = c
	default:
		g.Conflict = true
	}
}

// Check returns a *reconcile.NotAllowedError when network names what its namespace
// is not granted, or would take it past its cap (maxNetworks), any other
// error when the caches cannot say. A Network being deleted is never
// refused.
//
// A Network in the controller's own namespace may name no credentials,
// whatever a policy grants: every Secret there is the controller's, its
// cloud's and the copies it keeps of each namespace's credentials
// (pkg/controller/tenancy/keeper.go), and naming one would make that namespace's
// Networks in another namespace's project, or in the controller's with a
// credential nobody granted. The controller's cloud is theirs anyway.
func (p *Policy) Check(network *samplecrdv2.Network) error {
	if network.DeletionTimestamp != nil {
		return nil
	}
	if err := p.controllerNamespaceRule(network); err != nil {
		return err
	}
	g, err := p.GrantsFor(network.Namespace)
	if err != nil {
		return err
	}
	if err := g.Check(network); err != nil {
		return err
	}
	if g.MaxNetworks != nil {
		return p.checkCap(network, *g.MaxNetworks)
	}
	return nil
}

// checkGrants is Check but for the cap, with g, the grants of network's
// namespace: a *reconcile.NotAllowedError when network names what g does
// not grant, or credentials in the controller's own namespace.
func (p *Policy) checkGrants(g Grants, network *samplecrdv2.Network) error {
	if err := p.controllerNamespaceRule(network); err != nil {
		return err
	}
	return g.Check(network)
}

// controllerNamespaceRule refuses credentials named by a Network of the
// controller's own namespace (Check says why).
func (p *Policy) controllerNamespaceRule(network *samplecrdv2.Network) error {
	if ns := network.Namespace; ns != "" && ns == p.defaults.ControllerNamespace && network.Spec.CloudCredentialsRef != nil {
		return &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: fmt.Sprintf(
			"spec.cloudCredentialsRef is not allowed in namespace %s, the controller's own: its Secrets are the controller's "+
				"(its cloud, and the kept copies of every namespace's credentials); a Network here uses the controller's cloud; "+
				"nothing was asked of Neutron (docs/tenancy.md)", ns)}
	}
	return nil
}

// checkCap returns a *reconcile.NotAllowedError when network would take its
// namespace past limit Networks at work (olderAtWork, cap.go).
func (p *Policy) checkCap(network *samplecrdv2.Network, limit int32) error {
	networks, err := p.networks.Networks(network.Namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing the Networks of namespace %s from the cache: %w", network.Namespace, err)
	}
	older := olderAtWork(networks, network)
	if older < int(limit) {
		return nil
	}
	return &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: fmt.Sprintf(
		"namespace %s already has %d Networks at work, made before this one, and a TenantPolicy caps it at maxNetworks: %d; this Network is made when an older one is deleted; nothing was asked of Neutron (docs/tenancy.md)",
		network.Namespace, older, limit)}
}

// capMayHaveRefused reports whether a Network just deleted in namespace
// may let its cap take one it refused: only then does the deletion queue
// the namespace's Networks again. A deletion in a namespace without a
// cap, or under it, costs nothing beyond itself; when the caches cannot
// say, it queues them.
func (p *Policy) capMayHaveRefused(namespace string) bool {
	g, err := p.GrantsFor(namespace)
	if err != nil {
		return true
	}
	if g.MaxNetworks == nil {
		return false
	}
	networks, err := p.networks.Networks(namespace).List(labels.Everything())
	return err != nil || mayHaveRefused(networks, *g.MaxNetworks)
}

// NamesForAdoption reports whether a TenantPolicy that applies to
// namespace (a default one, or one that selects it) names the Neutron
// network id in its adoptNetworks: adoption: true, and the flags'
// defaults, name none.
func (p *Policy) NamesForAdoption(namespace, id string) (bool, error) {
	g, err := p.GrantsFor(namespace)
	if err != nil {
		return false, err
	}
	return g.AdoptNetworks.Has(id), nil
}

// Check returns a *reconcile.NotAllowedError naming the first thing network names
// that g does not grant.
func (g Grants) Check(network *samplecrdv2.Network) error {
	spec, ns := network.Spec, network.Namespace
	refuseAs := func(reason, format string, args ...any) error {
		return &reconcile.NotAllowedError{Reason: reason, Message: fmt.Sprintf(format, args...) + reconcile.NothingAsked}
	}
	refuse := func(format string, args ...any) error { return refuseAs(samplecrdv1.ReasonNotAllowed, format, args...) }
	switch {
	case g.Conflict:
		return refuse("the TenantPolicies that apply to namespace %s disagree: one requires credentials of the namespace, another the controller's", ns)
	case g.Credentials == samplecrdv1.CredentialsNamespace && spec.CloudCredentialsRef == nil:
		return refuse("a TenantPolicy requires the Networks of namespace %s to name credentials of their own (spec.cloudCredentialsRef)", ns)
	case g.Credentials == samplecrdv1.CredentialsController && spec.CloudCredentialsRef != nil:
		return refuse("a TenantPolicy requires the Networks of namespace %s to use the controller's cloud: spec.cloudCredentialsRef is not allowed", ns)
	case spec.Adopt != nil && !g.Adoption && !g.AdoptNetworks.Has(spec.Adopt.NetworkID):
		return refuseAs(samplecrdv1.ReasonAdoptionRefused, "adoption (spec.adopt) is not allowed in namespace %s: a TenantPolicy with adoption: true grants it, or one whose adoptNetworks names the network (or the controller's deprecated --adoption-namespaces)", ns)
	}
	for i, s := range spec.Subnets {
		if s.SubnetPool != "" && !g.SubnetPools.Has(s.SubnetPool) {
			return refuse("spec.subnets[%d].subnetPool %q is not granted to namespace %s: a TenantPolicy's spec.subnetPools grants it, by the same name or ID", i, s.SubnetPool, ns)
		}
	}
	if err := g.checkRouter(network); err != nil {
		err.Message += reconcile.NothingAsked
		return err
	}
	return nil
}

// checkRouter returns the refusal of a spec.router that g does not grant.
func (g Grants) checkRouter(network *samplecrdv2.Network) *reconcile.NotAllowedError {
	r, ns := network.Spec.Router, network.Namespace
	refuse := func(reason, format string, args ...any) *reconcile.NotAllowedError {
		return &reconcile.NotAllowedError{Reason: reason, Message: fmt.Sprintf(format, args...), Router: true}
	}
	switch {
	case r == nil:
		return nil
	case r.ExternalNetwork != "" && !g.ExternalNetworks.Has(r.ExternalNetwork):
		return refuse(samplecrdv1.ReasonExternalNetworkNotAllowed, "spec.router.externalNetwork %q is not granted to namespace %s: a TenantPolicy's spec.externalNetworks grants it, by the same name or ID (or the controller's deprecated --router-external-networks)", r.ExternalNetwork, ns)
	case r.Name != "" && !g.Routers.Has(r.Name):
		return refuse(samplecrdv1.ReasonNotAllowed, "spec.router.name %q is not granted to namespace %s: a TenantPolicy's spec.routers grants an existing router, by the same name or ID", r.Name, ns)
	case r.ID != "" && !g.Routers.Has(r.ID):
		return refuse(samplecrdv1.ReasonNotAllowed, "spec.router.id %q is not granted to namespace %s: a TenantPolicy's spec.routers grants an existing router, by the same name or ID", r.ID, ns)
	}
	return nil
}
