package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// A subnet with subnetPool asks Neutron for a range instead of naming
// one. It cannot be found by range, so it is "the subnet of ours on the
// network that no fixed entry names, of no fixed entry's family": the one
// status names, else the first by ID (two
// controllers pick the same). Any other of ours on the network is a
// duplicate — a create that completed after its answer was lost, which a
// pool, unlike a fixed range, does not refuse as an overlap — and is
// deleted.

// ensurePoolSubnet returns the network's subnet allocated from the pool
// of wants[i], and whether it created it: the one of candidates (the
// subnets of ours on net that no fixed entry names) to keep. A pool whose
// family another entry has is refused before anything is created.
func (p *pass) ensurePoolSubnet(ctx context.Context, net neutron.Network, wants []desired.Want, i int, candidates []neutron.Subnet) (_ neutron.Subnet, created bool, _ error) {
	keep, duplicates, found := choosePoolSubnet(candidates, net.ID, p.recordedAmong(candidates))
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
	spec := wants[i].Spec
	pool, err := p.inv.FindSubnetPool(ctx, spec.SubnetPool)
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	if _, err := desired.PoolFamily(wants, i, pool.IPVersion); err != nil {
		return neutron.Subnet{}, false, err
	}
	s, err := p.inv.CreateSubnet(ctx, p.owner, poolRequest(spec, net.ID, pool))
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
func poolRequest(spec samplecrdv2.SubnetSpec, networkID string, pool neutron.SubnetPool) neutron.SubnetRequest {
	req := desired.OptionsOf(spec).Request(networkID, "", "")
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

// recordedAmong is the ID of the first of candidates that status.subnets
// names, or "" when it names none.
func (p *pass) recordedAmong(candidates []neutron.Subnet) string {
	for _, c := range candidates {
		if _, ok := statusSubnet(p.network.Status, c.ID); ok {
			return c.ID
		}
	}
	return ""
}
