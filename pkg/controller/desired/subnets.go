package desired

import (
	"fmt"
	"net/netip"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// Want is one entry of a v2 Network's spec.subnets in Neutron's terms.
type Want struct {
	// Key is the entry's key in spec.subnets: its cidr as written, "" for
	// the subnet a pool allocates.
	Key string
	// Family is 4 or 6; 0 for a subnet from a pool until the pool is known
	// (PoolFamily).
	Family int
	// Spec is the entry as the user wrote it.
	Spec samplecrdv2.SubnetSpec
	// Subnet is the entry spelled out. For a subnet from a pool it holds
	// only the options (OptionsOf) until the pool has allocated a range
	// (Allocated).
	Subnet Subnet
}

// FromPool reports whether w's range is a subnet pool's to choose.
func (w Want) FromPool() bool { return w.Spec.SubnetPool != "" }

// SubnetsOf spells out every entry of spec.subnets, in the spec's order.
// The API server has checked what CEL can (one entry per family, no
// overlap, a gateway inside its range); SubnetsOf checks again what the
// controller's correctness depends on, so that a spec that bypassed the
// schema (an older CRD, a test) cannot make two subnets of one family.
func SubnetsOf(spec samplecrdv2.NetworkSpec) ([]Want, error) {
	if len(spec.Subnets) == 0 {
		return nil, invalidSpec("spec.subnets: a Network needs at least one subnet")
	}
	wants := make([]Want, 0, len(spec.Subnets))
	byFamily := map[int]string{}
	for i, s := range spec.Subnets {
		w := Want{Key: s.CIDR, Spec: s}
		if s.SubnetPool != "" {
			w.Subnet = OptionsOf(s)
			wants = append(wants, w)
			continue
		}
		d, err := SubnetOf(s, s.CIDR)
		if err != nil {
			return nil, invalidSpec("spec.subnets[%d]: %v", i, err)
		}
		w.Subnet, w.Family = d, Family(d.CIDR)
		if other, ok := byFamily[w.Family]; ok {
			return nil, invalidSpec("spec.subnets[%d]: %s is a second IPv%d subnet (%s is the first): a Network has at most one per family", i, s.CIDR, w.Family, other)
		}
		byFamily[w.Family] = s.CIDR
		wants = append(wants, w)
	}
	return wants, nil
}

// PoolFamily checks the family of wants[i], a subnet from a pool, against
// the pool's: its IP version, which only Neutron knows and CEL cannot see.
// The pool's family must be one no other entry has, and IPv6 modes need
// an IPv6 pool. It returns wants[i] with Family set.
func PoolFamily(wants []Want, i int, poolIPVersion int) (Want, error) {
	w := wants[i]
	if poolIPVersion != 4 && poolIPVersion != 6 {
		return Want{}, invalidSpec("spec.subnets[%d]: subnet pool %q has IP version %d, neither 4 nor 6", i, w.Spec.SubnetPool, poolIPVersion)
	}
	for j, o := range wants {
		if j != i && o.Family == poolIPVersion {
			return Want{}, invalidSpec("spec.subnets[%d]: subnet pool %q allocates IPv%d ranges, and spec.subnets[%d] (%s) is IPv%d already: a Network has at most one subnet per family",
				i, w.Spec.SubnetPool, poolIPVersion, j, o.Key, poolIPVersion)
		}
	}
	if poolIPVersion == 4 && (w.Spec.IPv6AddressMode != "" || w.Spec.IPv6RAMode != "") {
		return Want{}, invalidSpec("spec.subnets[%d]: subnet pool %q allocates IPv4 ranges, and the IPv6 modes are only for IPv6", i, w.Spec.SubnetPool)
	}
	w.Family = poolIPVersion
	return w, nil
}

// Allocated is w, a subnet from a pool, spelled out now that the pool has
// allocated it cidr.
func (w Want) Allocated(cidr string) (Want, error) {
	d, err := SubnetOf(w.Spec, cidr)
	if err != nil {
		return Want{}, fmt.Errorf("the range %s its pool allocated: %w", cidr, err)
	}
	w.Subnet, w.Family = d, Family(d.CIDR)
	return w, nil
}

// Family is 4 or 6, p's IP version; 0 for the invalid Prefix.
func Family(p netip.Prefix) int {
	switch {
	case !p.IsValid():
		return 0
	case p.Addr().Is4():
		return 4
	default:
		return 6
	}
}
