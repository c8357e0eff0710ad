package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TenantPolicy is a cluster administrator's say over what the Networks of
// some namespaces may name outside themselves: which credentials (and so
// which OpenStack project) they may use, which existing routers, external
// networks and subnet pools they may name, and whether they may adopt.
// It is cluster-scoped and selects namespaces by label, as Cluster API
// Provider OpenStack's OpenStackClusterIdentity does: only a cluster
// administrator writes it, and a namespace's author cannot grant itself
// anything by writing a Network.
//
// Grants add up: a namespace may use what any policy that selects it
// grants, and what every default policy (spec.default) grants. A
// namespace no policy selects gets the default policies' say or, with
// none, the safe default: its own
// Networks in the controller's project or its own credentials, no
// existing router, no pool, no adoption (and what the controller's
// deprecated --adoption-namespaces and --router-external-networks grant
// every namespace). docs/tenancy.md has the whole model.
//
// The schema and validation of this type live in
// artifacts/crd/tenantpolicies.samplecrd.k8s.io.yaml.
type TenantPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the policy grants, and to whom.
	Spec TenantPolicySpec `json:"spec"`

	// Status is how full the namespaces the policy applies to are
	// against their caps, as the leading controller last counted.
	// +optional
	Status TenantPolicyStatus `json:"status,omitempty"`
}

// TenantPolicySpec says which namespaces a TenantPolicy selects and what
// it grants their Networks. Names and IDs are matched as the Network
// writes them: a router granted by ID must be named by ID.
type TenantPolicySpec struct {
	// NamespaceSelector selects the namespaces whose Networks the policy
	// grants to, by the namespaces' labels; {} selects every namespace.
	// kubernetes.io/metadata.name selects one by name, and is the one
	// label nobody but the API server can set: any other selects whatever
	// namespace those who may label namespaces make it select. A default
	// policy's is {}.
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// Default, when true, makes the policy apply to every namespace,
	// whatever its labels, and also to one the controller's cache does
	// not know yet: its restrictions bind, and its grants reach, every
	// namespace, added up with those of the policies that select it. A
	// namespace no other policy selects gets the default policies alone.
	// Its namespaceSelector must be {}.
	// +optional
	Default bool `json:"default,omitempty"`

	// Credentials says which credentials the namespaces' Networks may
	// use: Any (the default) the controller's own cloud or a Secret of
	// their namespace (spec.cloudCredentialsRef); Namespace only a Secret
	// of their namespace, so that nothing of theirs lands in the
	// controller's shared project; Controller only the controller's
	// cloud. Where policies differ, the stricter holds.
	// +optional
	Credentials CredentialsPolicy `json:"credentials,omitempty"`

	// Routers are the existing routers, by name or ID, that the
	// namespaces' Networks may attach to (spec.router.name or .id). The
	// router is looked up in the Network's own project only, and a router
	// that network-controller made for a Network of its own is never
	// another Network's to attach to.
	// +optional
	// +listType=set
	Routers []string `json:"routers,omitempty"`

	// ExternalNetworks are the external networks, by name or ID, on which
	// the namespaces' Networks may have a router of their own
	// (spec.router.externalNetwork).
	// +optional
	// +listType=set
	ExternalNetworks []string `json:"externalNetworks,omitempty"`

	// SubnetPools are the subnet pools, by name or ID, that the
	// namespaces' Networks may take a range from (spec.subnetPool): a pool
	// of the Network's own project, or one shared with every project.
	// +optional
	// +listType=set
	SubnetPools []string `json:"subnetPools,omitempty"`

	// Adoption, when true, lets the namespaces' Networks adopt an
	// existing Neutron network of their own project (spec.adopt).
	// +optional
	Adoption bool `json:"adoption,omitempty"`

	// AdoptNetworks are Neutron networks, by ID, that the namespaces'
	// Networks may adopt (spec.adopt.networkID), each granted as
	// adoption grants any: only a network named here is adopted when a
	// Network of another namespace (or cluster) released it with
	// deletionPolicy Orphan, and only of a network named here (or one the
	// namespace released itself) does a mismatch name the fields that
	// differ. A shared or external network is never adopted.
	// +optional
	// +listType=set
	AdoptNetworks []string `json:"adoptNetworks,omitempty"`
	// MaxNetworks caps how many Networks each selected namespace may
	// have at work: the oldest MaxNetworks (by creation, then name) are
	// reconciled, and a newer one is refused (NotAllowed) until an older
	// one is gone. Unset, no cap; 0 refuses every new Network. Where
	// policies differ, the smallest cap holds. Deletion is never refused.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxNetworks *int32 `json:"maxNetworks,omitempty"`
}

// MaxNamespacesInStatus bounds TenantPolicyStatus.Namespaces, and
// MaxWaitingInStatus each namespace's Waiting: a policy that selects
// 10,000 namespaces has counts of them all, and the names of the fullest.
const (
	MaxNamespacesInStatus = 100
	MaxWaitingInStatus    = 10
)

// TenantPolicyStatus is how full the namespaces a TenantPolicy applies to
// are against their caps (maxNetworks): written by the leading controller
// with server-side apply, only when it changes.
type TenantPolicyStatus struct {
	// ObservedGeneration is the generation of the spec the counts are
	// for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Namespaces is how many namespaces the policy applies to: those it
	// selects, every namespace for a default policy.
	// +optional
	Namespaces int32 `json:"namespaces,omitempty"`
	// NamespacesAtCap is how many of them have as many Networks at work
	// as their cap allows, or more.
	// +optional
	NamespacesAtCap int32 `json:"namespacesAtCap,omitempty"`
	// NetworksWaiting is how many of their Networks wait for a cap.
	// +optional
	NetworksWaiting int32 `json:"networksWaiting,omitempty"`
	// Usage is, for at most MaxNamespacesInStatus (100) of those
	// namespaces that have Networks, their Networks at work against
	// their cap: those with Networks waiting first, then the fullest,
	// then by name.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	Usage []NamespaceUsage `json:"usage,omitempty"`
}

// NamespaceUsage is one namespace's Networks at work against its cap.
type NamespaceUsage struct {
	// Namespace is the namespace's name.
	Namespace string `json:"namespace"`
	// AtWork is how many of its Networks the controller has taken on
	// (its finalizer is on, or it made something in Neutron): what a cap
	// counts.
	AtWork int32 `json:"atWork"`
	// MaxNetworks is the cap that binds the namespace: the smallest of
	// those of every policy that applies to it, this one's or another's.
	// Unset, no cap.
	// +optional
	MaxNetworks *int32 `json:"maxNetworks,omitempty"`
	// Waiting is how many of its Networks wait for the cap: each is
	// refused (NotAllowed) until an older one is gone.
	// +optional
	Waiting int32 `json:"waiting,omitempty"`
	// WaitingNetworks names at most MaxWaitingInStatus (10) of those,
	// the oldest first: the next to be made.
	// +optional
	// +listType=atomic
	WaitingNetworks []string `json:"waitingNetworks,omitempty"`
}

// CredentialsPolicy is which credentials a namespace's Networks may use.
// +enum
type CredentialsPolicy string

// The credentials policies.
const (
	// CredentialsAny allows the controller's cloud and a Secret of the
	// Network's namespace.
	CredentialsAny CredentialsPolicy = "Any"
	// CredentialsNamespace requires a Secret of the Network's namespace.
	CredentialsNamespace CredentialsPolicy = "Namespace"
	// CredentialsController requires the controller's own cloud.
	CredentialsController CredentialsPolicy = "Controller"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// TenantPolicyList is a list of TenantPolicies.
type TenantPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the TenantPolicies.
	Items []TenantPolicy `json:"items"`
}
