package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Adoption is the middle rung of the ladder (status ID, then adopt, then
// create): a Network whose spec.adopt names an existing Neutron network
// takes it, and its subnet of spec.cidr, under management instead of
// creating them. It is the one path that marks a resource the controller
// did not create, so it is a privilege, and asks more than the others
// before it writes:
//
//   - a cluster administrator allows adoption in the Network's namespace
//     (a TenantPolicy, pkg/controller/tenancy); anywhere else the controller refuses
//     it before the pass, and Neutron is asked nothing;
//   - the network exists in the Network's project (a network of another
//     project is "does not exist", as a missing one), and neither another cluster's controller nor
//     another Network of this cluster owns it or its subnet;
//   - it is neither shared nor external (router:external): every project
//     uses those, and whoever adopted one could change its subnet's DNS
//     servers and routes for all of them, or delete it; no policy grants
//     them;
//   - no port on it is another project's (a port of no project is
//     Neutron's own);
//   - a network that a Network of another namespace, or another
//     cluster's, released (deletionPolicy Orphan: its description is the
//     release mark) may still be in that namespace's use: it is adopted
//     only where a TenantPolicy names its ID (adoptNetworks). A namespace
//     re-adopts what it released itself, as this cluster's release mark
//     records the releasing namespace;
//   - the subnet of spec.cidr exists and already matches the spec in every
//     field (a spec that would change it on adoption is a mistake until
//     the user says otherwise): nothing is changed.
//
// A refusal names fields, never values: whoever may write a Network in an
// allowed namespace must not learn another's network by naming its ID. A
// mismatch names the differing fields only of a network the namespace may
// already know (a policy names its ID, or the namespace released it);
// otherwise it says only that it differs, and that `network-controller
// import`, run by someone who may read the project, prints the spec that
// matches: a field at a time, the names would tell its settings.
//
// Then it records the network's and subnet's own names and descriptions in
// status (so that releasing them puts them back), and goes on only once
// the API server has stored them (record.go): it marks the subnet, then
// the network (so that a crash in between leaves a marked subnet, which the
// next attempt accepts as this Network's, and which an Orphan delete
// releases). Each mark is written onto the revision the checks read
// (Neutron's If-Match): another Network's adoption may mark the same
// network between this pass's read and its marks, and a mark written
// unconditionally would take it from that Network. Neutron refuses such a
// write (412), and the pass ends with errAdoptionChanged: the next one
// reads again, and refuses. Marking the subnet raises the network's
// revision too, so the network is read again after it, and marked only if
// that read shows what the checks saw. It never creates: a network that is gone stays
// AdoptionRefused. Deleting the Network releases, unless deletionPolicy
// says Delete.

// adoptNetwork adopts the network spec.adopt names, and its subnet of
// want's cidr, and returns the network, having stored the record of their
// names before it marks either.
func (p *pass) adoptNetwork(ctx context.Context, want desired.Subnet) (neutron.Network, error) {
	network, owner, id := p.network, p.owner, p.network.Spec.Adopt.NetworkID
	net, err := p.inv.GetNetwork(ctx, id)
	if neutron.IsNotFound(err) {
		return neutron.Network{}, adoptionRefused("Neutron network %s does not exist", id)
	}
	if err != nil {
		return neutron.Network{}, err
	}
	switch {
	case net.Shared:
		return neutron.Network{}, adoptionRefused("Neutron network %s is shared with every project; it is not adopted", id)
	case net.External:
		return neutron.Network{}, adoptionRefused("Neutron network %s is an external network (router:external); it is not adopted", id)
	}
	if other := p.otherOwner(owner, net.Name, net.Description); other != "" {
		return neutron.Network{}, adoptionRefused("Neutron network %s belongs to %s; it is not adopted", id, other)
	}
	// seen: the namespace may already know what the network holds.
	seen, err := p.adoptable(id, net.Description)
	if err != nil {
		return neutron.Network{}, err
	}
	if err := p.noForeignPorts(ctx, net); err != nil {
		return neutron.Network{}, err
	}
	subs, err := p.inv.SubnetsOf(ctx, id)
	if err != nil {
		return neutron.Network{}, err
	}
	i := slices.IndexFunc(subs, func(s neutron.Subnet) bool { return desired.SameCIDR(s.CIDR, want.CIDR.String()) })
	if i < 0 {
		if !seen {
			return neutron.Network{}, mismatchUnseen(id)
		}
		return neutron.Network{}, &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
			"Neutron network %s has no subnet of %s; nothing was changed", id, want.CIDR)}
	}
	subnet := subs[i]
	if other := p.otherOwner(owner, subnet.Name, subnet.Description); other != "" {
		return neutron.Network{}, adoptionRefused("Neutron subnet %s belongs to %s; it is not adopted", subnet.ID, other)
	}
	if diffs := adoptionDiff(want, specMTU(network), net, subnet); len(diffs) > 0 {
		if !seen {
			return neutron.Network{}, mismatchUnseen(id)
		}
		return neutron.Network{}, &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
			"Neutron subnet %s differs from the spec in %s; nothing was changed: make the spec say what Neutron holds, or change Neutron",
			subnet.ID, strings.Join(diffs, ", "))}
	}
	if err := p.recordAdoption(ctx, net, subnet); err != nil {
		return neutron.Network{}, err
	}
	if err := p.inv.MarkSubnet(ctx, owner, subnet); err != nil {
		return neutron.Network{}, changedSinceRead(id, err)
	}
	again, err := p.inv.GetNetwork(ctx, id)
	if err == nil && !sameForAdoption(net, again) {
		err = fmt.Errorf("adopting Neutron network %s: %w", id, errAdoptionChanged)
	}
	var adopted neutron.Network
	if err == nil {
		adopted, err = p.inv.MarkNetwork(ctx, owner, again)
		err = changedSinceRead(id, err)
	}
	if err != nil {
		// A lost race (another Network marked the network since it was
		// read) or a failure: the subnet marked above is put back as it
		// was read, so that no mark of this Network is left on a
		// network it does not own. A crash before this leaves the mark,
		// which the next pass completes or, the network being another's,
		// refuses with the subnet named in status.adopted.
		return neutron.Network{}, errors.Join(err, p.unmarkSubnet(ctx, subnet))
	}
	klog.FromContext(ctx).Info("Adopted Neutron network", "networkID", id, "subnetID", subnet.ID)
	p.eventf(corev1.EventTypeNormal, eventAdopted, "Adopted Neutron network %s with subnet %s (%s)", id, subnet.ID, subnet.CIDR)
	return adopted, nil
}

// unmarkSubnet puts back the name and description of subnet, as read
// before this pass marked it.
func (p *pass) unmarkSubnet(ctx context.Context, subnet neutron.Subnet) error {
	if err := p.inv.ReleaseSubnet(ctx, p.owner, subnet.ID, &inventory.Restored{Name: subnet.Name, Description: subnet.Description}); err != nil {
		return fmt.Errorf("putting back Neutron subnet %s as it was before the adoption: %w", subnet.ID, err)
	}
	return nil
}

// changedSinceRead is err, or errAdoptionChanged when err is Neutron's
// refusal of a mark because the resource changed since it was read.
func changedSinceRead(id string, err error) error {
	if neutron.IsStale(err) {
		return fmt.Errorf("adopting Neutron network %s: %w", id, errAdoptionChanged)
	}
	return err
}

// sameForAdoption reports whether the network read again before its mark
// (again) is still what the checks read (read) in every field they looked
// at. Its revision differs: the subnet's mark raised it.
func sameForAdoption(read, again neutron.Network) bool {
	return read.ID == again.ID && read.Name == again.Name && read.Description == again.Description &&
		read.Shared == again.Shared && read.External == again.External && read.MTU == again.MTU && read.ProjectID == again.ProjectID
}

// adoptable refuses a network another namespace, or another cluster,
// released (deletionPolicy Orphan) unless a TenantPolicy that selects the
// Network's namespace names its ID: its workloads may still use it, and
// the release is no grant to anyone else. It reports whether the
// namespace may already know what the network holds (seen): the policy
// named it, or the namespace itself released it, as this cluster's
// release mark proves. Only then does a mismatch name fields.
func (p *pass) adoptable(id, description string) (seen bool, err error) {
	named := false
	if p.opts.Adoption != nil {
		if named, err = p.opts.Adoption.NamesForAdoption(p.network.Namespace, id); err != nil {
			return false, fmt.Errorf("reading the adoption grants of namespace %s: %w", p.network.Namespace, err)
		}
	}
	if named {
		return true, nil
	}
	if ns, ok := p.mark.ReleasedFrom(description); ok && ns == p.network.Namespace {
		return true, nil
	}
	if neutron.IsReleased(description) {
		return false, adoptionRefused("Neutron network %s was released by the deletion of a Network of another namespace or cluster, whose workloads may still use it; "+
			"it is adopted only where a TenantPolicy names its ID in adoptNetworks", id)
	}
	return false, nil
}

// noForeignPorts refuses a network that another project has ports on (a
// VM of another project, an administrator's port): marking it would hand
// this Network the subnets others' workloads use. A port of no project is
// Neutron's own.
func (p *pass) noForeignPorts(ctx context.Context, net neutron.Network) error {
	ports, err := p.inv.PortsOf(ctx, net.ID, "")
	if err != nil {
		return err
	}
	if slices.ContainsFunc(ports, func(port neutron.Port) bool { return port.ProjectID != "" && port.ProjectID != net.ProjectID }) {
		return adoptionRefused("Neutron network %s has ports of another project; it is not adopted", net.ID)
	}
	return nil
}

// mismatchUnseen is the mismatch of a network the namespace may not know:
// no fields, which would let whoever names its ID learn its settings one
// field at a time.
func mismatchUnseen(id string) error {
	return &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(
		"Neutron network %s, or its subnet of spec.cidr, differs from the spec; nothing was changed: "+
			"`network-controller import`, run by someone who may read the project, prints the Network that matches it (docs/import.md)", id)}
}

// recordAdoption stores what net and subnet are called now in the
// Network's status, before either is marked, unless status already holds
// the record of these two; the pass marks them only once the API server
// has it. A resource that already carries this Network's name without a
// record in the cache was marked by an earlier attempt whose record the
// cache has not caught up with: its name now is ours, not the original, so
// nothing is recorded from it.
func (p *pass) recordAdoption(ctx context.Context, net neutron.Network, subnet neutron.Subnet) error {
	if a := p.network.Status.Adopted; a != nil && a.NetworkID == net.ID && a.SubnetID == subnet.ID {
		return nil
	}
	if p.marked(net.Name, net.Description) || p.marked(subnet.Name, subnet.Description) {
		return fmt.Errorf("adopting Neutron network %s: %w", net.ID, errAdoptionRecordPending)
	}
	return p.writeRecord(ctx, "the own names of Neutron network "+net.ID+" and its subnet", Record{Place: p.recorded.Place, Adopted: &samplecrdv1.AdoptedResources{
		NetworkID: net.ID, NetworkName: net.Name, NetworkDescription: net.Description,
		SubnetID: subnet.ID, SubnetName: subnet.Name, SubnetDescription: subnet.Description,
	}})
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
