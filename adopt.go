package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// Adoption is the middle rung of the ladder (status ID, then adopt, then
// create): a Network whose spec.adopt names an existing Neutron network
// takes it, and its subnet of spec.cidr, under management instead of
// creating them. It is the one path that marks a resource the controller
// did not create, so it asks more than the others before it writes:
//
//   - the network exists, and neither another cluster's controller nor
//     another Network of this cluster owns it or its subnet;
//   - the subnet of spec.cidr exists and already matches the spec in every
//     field (a spec that would change it on adoption is a mistake until
//     the user says otherwise): the difference is reported, nothing is
//     changed.
//
// Then it marks the subnet, then the network (so that a crash in between
// leaves a marked subnet, which the next attempt accepts as this Network's).
// It never creates: a network that is gone stays AdoptionRefused.

// adoptionError is an adoption that cannot proceed; its reason is one of
// the Ready condition's. Retried every few minutes (someone may fix
// Neutron) and at once on a spec change.
type adoptionError struct{ reason, msg string }

func (e *adoptionError) Error() string { return e.msg }

func adoptionRefused(format string, args ...any) error {
	return &adoptionError{reason: samplecrdv1.ReasonAdoptionRefused, msg: fmt.Sprintf(format, args...)}
}

// adoptNetwork adopts the network spec.adopt names, and its subnet of
// want's cidr, and returns the network.
func (c *Controller) adoptNetwork(ctx context.Context, network *samplecrdv1.Network, want desiredSubnet) (neutron.Network, error) {
	owner, id := ownerOf(network), network.Spec.Adopt.NetworkID
	if err := c.neutronUp.allow(); err != nil {
		return neutron.Network{}, err
	}
	net, err := c.neutron.GetNetwork(ctx, id)
	if gophercloud.ResponseCodeIs(err, 404) {
		return neutron.Network{}, adoptionRefused("Neutron network %s does not exist", id)
	}
	if err != nil {
		return neutron.Network{}, c.afterFailedRead(err)
	}
	if other := c.otherOwner(owner, net.Name, net.Description); other != "" {
		return neutron.Network{}, adoptionRefused("Neutron network %s belongs to %s; it is not adopted", id, other)
	}
	subs, err := c.neutron.SubnetsOf(ctx, id)
	if err != nil {
		return neutron.Network{}, c.afterFailedRead(err)
	}
	i := slices.IndexFunc(subs, func(s neutron.Subnet) bool { return sameCIDR(s.CIDR, want.cidr.String()) })
	if i < 0 {
		return neutron.Network{}, &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
			"Neutron network %s has no subnet of %s (it has: %s); nothing was changed", id, want.cidr, subnetCIDRs(subs))}
	}
	subnet := subs[i]
	if other := c.otherOwner(owner, subnet.Name, subnet.Description); other != "" {
		return neutron.Network{}, adoptionRefused("Neutron subnet %s belongs to %s; it is not adopted", subnet.ID, other)
	}
	if diffs := adoptionDiff(want, specMTU(network), net, subnet); len(diffs) > 0 {
		return neutron.Network{}, &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
			"Neutron subnet %s differs from the spec: %s; nothing was changed: make the spec say what Neutron holds, or change Neutron",
			subnet.ID, strings.Join(diffs, "; "))}
	}
	if err := c.markSubnet(ctx, owner, subnet); err != nil {
		return neutron.Network{}, err
	}
	adopted, err := c.markNetwork(ctx, owner, net)
	if err != nil {
		return neutron.Network{}, err
	}
	klog.FromContext(ctx).Info("Adopted Neutron network", "networkID", id, "subnetID", subnet.ID)
	c.recorder.Eventf(network, corev1.EventTypeNormal, eventAdopted, "Adopted Neutron network %s with subnet %s (%s)", id, subnet.ID, subnet.CIDR)
	return adopted, nil
}

// otherOwner says who, other than owner, provably owns a resource: another
// Network of this cluster, or another cluster's controller. "" when nobody
// does (an unmarked resource, or one released with deletionPolicy Orphan)
// or owner already does.
func (c *Controller) otherOwner(owner neutron.Owner, name, description string) string {
	if o, ok := c.mark.OwnerOf(name, description); ok {
		if o.UID == owner.UID {
			return ""
		}
		return "Network " + o.Key() + " of this cluster"
	}
	switch {
	case description == c.mark.Description():
		// Our mark on a name that does not parse: not provably anyone's,
		// so not ours to take.
		return "this cluster's network-controller, under a name that does not name a Network (" + name + ")"
	case neutron.IsMark(description):
		return "another cluster's network-controller (" + description + ")"
	}
	return ""
}

// adoptionDiff lists how Neutron's subnet and network differ from the
// spec, each difference as "field: Neutron has X, the spec Y".
func adoptionDiff(want desiredSubnet, mtu int, net neutron.Network, subnet neutron.Subnet) []string {
	var diffs []string
	differs := func(field string, actual, spec any) {
		diffs = append(diffs, fmt.Sprintf("%s: Neutron has %v, the spec %v", field, actual, spec))
	}
	_, changed := want.update(subnet)
	for _, f := range changed {
		switch f {
		case "gateway":
			differs(f, describeGateway(subnet.GatewayIP), describeGateway(addrString(want.gateway)))
		case "dnsNameservers":
			differs(f, subnet.DNSNameservers, want.dnsNameservers)
		case "hostRoutes":
			differs(f, subnet.HostRoutes, want.hostRoutes)
		case "allocationPools":
			differs(f, subnet.AllocationPools, want.allocationPools)
		case "enableDHCP":
			differs(f, subnet.EnableDHCP, want.enableDHCP)
		}
	}
	if subnet.IPv6AddressMode != want.ipv6AddressMode {
		differs("ipv6AddressMode", subnet.IPv6AddressMode, want.ipv6AddressMode)
	}
	if subnet.IPv6RAMode != want.ipv6RAMode {
		differs("ipv6RAMode", subnet.IPv6RAMode, want.ipv6RAMode)
	}
	if mtu != 0 && net.MTU != mtu {
		differs("mtu", net.MTU, mtu)
	}
	return diffs
}

func subnetCIDRs(subs []neutron.Subnet) string {
	if len(subs) == 0 {
		return "none"
	}
	cidrs := make([]string, len(subs))
	for i, s := range subs {
		cidrs[i] = s.CIDR
	}
	return strings.Join(cidrs, ", ")
}
