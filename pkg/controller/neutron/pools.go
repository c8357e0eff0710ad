package neutron

import (
	"net/netip"
)

// HostRange is the range of a subnet of prefix that Neutron allocates from
// and lets allocation pools cover: everything but the first address (the
// network address; IPv6's subnet-router anycast address) and, for IPv4, the
// last (broadcast). ok is false for ranges with no such address (/31, /32,
// /127, /128), as neutron.ipam.utils.generate_pools has it.
func HostRange(prefix netip.Prefix) (first, last netip.Addr, ok bool) {
	prefix = prefix.Masked()
	first = prefix.Addr().Next()
	last = LastAddr(prefix)
	if prefix.Addr().Is4() {
		last = last.Prev()
	}
	if !first.IsValid() || !last.IsValid() || !first.Less(last) {
		return netip.Addr{}, netip.Addr{}, false
	}
	return first, last, true
}

// DefaultAllocationPools returns the allocation pools Neutron gives a
// subnet of prefix when it is asked for none: its host range without the
// gateway. An invalid gateway stands for no gateway. It returns nil when
// there is no host range.
func DefaultAllocationPools(prefix netip.Prefix, gateway netip.Addr) []AllocationPool {
	first, last, ok := HostRange(prefix)
	if !ok {
		return nil
	}
	if !gateway.IsValid() || gateway.Less(first) || last.Less(gateway) {
		return []AllocationPool{{Start: first.String(), End: last.String()}}
	}
	var pools []AllocationPool
	if first.Less(gateway) {
		pools = append(pools, AllocationPool{Start: first.String(), End: gateway.Prev().String()})
	}
	if gateway.Less(last) {
		pools = append(pools, AllocationPool{Start: gateway.Next().String(), End: last.String()})
	}
	return pools
}

// LastAddr is the last address of p.
func LastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
