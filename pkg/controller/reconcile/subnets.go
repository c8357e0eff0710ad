package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// The subnets step of the ladder: one Neutron subnet per spec.subnets
// entry, on the one network. Each entry is found by its range (a pool's by
// being the subnet of ours no fixed entry has), created when missing and
// updated in place as v1's one subnet is; a subnet of ours that no entry
// names any longer is deleted, unless ports other than Neutron's own are
// on it, which blocks the removal with a reason and deletes nothing.
//

// wants is the pass's spec.subnets spelled out (desired.SubnetsOf).
func (p *pass) wants() ([]desired.Want, error) {
	return desired.SubnetsOf(p.network.Spec)
}

// ensureSubnets returns, for each of wants, its subnet on net (a pool
// entry's spelled out into wants), and which of them it created. Subnets
// of ours on net that no entry names are removed first (removeUnwanted),
// so that a range moved to another entry does not overlap the one it
// replaces; a removal that ports block is the error blocked, returned
// once the rest is done.
func (p *pass) ensureSubnets(ctx context.Context, wants []desired.Want, net neutron.Network) (subnets []neutron.Subnet, created []bool, blocked, err error) {
	// Read now: an adoption has just added to the inventory.
	owned := p.inv.Get(p.owner.UID)
	matched, rest := chooseSubnets(owned.Subnets, net.ID, wants)
	pool := slices.IndexFunc(wants, desired.Want.FromPool)
	var poolCandidates, removed []neutron.Subnet
	for _, s := range rest {
		if pool >= 0 && !fixedFamily(wants, s.CIDR) {
			poolCandidates = append(poolCandidates, s)
		} else {
			removed = append(removed, s)
		}
	}
	if blocked, err = p.removeUnwanted(ctx, net, removed); err != nil {
		return nil, nil, nil, err
	}
	subnets, created = make([]neutron.Subnet, len(wants)), make([]bool, len(wants))
	for i, w := range wants {
		switch {
		case w.FromPool():
			subnets[i], created[i], err = p.ensurePoolSubnet(ctx, net, wants, i, poolCandidates)
		case matched[i] != nil:
			subnets[i] = *matched[i]
		default:
			subnets[i], created[i], err = p.createSubnet(ctx, w, net)
		}
		if err != nil {
			return subnets[:i], created[:i], blocked, err
		}
	}
	return subnets, created, blocked, nil
}

// fixedFamily reports whether cidr is of the family of a fixed-range entry
// of wants: a subnet of that family that the entry's range does not match
// was removed from the spec, not allocated by a pool.
func fixedFamily(wants []desired.Want, cidr string) bool {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(wants, func(w desired.Want) bool { return !w.FromPool() && w.Family == desired.Family(prefix) })
}

// createSubnet creates w's subnet on net.
func (p *pass) createSubnet(ctx context.Context, w desired.Want, net neutron.Network) (neutron.Subnet, bool, error) {
	s, err := p.inv.CreateSubnet(ctx, p.owner, w.Subnet.Request(net.ID, "", ""))
	if rejected := (*neutron.RejectedError)(nil); errors.As(err, &rejected) && rejected.Overlap() {
		// The one case that reads before acting: on a network of our own,
		// an overlapping subnet may be ours, its create completed after
		// the answer was lost. It carries our mark if so.
		sameCIDR := func(s neutron.Subnet) bool { return desired.SameCIDR(s.CIDR, w.Key) }
		if late, ok, lookErr := p.inv.FindLateSubnet(ctx, p.owner, net.ID, sameCIDR); lookErr != nil || ok {
			return late, ok, lookErr
		}
	}
	if err != nil {
		return neutron.Subnet{}, false, err
	}
	klog.FromContext(ctx).Info("Created Neutron subnet", "subnetID", s.ID, "cidr", s.CIDR, "gateway", s.GatewayIP)
	return s, true, nil
}

// removeUnwanted deletes the subnets of ours on net that spec.subnets no
// longer names (or whose range was changed behind our back). A subnet
// that ports use is not deleted: Neutron would refuse, and the ports are
// someone's. Neutron's own ports (DHCP, OVN metadata) go with the subnet;
// the Network's own router interface on it is detached first. The
// blocked removals are the returned blocked error, not err: the pass goes
// on with the rest of the spec.
func (p *pass) removeUnwanted(ctx context.Context, net neutron.Network, removed []neutron.Subnet) (blocked, err error) {
	if len(removed) == 0 {
		return nil, nil
	}
	ports, err := p.inv.PortsOf(ctx, net.ID, "")
	if err != nil {
		return nil, err
	}
	var blocks []error
	for _, s := range removed {
		var ours []neutron.Port
		blocking := portsUsing(ports, s.CIDR)
		if len(blocking) > 0 {
			routerPorts, err := p.inv.RouterPortsOf(ctx, p.owner, net.ID)
			if err != nil {
				return nil, err
			}
			blocking = slices.DeleteFunc(blocking, func(port neutron.Port) bool {
				i := slices.IndexFunc(routerPorts, func(r neutron.Port) bool { return r.ID == port.ID })
				if i >= 0 {
					ours = append(ours, routerPorts[i])
				}
				return i >= 0
			})
		}
		if len(blocking) > 0 {
			e := &subnetRemovalBlockedError{subnet: s}
			for _, port := range blocking {
				e.ports = append(e.ports, fmt.Sprintf("%s (%s)", port.ID, cmp.Or(port.DeviceOwner, "no device_owner")))
			}
			blocks = append(blocks, e)
			continue
		}
		for _, port := range ours {
			if err := p.detach(ctx, port); err != nil {
				return nil, err
			}
		}
		if err := p.inv.DeleteSubnet(ctx, p.owner, s.ID); err != nil {
			return nil, err
		}
		klog.FromContext(ctx).Info("Deleted Neutron subnet no longer in spec.subnets", "subnetID", s.ID, "cidr", s.CIDR)
		if was, ok := statusSubnet(p.network.Status, s.ID); ok && !desired.SameCIDR(s.CIDR, was.CIDR) {
			// Status holds it with the range it had: someone changed it
			// in Neutron, not in the spec.
			p.eventf(corev1.EventTypeWarning, eventDriftRepaired,
				"Neutron subnet %s had cidr %s instead of %s; deleted it", s.ID, s.CIDR, was.CIDR)
			continue
		}
		p.eventf(corev1.EventTypeNormal, eventDeleted, "Deleted Neutron subnet %s (%s): spec.subnets no longer names it", s.ID, s.CIDR)
	}
	return errors.Join(blocks...), nil
}

// portsUsing are the ports among ports with an address in cidr, but
// Neutron's own, which go with the subnet.
func portsUsing(ports []neutron.Port, cidr string) []neutron.Port {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil
	}
	var on []neutron.Port
	for _, port := range ports {
		if port.DeletedWithNetwork() {
			continue
		}
		if slices.ContainsFunc(port.Addresses, func(a string) bool {
			addr, err := netip.ParseAddr(a)
			return err == nil && prefix.Contains(addr)
		}) {
			on = append(on, port)
		}
	}
	return on
}

// spelledOut is wants with every pool entry spelled out with the range
// the pool allocated it, subnets[i] being wants[i]'s subnet.
func spelledOut(wants []desired.Want, subnets []neutron.Subnet) ([]desired.Want, error) {
	out := slices.Clone(wants)
	for i, w := range wants {
		if !w.FromPool() {
			continue
		}
		var err error
		if out[i], err = w.Allocated(subnets[i].CIDR); err != nil {
			return nil, err
		}
	}
	return out, nil
}
