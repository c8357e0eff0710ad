package reconcile

import (
	"cmp"
	"slices"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The choices a pass makes from what it read, with no request and no
// state: which of several resources to keep, and what the spec means
// where it leaves something out. Two replicas that read the same make the
// same choices.

// chooseNetwork picks the network to keep among the owned ones: the one
// status names, else the one with the most subnets, else the oldest; the
// others are duplicates. Two controllers (a leader and its successor) pick
// the same one.
func chooseNetwork(owned inventory.Owned, statusID string) (keep neutron.Network, duplicates []neutron.Network, found bool) {
	if len(owned.Networks) == 0 {
		return neutron.Network{}, nil, false
	}
	subnets := func(n neutron.Network) int {
		return len(slices.DeleteFunc(slices.Clone(owned.Subnets), func(s neutron.Subnet) bool { return s.NetworkID != n.ID }))
	}
	nets := slices.Clone(owned.Networks)
	slices.SortFunc(nets, func(a, b neutron.Network) int {
		return cmp.Or(
			-cmp.Compare(boolInt(a.ID == statusID), boolInt(b.ID == statusID)),
			-cmp.Compare(subnets(a), subnets(b)),
			a.CreatedAt.Compare(b.CreatedAt),
			cmp.Compare(a.ID, b.ID),
		)
	})
	return nets[0], nets[1:], true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// chooseSubnets matches the owned subnets on networkID with wants:
// matched[i] is the subnet of wants[i]'s fixed range, nil when there is
// none (and for a pool entry); rest are the others on networkID, a pool
// entry's or removed from the spec.
func chooseSubnets(subnets []neutron.Subnet, networkID string, wants []desired.Want) (matched []*neutron.Subnet, rest []neutron.Subnet) {
	matched = make([]*neutron.Subnet, len(wants))
	for _, s := range subnets {
		if s.NetworkID != networkID {
			// On a duplicate network: it goes with it.
			continue
		}
		i := slices.IndexFunc(wants, func(w desired.Want) bool { return !w.FromPool() && desired.SameCIDR(s.CIDR, w.Key) })
		if i >= 0 && matched[i] == nil {
			matched[i] = &s
			continue
		}
		rest = append(rest, s)
	}
	return matched, rest
}

// choosePoolSubnet splits our subnets on networkID into the one to keep
// and duplicates.
func choosePoolSubnet(subnets []neutron.Subnet, networkID, statusID string) (keep neutron.Subnet, duplicates []neutron.Subnet, found bool) {
	on := slices.DeleteFunc(slices.Clone(subnets), func(s neutron.Subnet) bool { return s.NetworkID != networkID })
	if len(on) == 0 {
		return neutron.Subnet{}, nil, false
	}
	slices.SortFunc(on, func(a, b neutron.Subnet) int {
		return cmp.Or(-cmp.Compare(boolInt(a.ID == statusID), boolInt(b.ID == statusID)), cmp.Compare(a.ID, b.ID))
	})
	return on[0], on[1:], true
}

// specMTU is spec.mtu, 0 when left out.
func specMTU(network *samplecrdv2.Network) int {
	if network.Spec.MTU == nil {
		return 0
	}
	return int(*network.Spec.MTU)
}

// deletionPolicy is what deleting network does to its Neutron resources:
// spec.deletionPolicy, else Orphan for an adopted network (it was someone
// else's before; deleting it needs saying so) and Delete for what the
// controller created.
func deletionPolicy(network *samplecrdv2.Network) samplecrdv2.DeletionPolicy {
	switch {
	case network.Spec.DeletionPolicy != "":
		return network.Spec.DeletionPolicy
	case network.Spec.Adopt != nil:
		return samplecrdv2.DeletionPolicyOrphan
	}
	return samplecrdv2.DeletionPolicyDelete
}
