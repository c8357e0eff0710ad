package main

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// The spec says what a Network's subnet must be; Neutron says what it is.
// This file turns the first into Neutron's terms (with the defaults spelled
// out, so that "left out" means one thing) and compares it with the second.
// It is pure: no client, no clock, tested by tables alone.

// desiredSubnet is a Network's subnet as Neutron must hold it.
type desiredSubnet struct {
	cidr netip.Prefix
	// gateway is invalid (the zero Addr) when the subnet has none.
	gateway         netip.Addr
	dnsNameservers  []string
	hostRoutes      []neutron.HostRoute
	allocationPools []neutron.AllocationPool
	enableDHCP      bool
	ipv6AddressMode string
	ipv6RAMode      string
}

// invalidSpecError is a spec that the API server accepted but Neutron would
// refuse, for what CEL cannot check (the order of addresses). It is found
// before any request, and is terminal until the spec changes.
type invalidSpecError struct{ msg string }

func (e *invalidSpecError) Error() string { return e.msg }

func invalidSpec(format string, args ...any) error {
	return &invalidSpecError{msg: fmt.Sprintf(format, args...)}
}

// desiredSubnetOf spells out spec's subnet, whose range is cidr (spec.cidr,
// or the range a subnet pool allocated): a left-out gateway is the first
// host address, left-out pools are Neutron's defaults around the gateway,
// DHCP is on unless turned off.
func desiredSubnetOf(spec samplecrdv1.NetworkSpec, cidr string) (desiredSubnet, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return desiredSubnet{}, invalidSpec("cidr %q: %v", cidr, err)
	}
	prefix = prefix.Masked()
	d := subnetOptionsOf(spec)
	d.cidr = prefix
	switch {
	case spec.NoGateway:
	case spec.Gateway != "":
		if d.gateway, err = netip.ParseAddr(spec.Gateway); err != nil {
			return desiredSubnet{}, invalidSpec("gateway %q: %v", spec.Gateway, err)
		}
	default:
		if first := prefix.Addr().Next(); prefix.Contains(first) {
			d.gateway = first
		}
	}
	if len(spec.AllocationPools) == 0 {
		d.allocationPools = neutron.DefaultAllocationPools(prefix, d.gateway)
		return d, nil
	}
	if d.allocationPools, err = checkPools(prefix, d.gateway, spec.AllocationPools); err != nil {
		return desiredSubnet{}, err
	}
	return d, nil
}

// subnetOptionsOf is the part of spec's subnet that does not depend on its
// range: what a subnet from a pool can be asked for before the range is
// known.
func subnetOptionsOf(spec samplecrdv1.NetworkSpec) desiredSubnet {
	d := desiredSubnet{
		dnsNameservers:  slices.Clone(spec.DNSNameservers),
		enableDHCP:      spec.EnableDHCP == nil || *spec.EnableDHCP,
		ipv6AddressMode: string(spec.IPv6AddressMode),
		ipv6RAMode:      string(spec.IPv6RAMode),
	}
	for _, r := range spec.HostRoutes {
		d.hostRoutes = append(d.hostRoutes, neutron.HostRoute{Destination: r.Destination, NextHop: r.NextHop})
	}
	return d
}

// checkPools refuses what Neutron would: a pool whose start is after its
// end, outside the host range, overlapping another, or holding the gateway.
func checkPools(prefix netip.Prefix, gateway netip.Addr, pools []samplecrdv1.AllocationPool) ([]neutron.AllocationPool, error) {
	type span struct{ start, end netip.Addr }
	first, last, ok := neutron.HostRange(prefix)
	if !ok {
		return nil, invalidSpec("allocationPools: cidr %s has no host addresses to allocate from", prefix)
	}
	spans := make([]span, 0, len(pools))
	for i, p := range pools {
		start, err1 := netip.ParseAddr(p.Start)
		end, err2 := netip.ParseAddr(p.End)
		switch {
		case err1 != nil || err2 != nil:
			return nil, invalidSpec("allocationPools[%d]: %q-%q are not addresses", i, p.Start, p.End)
		case end.Less(start):
			return nil, invalidSpec("allocationPools[%d]: start %s is after end %s", i, p.Start, p.End)
		case start.Less(first) || last.Less(end):
			return nil, invalidSpec("allocationPools[%d]: %s-%s is outside the host addresses of %s (%s-%s)", i, p.Start, p.End, prefix, first, last)
		case gateway.IsValid() && !gateway.Less(start) && !end.Less(gateway):
			return nil, invalidSpec("allocationPools[%d]: %s-%s contains the gateway %s; leave the gateway out of the pools", i, p.Start, p.End, gateway)
		}
		spans = append(spans, span{start, end})
	}
	sorted := slices.SortedFunc(slices.Values(spans), func(a, b span) int { return a.start.Compare(b.start) })
	for i := 1; i < len(sorted); i++ {
		if !sorted[i-1].end.Less(sorted[i].start) {
			return nil, invalidSpec("allocationPools: %s-%s and %s-%s overlap", sorted[i-1].start, sorted[i-1].end, sorted[i].start, sorted[i].end)
		}
	}
	out := make([]neutron.AllocationPool, len(spans))
	for i, s := range spans {
		out[i] = neutron.AllocationPool{Start: s.start.String(), End: s.end.String()}
	}
	return out, nil
}

// request is the create request of the subnet.
func (d desiredSubnet) request(networkID, name, description string) neutron.SubnetRequest {
	return neutron.SubnetRequest{
		NetworkID:       networkID,
		Name:            name,
		Description:     description,
		CIDR:            prefixString(d.cidr),
		Gateway:         ptr.To(addrString(d.gateway)),
		DNSNameservers:  d.dnsNameservers,
		HostRoutes:      d.hostRoutes,
		AllocationPools: d.allocationPools,
		EnableDHCP:      d.enableDHCP,
		IPv6AddressMode: d.ipv6AddressMode,
		IPv6RAMode:      d.ipv6RAMode,
	}
}

// update is the one request that makes actual equal to d, and the names of
// the fields it changes; a zero update when they are equal. The IPv6 modes
// are not in it: Neutron cannot change them, and the API refuses to.
func (d desiredSubnet) update(actual neutron.Subnet) (u neutron.SubnetUpdate, changed []string) {
	if !sameIP(actual.GatewayIP, addrString(d.gateway)) {
		gw := addrString(d.gateway)
		u.Gateway, changed = &gw, append(changed, "gateway")
	}
	if !slices.EqualFunc(actual.DNSNameservers, d.dnsNameservers, sameIP) {
		dns := slices.Clone(d.dnsNameservers)
		if dns == nil {
			dns = []string{}
		}
		u.DNSNameservers, changed = &dns, append(changed, "dnsNameservers")
	}
	if !sameRoutes(actual.HostRoutes, d.hostRoutes) {
		routes := slices.Clone(d.hostRoutes)
		u.HostRoutes, changed = &routes, append(changed, "hostRoutes")
	}
	if len(d.allocationPools) > 0 && !samePools(actual.AllocationPools, d.allocationPools) {
		pools := slices.Clone(d.allocationPools)
		u.AllocationPools, changed = &pools, append(changed, "allocationPools")
	}
	if actual.EnableDHCP != d.enableDHCP {
		dhcp := d.enableDHCP
		u.EnableDHCP, changed = &dhcp, append(changed, "enableDHCP")
	}
	return u, changed
}

// sameRoutes compares routes as sets of (destination, next hop): Neutron
// does not keep their order.
func sameRoutes(a, b []neutron.HostRoute) bool {
	key := func(r neutron.HostRoute) string { return canonicalCIDR(r.Destination) + " " + canonicalIP(r.NextHop) }
	return sameSorted(a, b, key)
}

// samePools compares pools as sets of ranges.
func samePools(a, b []neutron.AllocationPool) bool {
	key := func(p neutron.AllocationPool) string { return canonicalIP(p.Start) + "-" + canonicalIP(p.End) }
	return sameSorted(a, b, key)
}

func sameSorted[T any](a, b []T, key func(T) string) bool {
	keys := func(xs []T) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = key(x)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(keys(a), keys(b))
}

func canonicalIP(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String()
	}
	return s
}

func canonicalCIDR(s string) string {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked().String()
	}
	return s
}

// addrString is a's text; "" for the invalid Addr, which stands for none.
func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// prefixString is p's text; "" for the invalid Prefix, which stands for a
// range not known yet.
func prefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
}

// describeGateway is a gateway for an Event: its address, or "none".
func describeGateway(gw string) string { return cmp.Or(gw, "none") }

// joinFields lists changed fields for an Event.
func joinFields(fields []string) string { return strings.Join(fields, ", ") }
