package v1

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// This file converts a v1 Network to and from v2, the hub: v1 is a spoke,
// and the conversions live with it, so that the hub knows of no spoke.
//
// The functions are registered on the scheme (addConversionFuncs, part of
// SchemeBuilder), rather than being ConvertTo/ConvertFrom methods, so that
// one path serves every caller: scheme.Convert in the tests, and the
// conversion webhook (pkg/controller/conversion), which calls it.
//
// A v1 Network is a v2 Network with one subnet: v1's top-level subnet
// fields are spec.subnets[0]. What v1 cannot say of a v2 Network (its
// other subnet's spec, the status of every subnet but the first spec
// subnet's, and every adopted subnet but the first) travels in the
// annotation SubnetsAnnotation as JSON, which the conversion back to v2
// reads and removes, so that v1→v2→v1 and v2→v1→v2 lose nothing. A v1
// client that writes the object back without that annotation (a
// kubectl replace of a hand-written manifest, an apply that drops it)
// removes the other subnet from the v2 spec, which the controller then
// deletes from Neutron; an update that keeps metadata.annotations, as
// kubectl edit and a read-modify-write do, keeps it.
//
// A v1 write is validated by the API server against v1's schema only,
// where the annotation is a string: what it adds is checked against v2's
// own schema by the conversion webhook (pkg/controller/conversion), which
// also takes its status part from the stored object (KeepStoredStatus),
// not from the writer.

// SubnetsAnnotation is the annotation of a v1 Network that holds, as JSON,
// what the v2 form of the Network has and v1 cannot say. The key is
// reserved: the conversion writes and removes it, and a value that does
// not parse is an error, not an object without its second subnet.
const SubnetsAnnotation = "samplecrd.k8s.io/v2-subnets"

// v2Rest is the content of SubnetsAnnotation: the conversion's own, not an
// API type, so the generators leave it out.
//
// +k8s:openapi-gen=false
// +k8s:deepcopy-gen=false
type v2Rest struct {
	// Subnets are spec.subnets after the first.
	Subnets []v2.SubnetSpec `json:"subnets,omitempty"`
	// Status are the status.subnets entries but the one v1's status
	// fields hold, in their order.
	Status []v2.SubnetStatus `json:"status,omitempty"`
	// StatusIndex is the position in status.subnets of the entry v1's
	// status fields hold, when it is not the first.
	StatusIndex int `json:"statusIndex,omitempty"`
	// UsedIPs and FreeIPs are the usage counts of the entry v1's status
	// fields hold, which v1 has no field for.
	UsedIPs *resource.Quantity `json:"usedIPs,omitempty"`
	FreeIPs *resource.Quantity `json:"freeIPs,omitempty"`
	// AdoptedSubnets are status.adopted.subnets after the first.
	AdoptedSubnets []v2.AdoptedSubnet `json:"adoptedSubnets,omitempty"`
}

func (r *v2Rest) empty() bool {
	return len(r.Subnets) == 0 && len(r.Status) == 0 && r.StatusIndex == 0 &&
		r.UsedIPs == nil && r.FreeIPs == nil && len(r.AdoptedSubnets) == 0
}

func addConversionFuncs(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*Network)(nil), (*v2.Network)(nil), func(a, b any, scope conversion.Scope) error {
		return Convert_v1_Network_To_v2_Network(a.(*Network), b.(*v2.Network), scope)
	}); err != nil {
		return err
	}
	if err := s.AddConversionFunc((*v2.Network)(nil), (*Network)(nil), func(a, b any, scope conversion.Scope) error {
		return Convert_v2_Network_To_v1_Network(a.(*v2.Network), b.(*Network), scope)
	}); err != nil {
		return err
	}
	if err := s.AddConversionFunc((*NetworkList)(nil), (*v2.NetworkList)(nil), func(a, b any, scope conversion.Scope) error {
		in, out := a.(*NetworkList), b.(*v2.NetworkList)
		out.TypeMeta, out.ListMeta = typeMeta(in.TypeMeta, v2.SchemeGroupVersion.String()), *in.ListMeta.DeepCopy()
		out.Items = nil
		if in.Items != nil {
			out.Items = make([]v2.Network, len(in.Items))
		}
		for i := range in.Items {
			if err := Convert_v1_Network_To_v2_Network(&in.Items[i], &out.Items[i], scope); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return s.AddConversionFunc((*v2.NetworkList)(nil), (*NetworkList)(nil), func(a, b any, scope conversion.Scope) error {
		in, out := a.(*v2.NetworkList), b.(*NetworkList)
		out.TypeMeta, out.ListMeta = typeMeta(in.TypeMeta, SchemeGroupVersion.String()), *in.ListMeta.DeepCopy()
		out.Items = nil
		if in.Items != nil {
			out.Items = make([]Network, len(in.Items))
		}
		for i := range in.Items {
			if err := Convert_v2_Network_To_v1_Network(&in.Items[i], &out.Items[i], scope); err != nil {
				return err
			}
		}
		return nil
	})
}

// typeMeta is in with apiVersion set to apiVersion when in names one: a
// typed object read from a client often carries no TypeMeta, and gets
// none.
func typeMeta(in metav1.TypeMeta, apiVersion string) metav1.TypeMeta {
	if in.APIVersion != "" {
		in.APIVersion = apiVersion
	}
	return in
}

// Convert_v1_Network_To_v2_Network converts a v1 Network to the hub: its
// one subnet becomes spec.subnets[0] and, if Neutron holds it, an entry of
// status.subnets; SubnetsAnnotation, if present, gives back the rest and
// is removed. A SubnetsAnnotation that does not parse, or that names the
// first subnet's range again, is an error. It checks nothing else of what
// the annotation adds: that is v2's schema's to say, which the conversion
// webhook applies to the result (pkg/controller/conversion).
func Convert_v1_Network_To_v2_Network(in *Network, out *v2.Network, _ conversion.Scope) error {
	var rest v2Rest
	out.TypeMeta = typeMeta(in.TypeMeta, v2.SchemeGroupVersion.String())
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if raw, ok := in.Annotations[SubnetsAnnotation]; ok {
		if err := decodeRest(raw, &rest); err != nil {
			return fmt.Errorf("Network %s/%s: annotation %s, which only the v1 conversion writes, does not parse: %w", in.Namespace, in.Name, SubnetsAnnotation, err)
		}
		delete(out.Annotations, SubnetsAnnotation)
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
	}

	s := &in.Spec
	first := v2.SubnetSpec{
		CIDR:            s.CIDR,
		SubnetPool:      s.SubnetPool,
		PrefixLength:    copyPtr(s.PrefixLength),
		Gateway:         s.Gateway,
		NoGateway:       s.NoGateway,
		DNSNameservers:  copySlice(s.DNSNameservers, func(a string) string { return a }),
		HostRoutes:      copySlice(s.HostRoutes, func(r HostRoute) v2.HostRoute { return v2.HostRoute(r) }),
		AllocationPools: copySlice(s.AllocationPools, func(p AllocationPool) v2.AllocationPool { return v2.AllocationPool(p) }),
		EnableDHCP:      copyPtr(s.EnableDHCP),
		IPv6AddressMode: v2.IPv6Mode(s.IPv6AddressMode),
		IPv6RAMode:      v2.IPv6Mode(s.IPv6RAMode),
	}
	for _, r := range rest.Subnets {
		if r.CIDR == first.CIDR {
			return fmt.Errorf("Network %s/%s: annotation %s names subnet %q, which is spec.cidr already", in.Namespace, in.Name, SubnetsAnnotation, r.CIDR)
		}
	}
	out.Spec = v2.NetworkSpec{
		Subnets:             append([]v2.SubnetSpec{first}, rest.Subnets...),
		MTU:                 copyPtr(s.MTU),
		DeletionPolicy:      v2.DeletionPolicy(s.DeletionPolicy),
		Adopt:               convertPtr(s.Adopt, func(a Adoption) v2.Adoption { return v2.Adoption(a) }),
		CloudCredentialsRef: convertPtr(s.CloudCredentialsRef, func(c CloudCredentialsReference) v2.CloudCredentialsReference { return v2.CloudCredentialsReference(c) }),
		Router:              convertPtr(s.Router, func(r RouterReference) v2.RouterReference { return v2.RouterReference(r) }),
		WriteConfigMapToRef: convertPtr(s.WriteConfigMapToRef, func(c ConfigMapReference) v2.ConfigMapReference { return v2.ConfigMapReference(c) }),
	}

	st := &in.Status
	out.Status = v2.NetworkStatus{
		ObservedGeneration: st.ObservedGeneration,
		Conditions:         copySlice(st.Conditions, func(c metav1.Condition) metav1.Condition { return *c.DeepCopy() }),
		NetworkID:          st.NetworkID,
		MTU:                st.MTU,
		ProjectID:          st.ProjectID,
		Place:              convertPtr(st.Place, func(p Place) v2.Place { return v2.Place(p) }),
		NeutronStatus:      st.NeutronStatus,
	}
	// v1's subnet status is an entry of status.subnets when anything of it
	// is known; the router's interface on the subnet is part of it.
	primary := v2.SubnetStatus{
		CIDR:            st.CIDR,
		ID:              st.SubnetID,
		Gateway:         st.Gateway,
		AllocationPools: copySlice(st.AllocationPools, func(p AllocationPool) v2.AllocationPool { return v2.AllocationPool(p) }),
	}
	if st.Router != nil {
		out.Status.Router = &v2.RouterStatus{ID: st.Router.ID, ExternalNetworkID: st.Router.ExternalNetworkID}
		if st.Router.InterfacePortID != "" || st.Router.InterfaceAddress != "" {
			primary.RouterInterface = &v2.RouterInterfaceStatus{PortID: st.Router.InterfacePortID, Address: st.Router.InterfaceAddress}
		}
	}
	statuses := rest.Status
	if primary.CIDR != "" || primary.ID != "" || primary.Gateway != "" || len(primary.AllocationPools) > 0 || primary.RouterInterface != nil {
		primary.UsedIPs, primary.FreeIPs = copyPtr(rest.UsedIPs), copyPtr(rest.FreeIPs)
		i := min(max(rest.StatusIndex, 0), len(statuses))
		statuses = append(append(append([]v2.SubnetStatus{}, statuses[:i]...), primary), statuses[i:]...)
	}
	if len(statuses) > 0 {
		out.Status.Subnets = statuses
	}
	if a := st.Adopted; a != nil {
		out.Status.Adopted = &v2.AdoptedResources{
			NetworkID:          a.NetworkID,
			NetworkName:        a.NetworkName,
			NetworkDescription: a.NetworkDescription,
			Subnets: append([]v2.AdoptedSubnet{{ID: a.SubnetID, Name: a.SubnetName, Description: a.SubnetDescription}},
				rest.AdoptedSubnets...),
		}
	}
	return nil
}

// decodeRest reads raw, SubnetsAnnotation's value, into rest, strictly: a
// field it does not know (a misspelt one, written by hand) is an error,
// not a subnet or a setting quietly lost; so is anything after the value.
func decodeRest(raw string, rest *v2Rest) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(rest); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Convert_v2_Network_To_v1_Network converts the hub to a v1 Network:
// spec.subnets[0] becomes v1's top-level subnet fields, and its entry of
// status.subnets v1's subnet status (for a pool subnet, whose spec has no
// range, the first entry no other spec subnet claims). Everything else of
// the subnets goes into SubnetsAnnotation, which is absent when there is
// nothing else: a v2 Network with one subnet is a plain v1 Network.
func Convert_v2_Network_To_v1_Network(in *v2.Network, out *Network, _ conversion.Scope) error {
	var rest v2Rest
	out.TypeMeta = typeMeta(in.TypeMeta, SchemeGroupVersion.String())
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)

	var first v2.SubnetSpec
	if len(in.Spec.Subnets) > 0 {
		first = in.Spec.Subnets[0]
		rest.Subnets = in.Spec.Subnets[1:]
	}
	s := &in.Spec
	out.Spec = NetworkSpec{
		CIDR:                first.CIDR,
		SubnetPool:          first.SubnetPool,
		PrefixLength:        copyPtr(first.PrefixLength),
		Gateway:             first.Gateway,
		NoGateway:           first.NoGateway,
		DNSNameservers:      copySlice(first.DNSNameservers, func(a string) string { return a }),
		HostRoutes:          copySlice(first.HostRoutes, func(r v2.HostRoute) HostRoute { return HostRoute(r) }),
		AllocationPools:     copySlice(first.AllocationPools, func(p v2.AllocationPool) AllocationPool { return AllocationPool(p) }),
		EnableDHCP:          copyPtr(first.EnableDHCP),
		IPv6AddressMode:     IPv6Mode(first.IPv6AddressMode),
		IPv6RAMode:          IPv6Mode(first.IPv6RAMode),
		MTU:                 copyPtr(s.MTU),
		DeletionPolicy:      DeletionPolicy(s.DeletionPolicy),
		Adopt:               convertPtr(s.Adopt, func(a v2.Adoption) Adoption { return Adoption(a) }),
		CloudCredentialsRef: convertPtr(s.CloudCredentialsRef, func(c v2.CloudCredentialsReference) CloudCredentialsReference { return CloudCredentialsReference(c) }),
		Router:              convertPtr(s.Router, func(r v2.RouterReference) RouterReference { return RouterReference(r) }),
		WriteConfigMapToRef: convertPtr(s.WriteConfigMapToRef, func(c v2.ConfigMapReference) ConfigMapReference { return ConfigMapReference(c) }),
	}

	st := &in.Status
	out.Status = NetworkStatus{
		ObservedGeneration: st.ObservedGeneration,
		Conditions:         copySlice(st.Conditions, func(c metav1.Condition) metav1.Condition { return *c.DeepCopy() }),
		NetworkID:          st.NetworkID,
		MTU:                st.MTU,
		ProjectID:          st.ProjectID,
		Place:              convertPtr(st.Place, func(p v2.Place) Place { return Place(p) }),
		NeutronStatus:      st.NeutronStatus,
	}
	if st.Router != nil {
		out.Status.Router = &RouterStatus{ID: st.Router.ID, ExternalNetworkID: st.Router.ExternalNetworkID}
	}
	if i := primaryStatus(in); i >= 0 {
		p := st.Subnets[i]
		out.Status.CIDR = p.CIDR
		out.Status.SubnetID = p.ID
		out.Status.Gateway = p.Gateway
		out.Status.AllocationPools = copySlice(p.AllocationPools, func(p v2.AllocationPool) AllocationPool { return AllocationPool(p) })
		if p.RouterInterface != nil {
			if out.Status.Router == nil {
				out.Status.Router = &RouterStatus{}
			}
			out.Status.Router.InterfacePortID = p.RouterInterface.PortID
			out.Status.Router.InterfaceAddress = p.RouterInterface.Address
		}
		rest.UsedIPs, rest.FreeIPs = p.UsedIPs, p.FreeIPs
		rest.Status = append(append([]v2.SubnetStatus{}, st.Subnets[:i]...), st.Subnets[i+1:]...)
		rest.StatusIndex = i
	} else {
		rest.Status = st.Subnets
	}
	if a := st.Adopted; a != nil {
		out.Status.Adopted = &AdoptedResources{NetworkID: a.NetworkID, NetworkName: a.NetworkName, NetworkDescription: a.NetworkDescription}
		if len(a.Subnets) > 0 {
			out.Status.Adopted.SubnetID = a.Subnets[0].ID
			out.Status.Adopted.SubnetName = a.Subnets[0].Name
			out.Status.Adopted.SubnetDescription = a.Subnets[0].Description
			rest.AdoptedSubnets = a.Subnets[1:]
		}
	}

	// A stale annotation would be read back as this object's, so it goes
	// whether or not there is anything to say.
	if _, ok := out.Annotations[SubnetsAnnotation]; ok {
		delete(out.Annotations, SubnetsAnnotation)
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
	}
	if rest.empty() {
		return nil
	}
	raw, err := json.Marshal(&rest)
	if err != nil {
		return fmt.Errorf("Network %s/%s: encoding annotation %s: %w", in.Namespace, in.Name, SubnetsAnnotation, err)
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[SubnetsAnnotation] = string(raw)
	return nil
}

// primaryStatus is the index of the status.subnets entry that v1's status
// fields hold, or -1: the entry of spec.subnets[0]'s range, or else (a
// subnet from a pool, whose spec has no range, or a range Neutron holds
// differently) the first entry that no spec subnet's range claims.
func primaryStatus(in *v2.Network) int {
	if len(in.Spec.Subnets) == 0 {
		return -1
	}
	if c := in.Spec.Subnets[0].CIDR; c != "" {
		for i, s := range in.Status.Subnets {
			if s.CIDR == c {
				return i
			}
		}
	}
	claimed := map[string]bool{}
	for _, s := range in.Spec.Subnets {
		if s.CIDR != "" {
			claimed[s.CIDR] = true
		}
	}
	for i, s := range in.Status.Subnets {
		if !claimed[s.CIDR] {
			return i
		}
	}
	return -1
}

// copyPtr is a copy of what p points to, nil for nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// convertPtr is f of what p points to, nil for nil.
func convertPtr[A, B any](p *A, f func(A) B) *B {
	if p == nil {
		return nil
	}
	b := f(*p)
	return &b
}

// copySlice is f of every element of in, nil for nil and empty for empty.
func copySlice[A, B any](in []A, f func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = f(a)
	}
	return out
}

// CarriesRest is whether in carries SubnetsAnnotation: what only a v2
// Network says, which v1's schema cannot validate.
func CarriesRest(in *Network) bool {
	_, ok := in.Annotations[SubnetsAnnotation]
	return ok
}

// KeepStoredStatus is a copy of in whose SubnetsAnnotation says of status
// (the other subnets' status, the first's address counts, the adopted
// subnets but the first) what stored, the Network as the API server holds
// it (nil when there is none: a create), says, whatever in's said; what it
// says of spec is in's. The annotation is metadata, which a writer of
// spec may change, where the API server keeps status from a spec write:
// so a v1 write cannot change status through it. A status write through
// v1 keeps the stored metadata, and so the same annotation.
func KeepStoredStatus(in *Network, stored *v2.Network) (*Network, error) {
	var rest, kept v2Rest
	if raw, ok := in.Annotations[SubnetsAnnotation]; ok {
		if err := decodeRest(raw, &rest); err != nil {
			return nil, fmt.Errorf("Network %s/%s: annotation %s, which only the v1 conversion writes, does not parse: %w", in.Namespace, in.Name, SubnetsAnnotation, err)
		}
	}
	if stored != nil {
		asV1 := &Network{}
		if err := Convert_v2_Network_To_v1_Network(stored, asV1, nil); err != nil {
			return nil, err
		}
		if raw, ok := asV1.Annotations[SubnetsAnnotation]; ok {
			if err := decodeRest(raw, &kept); err != nil {
				return nil, fmt.Errorf("Network %s/%s as stored: %w", in.Namespace, in.Name, err)
			}
		}
	}
	rest.Status, rest.StatusIndex, rest.UsedIPs, rest.FreeIPs, rest.AdoptedSubnets =
		kept.Status, kept.StatusIndex, kept.UsedIPs, kept.FreeIPs, kept.AdoptedSubnets
	out := in.DeepCopy()
	delete(out.Annotations, SubnetsAnnotation)
	if rest.empty() {
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
		return out, nil
	}
	raw, err := json.Marshal(&rest)
	if err != nil {
		return nil, fmt.Errorf("Network %s/%s: encoding annotation %s: %w", in.Namespace, in.Name, SubnetsAnnotation, err)
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[SubnetsAnnotation] = string(raw)
	return out, nil
}
