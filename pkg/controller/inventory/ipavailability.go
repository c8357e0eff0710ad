package inventory

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// ipCounts is what one list read of Neutron's network-ip-availabilities:
// the address counts of the subnets of the networks the store holds as
// an owner's, by network ID. It is read once per list (never per sync),
// made anew by each list, and holds no other network's: an administrator's
// credential sees every network of the project, other tenants' and other
// tools' included, which are neither kept nor counted.
type ipCounts struct {
	// allowed is false when Neutron refused the list in the place it was
	// listed in: a 403 (Neutron's default policy grants it to
	// administrators only, and the credentials are a member's) or a 404
	// (no network-ip-availability extension). The counts are then absent,
	// and the next list asks again, once.
	allowed   bool
	byNetwork map[string][]neutron.SubnetIPs
}

// counts returns the counts of networkID's subnets, and whether Neutron
// gave any: false when it refused the list or does not know the network.
func (c ipCounts) counts(networkID string) ([]neutron.SubnetIPs, bool) {
	s, ok := c.byNetwork[networkID]
	return s, ok && c.allowed
}

// equal reports whether c and d count o's networks the same way.
func (c ipCounts) equal(d ipCounts, o *Owned) bool {
	for _, n := range o.Networks {
		a, okA := c.counts(n.ID)
		b, okB := d.counts(n.ID)
		if okA != okB || !slices.EqualFunc(a, b, neutron.SubnetIPs.Equal) {
			return false
		}
	}
	return true
}

// listIPs reads the counts of the networks held (those of fresh) with one
// list request, in the place ctx is pinned to. A 403 or 404 is not an
// error of the list: the counts are then not allowed, and absent.
//
// What it keeps is bounded by what the store holds, whatever Neutron
// sends: of a held network, the counts of the subnets held on that
// network only (a subnet the answer invents, or another network's, is
// dropped), and of each the first count sent (a network or subnet sent
// twice counts once).
func listIPs(ctx context.Context, client neutron.Interface, held map[string]map[string]struct{}) (ipCounts, error) {
	c := ipCounts{allowed: true, byNetwork: map[string][]neutron.SubnetIPs{}}
	err := client.ListIPAvailabilities(ctx, func(page []neutron.NetworkIPs) error {
		for _, n := range page {
			subnets, isHeld := held[n.NetworkID]
			if !isHeld {
				continue
			}
			kept := c.byNetwork[n.NetworkID]
			for _, s := range n.Subnets {
				_, onIt := subnets[s.SubnetID]
				if onIt && !slices.ContainsFunc(kept, func(k neutron.SubnetIPs) bool { return k.SubnetID == s.SubnetID }) {
					kept = append(kept, s)
				}
			}
			c.byNetwork[n.NetworkID] = kept
		}
		return nil
	})
	if neutron.IsForbidden(err) || neutron.IsNotFound(err) {
		return ipCounts{}, nil
	}
	return c, err
}

// heldNetworks is, by the ID of each network fresh holds, the set of the
// IDs of the subnets its owner holds on it.
func heldNetworks(fresh map[types.UID]*Owned) map[string]map[string]struct{} {
	out := map[string]map[string]struct{}{}
	for _, o := range fresh {
		for _, n := range o.Networks {
			if out[n.ID] == nil {
				out[n.ID] = map[string]struct{}{}
			}
		}
		for _, s := range o.Subnets {
			// Only a subnet of the network's own owner: one marked as
			// another Network's on it is not that network's to count.
			if slices.ContainsFunc(o.Networks, func(n neutron.Network) bool { return n.ID == s.NetworkID }) {
				out[s.NetworkID][s.ID] = struct{}{}
			}
		}
	}
	return out
}

// noteAllowed logs when Neutron starts or stops refusing the counts to
// the credentials of place, or on the first list of a place: once per
// change, not once per list.
func noteAllowed(ctx context.Context, first bool, was, now bool, place neutron.Place) {
	if !first && was == now {
		return
	}
	if now {
		klog.FromContext(ctx).V(2).Info("Neutron lists network IP availabilities to these credentials; status.subnets reports usedIPs and freeIPs", "project", place.ProjectID)
	} else {
		klog.FromContext(ctx).Info("Neutron refuses network IP availabilities to these credentials (an administrator's API by its default policy, or no such extension); status.subnets leaves usedIPs and freeIPs absent", "project", place.ProjectID)
	}
}
