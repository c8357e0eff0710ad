package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/desired"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// Adoption is the middle rung of the ladder (status ID, then adopt, then
// create): a Network whose spec.adopt names an existing Neutron network
// takes it, and its subnet of spec.cidr, under management instead of
// creating them. It is the one path that marks a resource the controller
// did not create, so it is a privilege, and asks more than the others
// before it writes:
//
//   - a cluster administrator allows adoption in the Network's namespace
//     (a TenantPolicy, pkg/policy); anywhere else the controller refuses
//     it before the pass, and Neutron is asked nothing;
//   - the network exists in the Network's project (a network of another
//     project is "does not exist", as a missing one), and neither another cluster's controller nor
//     another Network of this cluster owns it or its subnet;
//   - the subnet of spec.cidr exists and already matches the spec in every
//     field (a spec that would change it on adoption is a mistake until
//     the user says otherwise): the differing fields are named, nothing is
//     changed.
//
// A refusal names fields, never values: whoever may write a Network in an
// allowed namespace must not learn another's network by naming its ID.
//
// Then it records the network's and subnet's own names and descriptions in
// status (so that releasing them puts them back): the pass ends there, and
// the controller writes the record. The next pass, which finds the record
// in the informer's cache, so in the API server, marks the subnet, then
// the network (so that a crash in between leaves a marked subnet, which the
// next attempt accepts as this Network's, and which an Orphan delete
// releases). It never creates: a network that is gone stays
// AdoptionRefused. Deleting the Network releases, unless deletionPolicy
// says Delete.

// adoptNetwork adopts the network spec.adopt names, and its subnet of
// want's cidr, and returns the network; or, the first time, the record to
// write before anything is marked (an *adoptionRecord).
func (p *pass) adoptNetwork(ctx context.Context, want desired.Subnet) (neutron.Network, error) {
	network, owner, id := p.network, p.owner, p.network.Spec.Adopt.NetworkID
	net, err := p.inv.GetNetwork(ctx, id)
	if gophercloud.ResponseCodeIs(err, 404) {
		return neutron.Network{}, adoptionRefused("Neutron network %s does not exist", id)
	}
	if err != nil {
		return neutron.Network{}, err
	}
	if other := p.otherOwner(owner, net.Name, net.Description); other != "" {
		return neutron.Network{}, adoptionRefused("Neutron network %s belongs to %s; it is not adopted", id, other)
	}
	subs, err := p.inv.SubnetsOf(ctx, id)
	if err != nil {
		return neutron.Network{}, err
	}
	i := slices.IndexFunc(subs, func(s neutron.Subnet) bool { return desired.SameCIDR(s.CIDR, want.CIDR.String()) })
	if i < 0 {
		return neutron.Network{}, &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
			"Neutron network %s has no subnet of %s; nothing was changed", id, want.CIDR)}
	}
	subnet := subs[i]
	if other := p.otherOwner(owner, subnet.Name, subnet.Description); other != "" {
		return neutron.Network{}, adoptionRefused("Neutron subnet %s belongs to %s; it is not adopted", subnet.ID, other)
	}
	if diffs := adoptionDiff(want, specMTU(network), net, subnet); len(diffs) > 0 {
		return neutron.Network{}, &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
			"Neutron subnet %s differs from the spec in %s; nothing was changed: make the spec say what Neutron holds, or change Neutron",
			subnet.ID, strings.Join(diffs, ", "))}
	}
	if err := p.recordAdoption(net, subnet); err != nil {
		return neutron.Network{}, err
	}
	if err := p.inv.MarkSubnet(ctx, owner, subnet); err != nil {
		return neutron.Network{}, err
	}
	adopted, err := p.inv.MarkNetwork(ctx, owner, net)
	if err != nil {
		return neutron.Network{}, err
	}
	klog.FromContext(ctx).Info("Adopted Neutron network", "networkID", id, "subnetID", subnet.ID)
	p.eventf(corev1.EventTypeNormal, eventAdopted, "Adopted Neutron network %s with subnet %s (%s)", id, subnet.ID, subnet.CIDR)
	return adopted, nil
}

// recordAdoption returns the record of what net and subnet are called
// now, to be written before either is marked, unless the status in the
// cache already holds the record of these two. A resource that already
// carries this Network's name without a record in the cache was marked by
// an earlier attempt whose record the cache has not caught up with: its
// name now is ours, not the original, so nothing is recorded from it.
func (p *pass) recordAdoption(net neutron.Network, subnet neutron.Subnet) error {
	if a := p.network.Status.Adopted; a != nil && a.NetworkID == net.ID && a.SubnetID == subnet.ID {
		return nil
	}
	if p.marked(net.Name, net.Description) || p.marked(subnet.Name, subnet.Description) {
		return fmt.Errorf("adopting Neutron network %s: %w", net.ID, errAdoptionRecordPending)
	}
	return &adoptionRecord{adopted: &samplecrdv1.AdoptedResources{
		NetworkID: net.ID, NetworkName: net.Name, NetworkDescription: net.Description,
		SubnetID: subnet.ID, SubnetName: subnet.Name, SubnetDescription: subnet.Description,
	}}
}

// marked reports whether a resource carries the pass's owner's name and
// this cluster's mark.
func (p *pass) marked(name, description string) bool {
	o, ok := p.mark.OwnerOf(name, description)
	return ok && o.UID == p.owner.UID
}

// otherOwner says who, other than owner, provably owns a resource:
// another Network of this cluster, or another cluster's controller. ""
// when nobody does (an unmarked resource, or one released with
// deletionPolicy Orphan) or owner already does. It names nobody: which
// Network, in which namespace, is not the asking Network's business.
func (r *Reconciler) otherOwner(owner neutron.Owner, name, description string) string {
	if o, ok := r.mark.OwnerOf(name, description); ok {
		if o.UID == owner.UID {
			return ""
		}
		return "another Network of this cluster"
	}
	switch {
	case description == r.mark.Description():
		// Our mark on a name that does not parse: not provably anyone's,
		// so not ours to take.
		return "this cluster's network-controller, under a name that names no Network"
	case neutron.IsMark(description):
		return "another cluster's network-controller"
	}
	return ""
}

// adoptionDiff names the fields in which Neutron's subnet and network
// differ from the spec; never their values, which are not the Network
// author's to read before the adoption succeeds.
func adoptionDiff(want desired.Subnet, mtu int, net neutron.Network, subnet neutron.Subnet) []string {
	_, diffs := want.Update(subnet)
	if subnet.IPv6AddressMode != want.IPv6AddressMode {
		diffs = append(diffs, "ipv6AddressMode")
	}
	if subnet.IPv6RAMode != want.IPv6RAMode {
		diffs = append(diffs, "ipv6RAMode")
	}
	if mtu != 0 && net.MTU != mtu {
		diffs = append(diffs, "mtu")
	}
	return diffs
}
