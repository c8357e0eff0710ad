package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// A Network with spec.subnetPool asks Neutron for a range instead of
// naming one. Its subnet cannot be found by range, so it is "the subnet of
// ours on the network": the one status names, else the first by ID (two
// controllers pick the same). Any other of ours on the network is a
// duplicate — a create that completed after its answer was lost, which a
// pool, unlike a fixed range, does not refuse as an overlap — and is
// deleted.

// ensurePoolSubnet returns the network's subnet allocated from
// spec.subnetPool, and whether it created it.
func (p *pass) ensurePoolSubnet(ctx context.Context, net neutron.Network, owned inventory.Owned) (_ neutron.Subnet, created bool, _ error) {
	keep, duplicates, found := choosePoolSubnet(owned.Subnets, net.ID, p.network.Status.SubnetID)
	for _, d := range duplicates {
		if err := p.inv.DeleteSubnet(ctx, p.owner, d.ID); err != nil {
			return neutron.Subnet{}, false, err
		}
		metrics.DuplicatesDeleted.Inc()
		p.eventf(corev1.EventTypeWarning, eventDriftRepaired,
			"Deleted duplicate Neutron subnet %s (%s; kept %s)", d.ID, d.CIDR, keep.ID)
	}
	if found {
		return keep, false, nil
	}
	pool, err := p.inv.FindSubnetPool(ctx, p.network.Spec.SubnetPool)
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	s, err := p.inv.CreateSubnet(ctx, p.owner, poolRequest(p.network.Spec, net.ID, pool))
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	klog.FromContext(ctx).Info("Created Neutron subnet from a pool", "subnetID", s.ID, "pool", pool.ID, "cidr", s.CIDR)
	return s, true, nil
}

// poolRequest is the create request of a subnet whose range pool
// allocates: the options of the spec, without the range and what lies
// inside it (the API refuses a gateway and pools with a pool), which
// Neutron chooses as it would for a fixed range.
func poolRequest(spec samplecrdv1.NetworkSpec, networkID string, pool neutron.SubnetPool) neutron.SubnetRequest {
	req := desired.OptionsOf(desired.FromV1(spec)).Request(networkID, "", "")
	req.SubnetPoolID, req.IPVersion = pool.ID, pool.IPVersion
	req.Gateway = nil // Neutron's choice: the first host of the range
	if spec.NoGateway {
		req.Gateway = ptr.To("")
	}
	if spec.PrefixLength != nil {
		req.PrefixLength = int(*spec.PrefixLength)
	}
	return req
}
