package fake

import (
	"context"
	"math/big"
	"net/netip"
	"slices"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// ListIPAvailabilities is the request name of the network-ip-availabilities
// list, as recorded by Neutron.Requests.
const ListIPAvailabilities = "list-ip-availabilities"

// AsMember makes the credentials a project member's (true) or an
// administrator's (false, the default) for Neutron's policy on
// network-ip-availabilities, which grants it to administrators only: a
// member's list is refused with Neutron's 403.
func (f *Neutron) AsMember(member bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.member = member
}

// ListIPAvailabilities implements neutron.Interface as neutron-server
// counts: a subnet's total is the sum of its allocation pools, its used
// addresses those that ports hold in its range. Every network the
// credentials' project sees is listed, whoever made it.
func (f *Neutron) ListIPAvailabilities(ctx context.Context, visit func([]neutron.NetworkIPs) error) error {
	f.mu.Lock()
	if err := f.request(ctx, ListIPAvailabilities); err != nil {
		f.mu.Unlock()
		return err
	}
	if f.member {
		f.mu.Unlock()
		return neutron.ErrorForResponse(ListIPAvailabilities, 403, "PolicyNotAuthorized",
			`rule:get_network_ip_availability is disallowed by policy`)
	}
	var out []neutron.NetworkIPs
	for _, n := range sortedValues(f.networks) {
		if !f.visible(n.ID) {
			continue
		}
		a := neutron.NetworkIPs{NetworkID: n.ID}
		for _, s := range sortedValues(f.subnets) {
			if s.NetworkID == n.ID {
				a.Subnets = append(a.Subnets, neutron.SubnetIPs{SubnetID: s.ID, Total: poolSize(s.AllocationPools), Used: f.used(s)})
			}
		}
		out = append(out, a)
	}
	f.mu.Unlock()
	return inPages(out, visit)
}

// poolSize is how many addresses pools hold, both ends included.
func poolSize(pools []neutron.AllocationPool) *big.Int {
	total := new(big.Int)
	for _, p := range pools {
		start, err1 := netip.ParseAddr(p.Start)
		end, err2 := netip.ParseAddr(p.End)
		if err1 != nil || err2 != nil {
			continue
		}
		s, e := new(big.Int).SetBytes(start.AsSlice()), new(big.Int).SetBytes(end.AsSlice())
		total.Add(total, e.Sub(e, s).Add(e, big.NewInt(1)))
	}
	return total
}

// used counts the addresses ports hold in s's range. Callers hold f.mu.
func (f *Neutron) used(s neutron.Subnet) *big.Int {
	prefix, err := netip.ParsePrefix(s.CIDR)
	if err != nil {
		return new(big.Int)
	}
	var n int64
	for _, port := range f.ports[s.NetworkID] {
		n += int64(len(slices.DeleteFunc(slices.Clone(port.Addresses), func(a string) bool {
			addr, err := netip.ParseAddr(a)
			return err != nil || !prefix.Contains(addr)
		})))
	}
	return big.NewInt(n)
}
