package neutron

import (
	"net/netip"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

// AllocationPools returns Neutron's default allocation pools for a subnet
// of cidr with the given gateway: every host address but the gateway (for
// IPv4, the network and broadcast addresses are not host addresses; for
// IPv6, only the subnet-router anycast address is excluded). It returns nil
// for ranges too small to have a pool besides the gateway.
func AllocationPools(cidr, gateway string) ([]subnets.AllocationPool, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	gw, err := netip.ParseAddr(gateway)
	if err != nil {
		return nil, err
	}
	prefix = prefix.Masked()
	first := prefix.Addr().Next()
	last := lastAddr(prefix)
	if prefix.Addr().Is4() {
		last = last.Prev()
	}
	if !first.IsValid() || !last.IsValid() || last.Less(first) {
		return nil, nil
	}
	var pools []subnets.AllocationPool
	if first.Less(gw) {
		pools = append(pools, subnets.AllocationPool{Start: first.String(), End: minAddr(gw.Prev(), last).String()})
	}
	if gw.Less(last) {
		pools = append(pools, subnets.AllocationPool{Start: maxAddr(gw.Next(), first).String(), End: last.String()})
	}
	return pools, nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func minAddr(a, b netip.Addr) netip.Addr {
	if a.Less(b) {
		return a
	}
	return b
}

func maxAddr(a, b netip.Addr) netip.Addr {
	if a.Less(b) {
		return b
	}
	return a
}
