package v2

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Network declares an IP network that must exist in OpenStack Neutron: one
// Neutron network holding one subnet per entry of Spec.Subnets, an IPv4
// range, an IPv6 range, or both. The user says what; network-controller
// decides how, and reports what it did in Status.
//
// v2 is the hub and storage version of Network; v1 is a spoke that converts
// to and from it (pkg/apis/samplecrd/v1/conversion.go). A v1 Network is a
// v2 Network with one subnet.
//
// The schema and validation of this type live in
// artifacts/crd/networks.samplecrd.k8s.io.yaml, version v2; a unit test
// keeps the two in agreement field for field.
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

// NetworkSpec is the desired state of a Network: its subnets, and the
// options that belong to the Neutron network as a whole.
type NetworkSpec struct {
	// Subnets are the network's ranges, one Neutron subnet each, keyed by
	// cidr so that server-side apply merges them entry by entry.
	//
	// There is at least one, so that every v2 Network has a v1 form, and
	// at most one per IP family, so at most two. Neutron itself allows
	// any number of subnets on a network, but:
	//   - Kubernetes' own dual-stack rule is one range per family: a
	//     Service's ipFamilies and a Pod's podIPs hold at most one of each;
	//   - a router holds one interface per subnet, and spec.router attaches
	//     the network's gateway on each family once;
	//   - one range per family is what users of Kube-OVN (cidrBlock: an
	//     IPv4 and an IPv6 range) and of ORC (one Subnet per ipVersion)
	//     declare;
	//   - the published ConfigMap and status name one subnet per family, so
	//     a consumer never has to choose between two ranges of one family.
	// A Network that needs more ranges of one family is two Networks.
	// Adding a subnet creates it in Neutron; removing one deletes it from
	// Neutron, unless ports are on it, which blocks it with a reason.
	// +listType=map
	// +listMapKey=cidr
	Subnets []SubnetSpec `json:"subnets"`

	// MTU is the network's maximum transmission unit in bytes: at least 68,
	// at least 1280 when a subnet is IPv6, at most what Neutron allows for
	// the network type. It may change. Left out, Neutron chooses its
	// largest.
	// +optional
	MTU *int32 `json:"mtu,omitempty"`

	// DeletionPolicy says what becomes of the Neutron network and subnets
	// when the Network is deleted, as in v1.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Adopt names an existing Neutron network to take under management
	// instead of creating one; each of its subnets of a spec.subnets cidr
	// must already match that entry. Fixed at creation, as in v1.
	// +optional
	Adopt *Adoption `json:"adopt,omitempty"`

	// CloudCredentialsRef names the credentials the controller uses for
	// this Network, in place of its own, as in v1. Fixed at creation.
	// +optional
	CloudCredentialsRef *CloudCredentialsReference `json:"cloudCredentialsRef,omitempty"`

	// Router attaches every subnet, on its gateway address, to one Neutron
	// router of the Network's project, as v1 attaches its one subnet.
	// Needs a gateway on every subnet; a subnet's gateway is fixed while a
	// router is set.
	// +optional
	Router *RouterReference `json:"router,omitempty"`

	// WriteConfigMapToRef names a ConfigMap of the Network's own namespace
	// into which the controller publishes what a consumer needs, as in v1.
	// +optional
	WriteConfigMapToRef *ConfigMapReference `json:"writeConfigMapToRef,omitempty"`
}

// SubnetSpec is one range of a Network: every option v1 has at the top
// level that belongs to a Neutron subnet.
type SubnetSpec struct {
	// CIDR is the subnet's range in canonical form, IPv4 or IPv6, and the
	// key of spec.subnets. Exactly one of CIDR and SubnetPool is set; a
	// subnet allocated from a pool has CIDR "" (the default: a list-map
	// key must always be present), so a Network has at most one pool
	// subnet. A different CIDR is a different subnet: changing it removes
	// the old subnet and adds the new one.
	// +default=""
	// +optional
	CIDR string `json:"cidr"`

	// SubnetPool names a Neutron subnet pool, by name or ID, that allocates
	// the subnet's range instead of CIDR; status.subnets then says which
	// range it is. Fixed at creation.
	// +optional
	SubnetPool string `json:"subnetPool,omitempty"`

	// PrefixLength is the length of the range SubnetPool allocates; left
	// out, the pool's default. Only with SubnetPool; fixed at creation.
	// +optional
	PrefixLength *int32 `json:"prefixLength,omitempty"`

	// Gateway is the subnet's router address: inside CIDR, neither its
	// network address nor, for IPv4, its broadcast address. It may change.
	// Left out, the first host address of CIDR; NoGateway asks for none.
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// NoGateway, when true, gives the subnet no gateway. It excludes
	// Gateway. It may change either way.
	// +optional
	NoGateway bool `json:"noGateway,omitempty"`

	// DNSNameservers are the DNS servers DHCP hands out, in order of
	// preference: addresses of CIDR's family, at most 5, no repeats.
	// +optional
	// +listType=atomic
	DNSNameservers []string `json:"dnsNameservers,omitempty"`

	// HostRoutes are the extra routes DHCP hands out, at most 20, of
	// CIDR's family, no repeats.
	// +optional
	// +listType=atomic
	HostRoutes []HostRoute `json:"hostRoutes,omitempty"`

	// AllocationPools are the ranges Neutron allocates ports' addresses
	// from, inside CIDR's host addresses. Empty: every host address but
	// the gateway.
	// +optional
	// +listType=atomic
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`

	// EnableDHCP says whether Neutron serves DHCP (for IPv6: DHCPv6) on
	// the subnet. Default true.
	// +optional
	EnableDHCP *bool `json:"enableDHCP,omitempty"`

	// IPv6AddressMode is how hosts on an IPv6 subnet get their addresses.
	// Only for IPv6; fixed at creation.
	// +optional
	IPv6AddressMode IPv6Mode `json:"ipv6AddressMode,omitempty"`

	// IPv6RAMode is how router advertisements are sent on an IPv6 subnet.
	// Only for IPv6; equal to IPv6AddressMode when both are set; fixed at
	// creation.
	// +optional
	IPv6RAMode IPv6Mode `json:"ipv6RAMode,omitempty"`
}

// ConfigMapReference names a ConfigMap of the Network's namespace.
type ConfigMapReference struct {
	// Name is the ConfigMap's name.
	Name string `json:"name"`
}

// RouterReference says which router: exactly one of Name, ID (an
// existing router of the Network's project) and ExternalNetwork (a router
// of the controller's own).
type RouterReference struct {
	// Name is the router's name; exactly one router of the project may
	// have it.
	// +optional
	Name string `json:"name,omitempty"`
	// ID is the router's ID, in the Network's project.
	// +optional
	ID string `json:"id,omitempty"`
	// ExternalNetwork, by name or ID, asks for a router of the Network's
	// own whose gateway is on that external network.
	// +optional
	ExternalNetwork string `json:"externalNetwork,omitempty"`
}

// CloudCredentialsReference names a cloud in a clouds.yaml held by a
// Secret in the Network's namespace.
type CloudCredentialsReference struct {
	// SecretName is the Secret, in the Network's namespace, whose key
	// "clouds.yaml" holds the clouds.yaml.
	SecretName string `json:"secretName"`
	// CloudName is the cloud of that clouds.yaml to use.
	CloudName string `json:"cloudName"`
}

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

// NetworkStatus is the observed state of a Network: what belongs to the
// network as a whole, and one entry per subnet Neutron holds.
type NetworkStatus struct {
	// ObservedGeneration is the metadata.generation that the conditions
	// describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the latest observations of the Network's state, as in
	// v1: the controller maintains Ready, the kstatus conditions, and
	// QuotaNearlyFull.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// NetworkID is the ID of the Neutron network that implements this Network.
	// +optional
	NetworkID string `json:"networkID,omitempty"`

	// Subnets are the network's subnets as Neutron holds them, keyed by
	// their range: one per spec.subnets entry that exists in Neutron, and
	// for a moment one that was removed from the spec and is not yet
	// deleted.
	// +optional
	// +listType=map
	// +listMapKey=cidr
	Subnets []SubnetStatus `json:"subnets,omitempty"`

	// MTU is the network's MTU as Neutron holds it.
	// +optional
	MTU int32 `json:"mtu,omitempty"`

	// ProjectID is the OpenStack project that holds the network and its
	// subnets.
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	// Place is where the Network's Neutron resources live; it never changes
	// once recorded, as in v1.
	// +optional
	Place *Place `json:"place,omitempty"`

	// NeutronStatus is the Neutron network's own status, e.g. ACTIVE or
	// DOWN.
	// +optional
	NeutronStatus string `json:"neutronStatus,omitempty"`

	// Router is the router the subnets are attached to; each subnet's
	// interface on it is in its status.subnets entry. Absent while no
	// subnet is attached.
	// +optional
	Router *RouterStatus `json:"router,omitempty"`

	// Adopted records the names and descriptions that the network and
	// subnets spec.adopt named had before the controller marked them.
	// +optional
	Adopted *AdoptedResources `json:"adopted,omitempty"`
}

// SubnetStatus is one Neutron subnet of the network.
type SubnetStatus struct {
	// CIDR is the subnet's range as Neutron holds it, and the key of
	// status.subnets.
	CIDR string `json:"cidr"`

	// ID is the Neutron subnet's ID.
	// +optional
	ID string `json:"id,omitempty"`

	// Gateway is the subnet's gateway as Neutron holds it; empty when it
	// has none.
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// AllocationPools are the subnet's allocation pools as Neutron holds
	// them.
	// +optional
	// +listType=atomic
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`

	// RouterInterface is the interface the controller made for this subnet
	// on status.router; absent while the subnet is not attached.
	// +optional
	RouterInterface *RouterInterfaceStatus `json:"routerInterface,omitempty"`

	// UsedIPs and FreeIPs are how many of the subnet's addresses ports
	// hold, and how many remain. They come from Neutron's
	// network-ip-availabilities API (GET /v2.0/network-ip-availabilities,
	// read with each periodic list of Neutron), which Neutron's default
	// policy grants to administrators only: under credentials of a
	// project member Neutron refuses it, and both fields are then absent.
	// They are quantities, not int64: an IPv6 /64 has 2^64 addresses.
	// +optional
	UsedIPs *resource.Quantity `json:"usedIPs,omitempty"`

	// FreeIPs: see UsedIPs.
	// +optional
	FreeIPs *resource.Quantity `json:"freeIPs,omitempty"`
}

// RouterInterfaceStatus is a subnet's interface on the Network's router.
type RouterInterfaceStatus struct {
	// PortID is the Neutron port of the interface: made by the controller,
	// and the only one it removes.
	PortID string `json:"portID"`
	// Address is the interface's address: the subnet's gateway.
	// +optional
	Address string `json:"address,omitempty"`
}

// Place is where in OpenStack a Network's Neutron resources live. Two
// places are the same only when every field is.
type Place struct {
	// AuthURL is the Keystone endpoint the credentials authenticate at.
	AuthURL string `json:"authURL"`
	// Region is the region whose Neutron endpoint the catalog gave.
	// +optional
	Region string `json:"region,omitempty"`
	// Interface is the catalog's interface the endpoint was chosen by.
	// +optional
	Interface string `json:"interface,omitempty"`
	// ProjectID is the project the credentials' token is scoped to.
	ProjectID string `json:"projectID"`
}

// RouterStatus is the router the Network's subnets are attached to.
type RouterStatus struct {
	// ID is the router's ID.
	ID string `json:"id"`
	// ExternalNetworkID is the external network of the gateway of a
	// router the controller made (spec.router.externalNetwork).
	// +optional
	ExternalNetworkID string `json:"externalNetworkID,omitempty"`
}

// AdoptedResources are an adopted Neutron network and its subnets as they
// were before the controller marked them.
type AdoptedResources struct {
	// NetworkID is the adopted network's ID.
	NetworkID string `json:"networkID"`
	// NetworkName is the network's name before adoption.
	// +optional
	NetworkName string `json:"networkName,omitempty"`
	// NetworkDescription is the network's description before adoption.
	// +optional
	NetworkDescription string `json:"networkDescription,omitempty"`
	// Subnets are the adopted subnets, at least one, keyed by ID.
	// +listType=map
	// +listMapKey=id
	Subnets []AdoptedSubnet `json:"subnets"`
}

// AdoptedSubnet is an adopted subnet as it was before the controller
// marked it.
type AdoptedSubnet struct {
	// ID is the subnet's ID.
	ID string `json:"id"`
	// Name is the subnet's name before adoption.
	// +optional
	Name string `json:"name,omitempty"`
	// Description is the subnet's description before adoption.
	// +optional
	Description string `json:"description,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// NetworkList is a list of Networks.
type NetworkList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Networks.
	Items []Network `json:"items"`
}
