package main

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/desired"
	"github.com/samplecrd/network-controller/pkg/metrics"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// The ladder of reconcile, in the manner of ORC's: each step finds its
// resource by the ID in status, then in the inventory, then (for a network
// named by spec.adopt) by adopting it, and creates it only when none has
// it. Everything a step touches is in the inventory, so it
// carries this cluster's mark and the Network's UID: nothing else is ever
// changed or deleted.

// ensureNetwork returns the Network's Neutron network, and whether it
// created it because there was none. Duplicates — a create that completed
// after its sender gave up, or died, while a retry made another — are
// deleted.
func (c *Controller) ensureNetwork(ctx context.Context, network *samplecrdv1.Network, want desired.Subnet, owned neutron.Owned) (_ neutron.Network, created bool, _ error) {
	owner := ownerOf(network)
	keep, duplicates, found := chooseNetwork(owned, network.Status.NetworkID)
	for _, d := range duplicates {
		if err := c.deleteNetwork(ctx, owner, d.ID); err != nil {
			return neutron.Network{}, false, err
		}
		metrics.DuplicatesDeleted.Inc()
		c.recorder.Eventf(network, corev1.EventTypeWarning, eventDriftRepaired,
			"Deleted duplicate Neutron network %s (kept %s)", d.ID, keep.ID)
	}
	if found {
		return keep, false, nil
	}
	if network.Spec.Adopt != nil {
		n, err := c.adoptNetwork(ctx, network, want)
		return n, false, err
	}
	if network.Status.NetworkID != "" {
		c.recorder.Eventf(network, corev1.EventTypeWarning, eventDriftRepaired,
			"Neutron network %s is gone; creating a new one", network.Status.NetworkID)
	}
	n, err := c.createNetwork(ctx, owner, specMTU(network))
	if err != nil {
		return neutron.Network{}, false, err
	}
	klog.FromContext(ctx).Info("Created Neutron network", "networkID", n.ID)
	return n, true, nil
}

// chooseNetwork picks the network to keep among the owned ones: the one
// status names, else the one with the most subnets, else the oldest; the
// others are duplicates. Two controllers (a leader and its successor) pick
// the same one.
func chooseNetwork(owned neutron.Owned, statusID string) (keep neutron.Network, duplicates []neutron.Network, found bool) {
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

// ensureSubnet returns the subnet of spec.cidr on net, and whether it
// created it because there was none. Subnets of ours on net with another
// range were changed behind our back (cidr is immutable in the API): they
// are deleted.
func (c *Controller) ensureSubnet(ctx context.Context, network *samplecrdv1.Network, want desired.Subnet, net neutron.Network, owned neutron.Owned) (_ neutron.Subnet, created bool, _ error) {
	if network.Spec.SubnetPool != "" {
		return c.ensurePoolSubnet(ctx, network, net, owned)
	}
	owner := ownerOf(network)
	keep, stale, found := chooseSubnet(owned.Subnets, net.ID, network.Spec.CIDR)
	for _, s := range stale {
		if err := c.deleteSubnet(ctx, owner, s.ID); err != nil {
			return neutron.Subnet{}, false, err
		}
		c.recorder.Eventf(network, corev1.EventTypeWarning, eventDriftRepaired,
			"Neutron subnet %s had cidr %s instead of %s; deleted it", s.ID, s.CIDR, network.Spec.CIDR)
	}
	if found {
		return keep, false, nil
	}
	s, err := c.createSubnet(ctx, owner, net.ID, want)
	if rejected := (*neutron.RejectedError)(nil); errors.As(err, &rejected) && rejected.Overlap() {
		// The one case that reads before acting: on a network of our own,
		// an overlapping subnet may be ours, its create completed after
		// the answer was lost. It carries our mark if so.
		if late, ok, lookErr := c.findLateSubnet(ctx, owner, net.ID, network.Spec.CIDR); lookErr != nil || ok {
			return late, ok, lookErr
		}
	}
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	klog.FromContext(ctx).Info("Created Neutron subnet", "subnetID", s.ID, "cidr", s.CIDR, "gateway", s.GatewayIP)
	return s, true, nil
}

// recordCreated writes one Event that says what this sync created: the
// network and subnet of a new Network, or only the one that a drift repair
// had to make again.
func (c *Controller) recordCreated(network *samplecrdv1.Network, net neutron.Network, netCreated bool, subnet neutron.Subnet, subnetCreated bool) {
	switch {
	case netCreated && subnetCreated:
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventCreated, "Created Neutron network %s with subnet %s (%s, gateway %s)",
			net.ID, subnet.ID, subnet.CIDR, describeGateway(subnet.GatewayIP))
	case netCreated:
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventCreated, "Created Neutron network %s", net.ID)
	case subnetCreated:
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventCreated, "Created Neutron subnet %s (%s, gateway %s) on network %s",
			subnet.ID, subnet.CIDR, describeGateway(subnet.GatewayIP), net.ID)
	}
}

// chooseSubnet splits the owned subnets on networkID into the one of cidr
// (found is false when there is none) and those of other ranges.
func chooseSubnet(subnets []neutron.Subnet, networkID, cidr string) (keep neutron.Subnet, stale []neutron.Subnet, found bool) {
	for _, s := range subnets {
		switch {
		case s.NetworkID != networkID:
			// On a duplicate network: it goes with it.
		case !found && desired.SameCIDR(s.CIDR, cidr):
			keep, found = s, true
		default:
			stale = append(stale, s)
		}
	}
	return keep, stale, found
}

// findLateSubnet looks on networkID for a subnet of cidr that carries our
// mark and owner's UID, and records it.
func (c *Controller) findLateSubnet(ctx context.Context, owner neutron.Owner, networkID, cidr string) (neutron.Subnet, bool, error) {
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Subnet{}, false, err
	}
	subs, err := c.neutron.SubnetsOf(ctx, networkID)
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	for _, s := range subs {
		if o, ok := c.mark.OwnerOf(s.Name, s.Description); ok && o.UID == owner.UID && desired.SameCIDR(s.CIDR, cidr) {
			c.inventory.AddSubnet(owner, s)
			klog.FromContext(ctx).Info("Found our subnet, created late, on an overlap refusal", "subnetID", s.ID)
			return s, true, nil
		}
	}
	return neutron.Subnet{}, false, nil
}

// ensureSubnetOptions makes the subnet's mutable options (gateway, DNS,
// routes, pools, DHCP) those of want, in one update request when any
// differs, and returns the subnet as Neutron then holds it.
func (c *Controller) ensureSubnetOptions(ctx context.Context, network *samplecrdv1.Network, want desired.Subnet, subnet neutron.Subnet) (neutron.Subnet, error) {
	u, changed := want.Update(subnet)
	if len(changed) == 0 {
		return subnet, nil
	}
	updated, err := c.updateSubnet(ctx, ownerOf(network), subnet.ID, u)
	if err != nil {
		return subnet, err
	}
	klog.FromContext(ctx).Info("Updated Neutron subnet", "subnetID", subnet.ID, "fields", changed)
	if u.Gateway != nil {
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventUpdated, "Updated Neutron subnet %s: %s (gateway %s to %s)",
			subnet.ID, joinFields(changed), describeGateway(subnet.GatewayIP), describeGateway(updated.GatewayIP))
	} else {
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventUpdated, "Updated Neutron subnet %s: %s", subnet.ID, joinFields(changed))
	}
	return updated, nil
}

// ensureMTU sets the network's MTU to spec.mtu when the spec has one and
// Neutron holds another. Without spec.mtu the MTU is Neutron's to choose.
func (c *Controller) ensureMTU(ctx context.Context, network *samplecrdv1.Network, net neutron.Network) (neutron.Network, error) {
	want := specMTU(network)
	if want == 0 || net.MTU == want {
		return net, nil
	}
	updated, err := c.updateNetwork(ctx, ownerOf(network), net.ID, neutron.NetworkUpdate{MTU: &want})
	if err != nil {
		return net, err
	}
	klog.FromContext(ctx).Info("Updated Neutron network MTU", "networkID", net.ID, "from", net.MTU, "to", updated.MTU)
	c.recorder.Eventf(network, corev1.EventTypeNormal, eventUpdated, "Updated the MTU of Neutron network %s from %d to %d", net.ID, net.MTU, updated.MTU)
	return updated, nil
}

// specMTU is spec.mtu, 0 when left out.
func specMTU(network *samplecrdv1.Network) int {
	if network.Spec.MTU == nil {
		return 0
	}
	return int(*network.Spec.MTU)
}

// describeGateway is a gateway for an Event: its address, or "none".
func describeGateway(gw string) string { return cmp.Or(gw, "none") }

// joinFields lists changed fields for an Event.
func joinFields(fields []string) string { return strings.Join(fields, ", ") }
