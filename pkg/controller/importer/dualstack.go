package importer

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// A network of an IPv4 and an IPv6 subnet is a samplecrd.k8s.io/v2
// Network with two entries in spec.subnets (issue 42), checked, subnet by
// subnet, with the code adoption compares with, as v1's one subnet is.
// Until the controller records the adoption of two subnets (v2's
// status.adopted), applying it is AdoptionRefused, with nothing changed.

// dualStack reports whether subs are one subnet of each IP family.
func dualStack(subs []neutron.Subnet) bool {
	families := map[int]bool{}
	for _, s := range subs {
		p, err := netip.ParsePrefix(s.CIDR)
		if err != nil {
			return false
		}
		families[desired.Family(p)] = true
	}
	return len(families) == len(subs)
}

// adoptableV2 returns the v2 spec that adopts n with its subnets, IPv4
// first, or why n cannot be a Network's.
func adoptableV2(n neutron.Network, subs []neutron.Subnet) (samplecrdv2.NetworkSpec, string) {
	switch {
	case n.External:
		return samplecrdv2.NetworkSpec{}, "an external network (router:external): the cloud's way out, not a namespace's"
	case n.Shared:
		return samplecrdv2.NetworkSpec{}, "shared with every project: a Network would let one namespace change what others use"
	case neutron.IsMark(n.Description):
		return samplecrdv2.NetworkSpec{}, "already marked by a network-controller, of this cluster or another"
	}
	subs = slices.SortedFunc(slices.Values(subs), func(a, b neutron.Subnet) int { return strings.Compare(familyOf(a), familyOf(b)) })
	spec := samplecrdv2.NetworkSpec{Adopt: &samplecrdv2.Adoption{NetworkID: n.ID}}
	if n.MTU > 0 {
		spec.MTU = ptr.To(int32(n.MTU))
	}
	for _, s := range subs {
		if neutron.IsMark(s.Description) {
			return samplecrdv2.NetworkSpec{}, fmt.Sprintf("its subnet %s is already marked by a network-controller", s.CIDR)
		}
		entry := subnetSpecOf(s)
		want, err := desired.SubnetOf(entry, entry.CIDR)
		if err != nil {
			return samplecrdv2.NetworkSpec{}, fmt.Sprintf("its subnet %s cannot be said as a spec: %q", s.CIDR, err.Error())
		}
		if _, diffs := want.Update(s); len(diffs) > 0 {
			return samplecrdv2.NetworkSpec{}, fmt.Sprintf("its subnet %s cannot be said as a spec: it would differ in %s", s.CIDR, strings.Join(diffs, ", "))
		}
		spec.Subnets = append(spec.Subnets, entry)
	}
	return spec, ""
}

// familyOf orders subnets IPv4 first.
func familyOf(s neutron.Subnet) string {
	if strings.Contains(s.CIDR, ":") {
		return "6"
	}
	return "4"
}

// subnetSpecOf says what Neutron holds of s as a spec.subnets entry, every
// field explicit, as specOf does for v1.
func subnetSpecOf(s neutron.Subnet) samplecrdv2.SubnetSpec {
	entry := samplecrdv2.SubnetSpec{
		CIDR:            s.CIDR,
		Gateway:         s.GatewayIP,
		NoGateway:       s.GatewayIP == "",
		DNSNameservers:  s.DNSNameservers,
		EnableDHCP:      ptr.To(s.EnableDHCP),
		IPv6AddressMode: samplecrdv2.IPv6Mode(s.IPv6AddressMode),
		IPv6RAMode:      samplecrdv2.IPv6Mode(s.IPv6RAMode),
	}
	for _, r := range s.HostRoutes {
		entry.HostRoutes = append(entry.HostRoutes, samplecrdv2.HostRoute{Destination: r.Destination, NextHop: r.NextHop})
	}
	for _, p := range s.AllocationPools {
		entry.AllocationPools = append(entry.AllocationPools, samplecrdv2.AllocationPool{Start: p.Start, End: p.End})
	}
	return entry
}

func manifestV2(name string, spec samplecrdv2.NetworkSpec) *samplecrdv2.Network {
	return &samplecrdv2.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv2.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}
}
