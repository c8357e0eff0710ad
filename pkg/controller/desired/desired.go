// Package desired turns a v2 Network's spec into the subnets Neutron must
// hold, one per spec.subnets entry (with every default spelled out, so that
// "left out" means one thing), and compares each with what Neutron holds. It is pure: no client, no clock,
// tested by tables alone.
package desired

import (
	"fmt"
	"net/netip"
	"slices"

	"k8s.io/utils/ptr"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Subnet is a Network's subnet as Neutron must hold it.
type Subnet struct {
	// CIDR is the range; invalid for a range a pool has not allocated yet.
	CIDR netip.Prefix
	// Gateway is invalid (the zero Addr) when the subnet has none.
	Gateway         netip.Addr
	DNSNameservers  []string
	HostRoutes      []neutron.HostRoute
	AllocationPools []neutron.AllocationPool
	EnableDHCP      bool
	IPv6AddressMode string
	IPv6RAMode      string
}

// InvalidSpecError is a spec that the API server accepted but Neutron would
// refuse, for what CEL cannot check (the order of addresses). It is found
// before any request, and is terminal until the spec changes.
type InvalidSpecError struct {
	// Message says what to fix.
	Message string
}

func (e *InvalidSpecError) Error() string { return e.Message }

func invalidSpec(format string, args ...any) error {
	return &InvalidSpecError{Message: fmt.Sprintf(format, args...)}
}

// SubnetOf spells out the subnet spec, whose range is cidr (spec.cidr,
// or the range a subnet pool allocated): a left-out gateway is the first
// host address, left-out pools are Neutron's defaults around the gateway,
// DHCP is on unless turned off.
func SubnetOf(spec samplecrdv2.SubnetSpec, cidr string) (Subnet, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return Subnet{}, invalidSpec("cidr %q: %v", cidr, err)
	}
	prefix = prefix.Masked()
	d := OptionsOf(spec)
	d.CIDR = prefix
	switch {
	case spec.NoGateway:
	case spec.Gateway != "":
		if d.Gateway, err = netip.ParseAddr(spec.Gateway); err != nil {
			return Subnet{}, invalidSpec("gateway %q: %v", spec.Gateway, err)
		}
	default:
		if first := prefix.Addr().Next(); prefix.Contains(first) {
			d.Gateway = first
		}
	}
	if len(spec.AllocationPools) == 0 {
		d.AllocationPools = neutron.DefaultAllocationPools(prefix, d.Gateway)
		return d, nil
	}
	if d.AllocationPools, err = checkPools(prefix, d.Gateway, spec.AllocationPools); err != nil {
		return Subnet{}, err
	}
	return d, nil
}

// OptionsOf is the part of the subnet spec that does not depend on its
// range: what a subnet from a pool can be asked for before the range is
// known.
func OptionsOf(spec samplecrdv2.SubnetSpec) Subnet {
	d := Subnet{
		DNSNameservers:  slices.Clone(spec.DNSNameservers),
		EnableDHCP:      spec.EnableDHCP == nil || *spec.EnableDHCP,
		IPv6AddressMode: string(spec.IPv6AddressMode),
		IPv6RAMode:      string(spec.IPv6RAMode),
	}
	for _, r := range spec.HostRoutes {
		d.HostRoutes = append(d.HostRoutes, neutron.HostRoute{Destination: r.Destination, NextHop: r.NextHop})
	}
	return d
}

// checkPools refuses what Neutron would: a pool whose start is after its
// end, outside the host range, overlapping another, or holding the gateway.
func checkPools(prefix netip.Prefix, gateway netip.Addr, pools []samplecrdv2.AllocationPool) ([]neutron.AllocationPool, error) {
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

// Request is the create request of the subnet.
func (d Subnet) Request(networkID, name, description string) neutron.SubnetRequest {
	return neutron.SubnetRequest{
		NetworkID:       networkID,
		Name:            name,
		Description:     description,
		CIDR:            prefixString(d.CIDR),
		Gateway:         ptr.To(AddrString(d.Gateway)),
		DNSNameservers:  d.DNSNameservers,
		HostRoutes:      d.HostRoutes,
		AllocationPools: d.AllocationPools,
		EnableDHCP:      d.EnableDHCP,
		IPv6AddressMode: d.IPv6AddressMode,
		IPv6RAMode:      d.IPv6RAMode,
	}
}

// Update is the one request that makes actual equal to d, and the names of
// the fields it changes; a zero update when they are equal. The IPv6 modes
// are not in it: Neutron cannot change them, and the API refuses to.
func (d Subnet) Update(actual neutron.Subnet) (u neutron.SubnetUpdate, changed []string) {
	if !SameIP(actual.GatewayIP, AddrString(d.Gateway)) {
		gw := AddrString(d.Gateway)
		u.Gateway, changed = &gw, append(changed, "gateway")
	}
	if !slices.EqualFunc(actual.DNSNameservers, d.DNSNameservers, SameIP) {
		dns := slices.Clone(d.DNSNameservers)
		if dns == nil {
			dns = []string{}
		}
		u.DNSNameservers, changed = &dns, append(changed, "dnsNameservers")
	}
	if !sameRoutes(actual.HostRoutes, d.HostRoutes) {
		routes := slices.Clone(d.HostRoutes)
		u.HostRoutes, changed = &routes, append(changed, "hostRoutes")
	}
	if len(d.AllocationPools) > 0 && !samePools(actual.AllocationPools, d.AllocationPools) {
		pools := slices.Clone(d.AllocationPools)
		u.AllocationPools, changed = &pools, append(changed, "allocationPools")
	}
	if actual.EnableDHCP != d.EnableDHCP {
		dhcp := d.EnableDHCP
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

// AddrString is a's text; "" for the invalid Addr, which stands for none.
func AddrString(a netip.Addr) string {
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

// SameIP compares two addresses as addresses, not as text: Neutron answers
// in canonical form whatever form the user wrote.
func SameIP(a, b string) bool { return canonicalIP(a) == canonicalIP(b) }

// SameCIDR compares two ranges as ranges.
func SameCIDR(a, b string) bool { return canonicalCIDR(a) == canonicalCIDR(b) }
