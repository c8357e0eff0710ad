package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Network declares an IP network that must exist in OpenStack Neutron: a
// Neutron network with one subnet of Spec.CIDR whose gateway is Spec.Gateway.
// The user says what; network-controller decides how, and reports what it
// did in Status.
//
// The schema and validation of this type live in
// artifacts/crd/networks.samplecrd.k8s.io.yaml; a unit test keeps the two in
// agreement field for field.
type Network struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the network the user wants.
	Spec NetworkSpec `json:"spec"`

	// Status is what the controller last observed and did.
	// +optional
	Status NetworkStatus `json:"status,omitempty"`
}

// NetworkSpec is the desired state of a Network. CIDR and Gateway are the
// core of the API; every other field is an option with Neutron's own
// default, documented in docs/network-reference.md.
type NetworkSpec struct {
	// CIDR is the network's address range in canonical form, IPv4 or IPv6,
	// e.g. "192.168.0.0/16" or "fd00:10::/64". It cannot change once set:
	// a Neutron subnet's range is fixed, so a different range is a different
	// Network. Exactly one of CIDR and SubnetPool is set.
	// +optional
	CIDR string `json:"cidr,omitempty"`

	// SubnetPool names a Neutron subnet pool, by name or ID, that allocates
	// the subnet's range instead of CIDR; status.cidr then says which range
	// it is: a pool of the Network's project, or a shared one, that a
	// TenantPolicy grants the namespace. Fixed at creation.
	// +optional
	SubnetPool string `json:"subnetPool,omitempty"`

	// PrefixLength is the length of the range SubnetPool allocates; left
	// out, the pool's default. Only with SubnetPool; fixed at creation.
	// +optional
	PrefixLength *int32 `json:"prefixLength,omitempty"`

	// Gateway is the router address of the network. It must lie inside CIDR
	// and be neither its network address nor, for IPv4, its broadcast
	// address. It may change. Left out, it is the first host address of
	// CIDR, as Neutron would choose; NoGateway asks for none at all.
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// NoGateway, when true, gives the subnet no gateway: hosts get no
	// default route from DHCP or router advertisements. It excludes
	// Gateway. It may change either way.
	// +optional
	NoGateway bool `json:"noGateway,omitempty"`

	// DNSNameservers are the DNS servers DHCP hands out, in order of
	// preference: addresses of CIDR's family, at most 5 (Neutron's default
	// max_dns_nameservers), no repeats. Empty: none.
	// +optional
	// +listType=atomic
	DNSNameservers []string `json:"dnsNameservers,omitempty"`

	// HostRoutes are the extra routes DHCP hands out, at most 20 (Neutron's
	// default max_subnet_host_routes), of CIDR's family, no repeats.
	// +optional
	// +listType=atomic
	HostRoutes []HostRoute `json:"hostRoutes,omitempty"`

	// AllocationPools are the ranges Neutron allocates ports' addresses
	// from. They lie inside CIDR's host addresses, do not overlap and do not
	// contain the gateway. Empty: every host address but the gateway, as
	// Neutron computes it.
	// +optional
	// +listType=atomic
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`

	// EnableDHCP says whether Neutron serves DHCP (for IPv6: DHCPv6) on
	// the subnet. Default true.
	// +optional
	EnableDHCP *bool `json:"enableDHCP,omitempty"`

	// IPv6AddressMode is how hosts on an IPv6 subnet get their addresses:
	// slaac, dhcpv6-stateful or dhcpv6-stateless. Only for IPv6; fixed at
	// creation, as Neutron has it.
	// +optional
	IPv6AddressMode IPv6Mode `json:"ipv6AddressMode,omitempty"`

	// IPv6RAMode is how router advertisements are sent on an IPv6 subnet:
	// slaac, dhcpv6-stateful or dhcpv6-stateless. Only for IPv6; when both
	// modes are set they are equal. Fixed at creation, as Neutron has it.
	// +optional
	IPv6RAMode IPv6Mode `json:"ipv6RAMode,omitempty"`

	// MTU is the network's maximum transmission unit in bytes: at least 68,
	// at least 1280 for IPv6, at most what Neutron allows for the network
	// type (1442 for Geneve on a 1500 physical MTU). It may change. Left
	// out, Neutron chooses its largest; removing it later leaves the MTU as
	// it is.
	// +optional
	MTU *int32 `json:"mtu,omitempty"`

	// DeletionPolicy says what becomes of the Neutron network and subnet
	// when the Network is deleted: Delete deletes them; Orphan leaves them
	// in place without the ownership mark, so that no controller ever
	// touches them again (an adopted network gets its own name and
	// description back). Left out: Delete for what the controller created,
	// Orphan for an adopted network. It may change.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Adopt names an existing Neutron network to take under management
	// instead of creating one. Its subnet of CIDR must already match the
	// spec; the controller then marks both as this Network's, and from
	// there on they are managed as if it had created them, except that
	// deleting the Network releases them unless deletionPolicy says
	// Delete. The network must be in the Network's project, and a
	// TenantPolicy must grant adoption to the namespace (or the
	// controller's deprecated --adoption-namespaces). Fixed at creation.
	// +optional
	Adopt *Adoption `json:"adopt,omitempty"`

	// CloudCredentialsRef names the credentials the controller uses for
	// this Network, in place of its own: a Secret in the Network's own
	// namespace with a clouds.yaml, and the cloud in it. The network and
	// subnet are then made in that cloud's project, under its quota. The
	// cloud must authenticate at the controller's own Keystone and may not
	// name files. The namespace grants the controller the read of that
	// one Secret (docs/tenancy.md). Left out, the controller's own cloud.
	// Fixed at creation.
	// +optional
	CloudCredentialsRef *CloudCredentialsReference `json:"cloudCredentialsRef,omitempty"`

	// Router attaches the subnet, on the gateway address, to a Neutron
	// router of the Network's project: an existing one (Name or ID), or
	// one the controller makes for this Network with its gateway on an
	// external network (ExternalNetwork), so that the gateway answers and
	// the network reaches what the router reaches. The controller makes
	// the router interface itself, marked as this Network's, and removes
	// only that one: an existing router, and every other interface on it,
	// stay another's. It may change (the subnet moves to the new router)
	// or go (the subnet is detached, and a router the controller made is
	// deleted). Needs a gateway, and the gateway is fixed while a router
	// is set: Neutron refuses to move an address a router interface holds.
	// +optional
	Router *RouterReference `json:"router,omitempty"`

	// WriteConfigMapToRef names a ConfigMap of the Network's own namespace
	// into which the controller publishes what a consumer needs, so that
	// Pods (with envFrom) and tools read it without any right on
	// Networks: the keys ConfigMapKey* name. The controller creates the
	// ConfigMap and controls it (an ownerReference, so that the garbage
	// collector deletes it with the Network), and repairs it when it is
	// edited; a ConfigMap of that name that it does not control is never
	// written, and a Warning Event says so. It may change or go: the
	// ConfigMap of the old name is deleted. It is Crossplane's
	// writeConnectionSecretToRef, as a ConfigMap: nothing in it is secret.
	// +optional
	WriteConfigMapToRef *ConfigMapReference `json:"writeConfigMapToRef,omitempty"`
}

// ConfigMapReference names a ConfigMap of the Network's namespace; there
// is no namespace field, so a Network never writes into another namespace.
type ConfigMapReference struct {
	// Name is the ConfigMap's name.
	Name string `json:"name"`
}

// The keys of the ConfigMap a Network publishes (WriteConfigMapToRef),
// named as environment variables so that envFrom takes them as they are.
// ROUTER_ID is there only while the subnet has a router interface.
const (
	ConfigMapKeyNetworkID = "NETWORK_ID"
	ConfigMapKeySubnetID  = "SUBNET_ID"
	ConfigMapKeyProjectID = "PROJECT_ID"
	ConfigMapKeyCIDR      = "CIDR"
	ConfigMapKeyGateway   = "GATEWAY"
	ConfigMapKeyMTU       = "MTU"
	ConfigMapKeyRouterID  = "ROUTER_ID"
)

// RouterReference says which router: exactly one of Name, ID (an
// existing router of the Network's project) and ExternalNetwork (a router
// of the controller's own).
type RouterReference struct {
	// Name is the router's name; exactly one router of the project may
	// have it. A TenantPolicy must grant it to the namespace.
	// +optional
	Name string `json:"name,omitempty"`
	// ID is the router's ID, in the Network's project. A TenantPolicy
	// must grant it to the namespace.
	// +optional
	ID string `json:"id,omitempty"`
	// ExternalNetwork, by name or ID, asks for a router of the Network's
	// own, made and deleted with it, whose gateway is on that external
	// network. Only the external networks a TenantPolicy grants the
	// namespace (or the controller's deprecated --router-external-networks
	// grants every namespace): which networks reach outside is the cloud
	// administrator's to say.
	// +optional
	ExternalNetwork string `json:"externalNetwork,omitempty"`
}

// CloudCredentialsReference names a cloud in a clouds.yaml held by a
// Secret in the Network's namespace; there is no namespace field, so a
// Network can never name another namespace's Secret.
type CloudCredentialsReference struct {
	// SecretName is the Secret, in the Network's namespace, whose key
	// "clouds.yaml" holds the clouds.yaml.
	SecretName string `json:"secretName"`
	// CloudName is the cloud of that clouds.yaml to use.
	CloudName string `json:"cloudName"`
}

// CloudsYAMLKey is the key of a credentials Secret that holds the
// clouds.yaml, as in ORC's and the OpenStack cloud provider's Secrets.
const CloudsYAMLKey = "clouds.yaml"

// Adoption names the Neutron network a Network adopts.
type Adoption struct {
	// NetworkID is the Neutron network's ID.
	NetworkID string `json:"networkID"`
}

// DeletionPolicy is what deleting a Network does to its Neutron resources.
// +enum
type DeletionPolicy string

// The deletion policies.
const (
	DeletionPolicyDelete DeletionPolicy = "Delete"
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// HostRoute is a route DHCP hands out: traffic to Destination goes through
// NextHop.
type HostRoute struct {
	// Destination is a CIDR in canonical form.
	Destination string `json:"destination"`
	// NextHop is the router's address.
	NextHop string `json:"nextHop"`
}

// AllocationPool is a range of addresses, both ends included.
type AllocationPool struct {
	// Start is the range's first address.
	Start string `json:"start"`
	// End is the range's last address; not below Start.
	End string `json:"end"`
}

// IPv6Mode is one of Neutron's IPv6 address and router advertisement modes.
// +enum
type IPv6Mode string

// The IPv6 modes Neutron knows.
const (
	IPv6ModeSLAAC           IPv6Mode = "slaac"
	IPv6ModeDHCPv6Stateful  IPv6Mode = "dhcpv6-stateful"
	IPv6ModeDHCPv6Stateless IPv6Mode = "dhcpv6-stateless"
)

// NetworkStatus is the observed state of a Network.
type NetworkStatus struct {
	// ObservedGeneration is the metadata.generation that the conditions
	// describe. A value below metadata.generation means the controller has
	// not yet acted on the latest spec.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the latest observations of the Network's state. The
	// controller maintains Ready, the kstatus conditions that go with it
	// (Reconciling, Stalled), and QuotaNearlyFull while the Network's
	// project has used 90% of a Neutron quota.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// NetworkID is the ID of the Neutron network that implements this Network.
	// +optional
	NetworkID string `json:"networkID,omitempty"`

	// SubnetID is the ID of the Neutron subnet that implements Spec.CIDR.
	// +optional
	SubnetID string `json:"subnetID,omitempty"`

	// CIDR is the subnet's range as Neutron holds it.
	// +optional
	CIDR string `json:"cidr,omitempty"`

	// Gateway is the subnet's gateway as Neutron holds it; empty when it
	// has none.
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// AllocationPools are the subnet's allocation pools as Neutron holds
	// them.
	// +optional
	// +listType=atomic
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`

	// MTU is the network's MTU as Neutron holds it.
	// +optional
	MTU int32 `json:"mtu,omitempty"`

	// ProjectID is the OpenStack project that holds the network and
	// subnet: the controller's own, or that of spec.cloudCredentialsRef.
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// Place is where the Network's Neutron resources live: the Keystone,
	// region, interface and project its credentials reached when it was
	// recorded, before anything was made or adopted in Neutron. It never
	// changes afterwards: credentials that come to reach another place
	// are refused, and nothing is written anywhere, so a network is never
	// made twice or left behind where nothing lists it. Absent on a
	// Neutron without Keystone (noauth), where there is one place.
	// +optional
	Place *Place `json:"place,omitempty"`

	// NeutronStatus is the Neutron network's own status, e.g. ACTIVE or
	// DOWN.
	// +optional
	NeutronStatus string `json:"neutronStatus,omitempty"`

	// Router is the router the subnet is attached to, and the interface
	// the controller made for it; absent while it is attached to none.
	// +optional
	Router *RouterStatus `json:"router,omitempty"`

	// Adopted records the names and descriptions that the network and
	// subnet spec.adopt named had before the controller marked them as
	// this Network's. It is written before anything is marked, and
	// releasing them (deletionPolicy: Orphan) puts them back.
	// +optional
	Adopted *AdoptedResources `json:"adopted,omitempty"`
}

// Place is where in OpenStack a Network's Neutron resources live. Two
// places are the same only when every field is.
type Place struct {
	// AuthURL is the Keystone endpoint the credentials authenticate at.
	AuthURL string `json:"authURL"`
	// Region is the region whose Neutron endpoint the catalog gave; empty
	// when the cloud names none.
	// +optional
	Region string `json:"region,omitempty"`
	// Interface is the catalog's interface (public, internal, admin) the
	// endpoint was chosen by.
	// +optional
	Interface string `json:"interface,omitempty"`
	// ProjectID is the project the credentials' token is scoped to.
	ProjectID string `json:"projectID"`
}

// RouterStatus is a router interface of the Network's subnet.
type RouterStatus struct {
	// ID is the router's ID.
	ID string `json:"id"`
	// InterfacePortID is the Neutron port of the router's interface on
	// the subnet: made by the controller, and the only one it removes.
	InterfacePortID string `json:"interfacePortID"`
	// InterfaceAddress is the interface's address: the subnet's gateway.
	// +optional
	InterfaceAddress string `json:"interfaceAddress,omitempty"`
	// ExternalNetworkID is the external network of the gateway of a
	// router the controller made (spec.router.externalNetwork).
	// +optional
	ExternalNetworkID string `json:"externalNetworkID,omitempty"`
}

// AdoptedResources are an adopted Neutron network and subnet as they were
// before the controller marked them.
type AdoptedResources struct {
	// NetworkID is the adopted network's ID.
	NetworkID string `json:"networkID"`
	// NetworkName is the network's name before adoption.
	// +optional
	NetworkName string `json:"networkName,omitempty"`
	// NetworkDescription is the network's description before adoption.
	// +optional
	NetworkDescription string `json:"networkDescription,omitempty"`
	// SubnetID is the adopted subnet's ID.
	SubnetID string `json:"subnetID"`
	// SubnetName is the subnet's name before adoption.
	// +optional
	SubnetName string `json:"subnetName,omitempty"`
	// SubnetDescription is the subnet's description before adoption.
	// +optional
	SubnetDescription string `json:"subnetDescription,omitempty"`
}

// ConditionReady is the condition type that says whether the Neutron network
// and subnet exist and match the spec.
const ConditionReady = "Ready"

// The kstatus conditions (github.com/fluxcd/cli-utils/pkg/kstatus), which Flux,
// kpt and kubectl-style waiters read without a health check of their own.
// While Ready is False exactly one of them is True, with Ready's reason
// and message; while Ready is True neither is present.
const (
	// ConditionReconciling: the controller is still working toward the
	// spec and expects to get there by itself (Provisioning,
	// NeutronUnavailable, Deleting).
	ConditionReconciling = "Reconciling"
	// ConditionStalled: the controller cannot get there until someone
	// acts: changes the spec, fixes the credentials, raises the quota,
	// frees the ports (every other reason).
	ConditionStalled = "Stalled"
)

// ConditionQuotaNearlyFull is True while the Network's OpenStack project
// has used at least 90% of its Neutron quota of networks, subnets, ports
// or routers, whoever used them, with reason QuotaNearlyFullReason and a
// message that says how many of each such resource are used, as the
// controller's latest list of the project read them. It is absent
// otherwise, and Ready is unaffected: it warns that the project's next
// creates may be refused (ReasonNeutronQuotaExceeded), before they are
// for a limit of 10 or more (below 10, 90% is the whole limit).
const ConditionQuotaNearlyFull = "QuotaNearlyFull"

// QuotaNearlyFullReason is the reason of ConditionQuotaNearlyFull. It is
// no reason of Ready, which Reason* names are (tools match on those).
const QuotaNearlyFullReason = "NeutronQuotaNearlyFull"

// Reasons of the Ready condition. They are part of the API: tools may match
// on them, so they only ever gain values.
const (
	// ReasonProvisioned: the Neutron network and subnet match the spec.
	ReasonProvisioned = "Provisioned"
	// ReasonProvisioning: the controller is creating or updating Neutron resources.
	ReasonProvisioning = "Provisioning"
	// ReasonNeutronUnavailable: Neutron could not be reached or answered with
	// a server error; the controller retries with backoff.
	ReasonNeutronUnavailable = "NeutronUnavailable"
	// ReasonCIDRConflict: Neutron refused the subnet because its range
	// overlaps another one, or the actual subnet's range differs from the spec.
	ReasonCIDRConflict = "CIDRConflict"
	// ReasonNeutronRejected: Neutron refused the request as invalid or
	// forbidden (a 4xx other than those below); the message carries
	// Neutron's own words. Terminal until the spec changes: retried
	// unchanged only every few minutes, at once on a spec change.
	ReasonNeutronRejected = "NeutronRejected"
	// ReasonInvalidSpec: the spec passed the API server's checks but
	// Neutron would refuse it, for what the schema cannot check (e.g.
	// allocation pools that overlap, or that contain the gateway). Nothing
	// is asked of Neutron; the message says what to fix. Terminal until the
	// spec changes.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonAdoptionMismatch: the network named by spec.adopt exists, but
	// its subnet of spec.cidr is missing or differs from the spec; the
	// message lists the differences. Nothing was changed in Neutron.
	ReasonAdoptionMismatch = "AdoptionMismatch"
	// ReasonAdoptionRefused: adoption is not allowed in the Network's
	// namespace (no TenantPolicy grants it), or the network named by spec.adopt does not exist, or
	// another cluster's controller or another Network owns it. Nothing was
	// changed in Neutron, and the message shows nothing of the network.
	ReasonAdoptionRefused = "AdoptionRefused"
	// ReasonAuthenticationFailed: the cloud (Keystone, or Neutron) refused
	// the controller's credentials. Fix the clouds.yaml Secret: the
	// controller reads it again and retries without a restart.
	ReasonAuthenticationFailed = "AuthenticationFailed"
	// ReasonCredentialsUnavailable: spec.cloudCredentialsRef names a
	// Secret the controller cannot use: it does not exist, the namespace
	// has not granted the controller its read, or its clouds.yaml is
	// malformed, lacks the cloud, or names another Keystone or a file; or
	// the credentials now reach another place than status.place.
	// Nothing was asked of Neutron; the message says which. Retried with
	// capped backoff, so fixing the Secret or the grant is enough.
	ReasonCredentialsUnavailable = "CredentialsUnavailable"
	// ReasonNeutronQuotaExceeded: Neutron refused a create because the
	// project's quota is used up; the message carries Neutron's words.
	// Retried with capped backoff (--max-retry-delay), so the Network
	// becomes Ready by itself once the quota is raised or resources freed.
	ReasonNeutronQuotaExceeded = "NeutronQuotaExceeded"
	// ReasonRouterNotFound: spec.router names no router of the Network's
	// project, or a name more than one router has. The network and subnet
	// exist; nothing is attached. Retried with capped backoff, so the
	// Network becomes Ready by itself once the router exists.
	ReasonRouterNotFound = "RouterNotFound"
	// ReasonExternalNetworkNotAllowed: spec.router.externalNetwork names
	// no external network, or one no TenantPolicy (nor the controller's
	// deprecated --router-external-networks) grants the Network's
	// namespace. No router was made.
	// Retried with capped backoff.
	ReasonExternalNetworkNotAllowed = "ExternalNetworkNotAllowed"
	// ReasonNotAllowed: the Network names something outside itself that
	// no TenantPolicy grants its namespace (an existing router, a subnet
	// pool, credentials of a kind the policy excludes), or a router that
	// network-controller made for another Network. Nothing was asked of
	// Neutron. Retried when a TenantPolicy or the namespace's labels
	// change, and every few minutes.
	ReasonNotAllowed = "NotAllowed"
	// ReasonDeletionBlocked: the Network is being deleted, but Neutron
	// refuses to delete its subnet or network because ports still use it
	// (e.g. a VM's), or its network holds subnets the Network did not
	// make, which Neutron would delete with it; the message names the
	// ports (by ID and device_owner) or the subnets. The finalizer stays;
	// retried with capped backoff until they are gone.
	ReasonDeletionBlocked = "DeletionBlocked"
	// ReasonSubnetRemovalBlocked: a subnet that spec.subnets no longer
	// names (samplecrd.k8s.io/v2) still has ports on it, e.g. a VM's; the
	// message names them by ID and device_owner. Nothing was deleted; the
	// rest of the spec is in place. Retried with capped backoff until the
	// ports are gone.
	ReasonSubnetRemovalBlocked = "SubnetRemovalBlocked"
	// ReasonDeleting: the Network is being deleted and its Neutron resources
	// are being removed.
	ReasonDeleting = "Deleting"
	// ReasonInternalError: the controller stopped itself before a request
	// that would have broken one of its own rules (e.g. writing a Neutron
	// resource it does not hold as this Network's). Nothing was changed in
	// Neutron. It is a bug: report it with the controller's log.
	ReasonInternalError = "InternalError"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkList is a list of Networks.
type NetworkList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Networks.
	Items []Network `json:"items"`
}

// NetworkFinalizer is the finalizer network-controller puts on every Network
// before it creates anything in Neutron, and removes once Neutron has
// confirmed the deletion of the Network's subnet and network. It is what
// makes "delete the Network" mean "and its Neutron resources", even when the
// controller was not running at the moment of the delete.
const NetworkFinalizer = "samplecrd.k8s.io/neutron-cleanup"
