package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
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
//     Neutron's own), and no subnet on it is (one the network names that
//     the project's list of its subnets does not show);
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
// each entry of wants, and returns the network, having stored the
// record of their names before it marks either. Every subnet of the
// network is compared with wants (compareSubnets) first.
func (p *pass) adoptNetwork(ctx context.Context, wants []desired.Want) (neutron.Network, error) {
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
	if err := noHiddenSubnets(net, subs); err != nil {
		return neutron.Network{}, err
	}
	matched, err := p.compareSubnets(wants, specMTU(network), net, subs, seen)
	if err != nil {
		return neutron.Network{}, err
	}
	if err := p.recordAdoption(ctx, net, matched); err != nil {
		return neutron.Network{}, err
	}
	var marked []neutron.Subnet
	for _, subnet := range matched {
		if err = p.inv.MarkSubnet(ctx, owner, subnet); err != nil {
			err = changedSinceRead(id, err)
			break
		}
		marked = append(marked, subnet)
	}
	var again neutron.Network
	if err == nil {
		again, err = p.inv.GetNetwork(ctx, id)
		if err == nil && !sameForAdoption(net, again) {
			err = fmt.Errorf("adopting Neutron network %s: %w", id, errAdoptionChanged)
		}
	}
	var adopted neutron.Network
	if err == nil {
		adopted, err = p.inv.MarkNetwork(ctx, owner, again)
		err = changedSinceRead(id, err)
	}
	if err != nil {
		// A lost race (another Network marked the network since it was
		// read) or a failure: the subnets marked above are put back as
		// they were read, so that no mark of this Network is left on a
		// network it does not own. A crash before this leaves the marks,
		// which the next pass completes or, the network being another's,
		// refuses with the subnets named in status.adopted.
		errs := []error{err}
		for _, subnet := range marked {
			errs = append(errs, p.unmarkSubnet(ctx, subnet))
		}
		return neutron.Network{}, errors.Join(errs...)
	}
	for _, subnet := range matched {
		klog.FromContext(ctx).Info("Adopted Neutron network", "networkID", id, "subnetID", subnet.ID)
		p.eventf(corev1.EventTypeNormal, eventAdopted, "Adopted Neutron network %s with subnet %s (%s)", id, subnet.ID, subnet.CIDR)
	}
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

// noHiddenSubnets refuses a network that names a subnet (its "subnets")
// the list of its subnets, which shows the credentials' project only, did
// not return: another project's. compareSubnets would never see it, and
// the adopted network would carry a subnet nobody here may prove is ours
// (its MTU would be this Network's to change, its delete blocked by it).
// It names no ID: the subnet is not the namespace's to learn of.
func noHiddenSubnets(net neutron.Network, subs []neutron.Subnet) error {
	for _, id := range net.SubnetIDs {
		if !slices.ContainsFunc(subs, func(s neutron.Subnet) bool { return s.ID == id }) {
			return adoptionRefused("Neutron network %s has a subnet of another project; it is not adopted", net.ID)
		}
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

// recordAdoption stores what net and subnets are called now in the
// Network's status (status.adopted, every subnet), before any is marked,
// unless status already holds the record of these; the pass marks them
// only once the API server has it. A resource that already carries this
// Network's name without a record in the cache was marked by an earlier
// attempt whose record the cache has not caught up with: its name now is
// ours, not the original, so nothing is recorded from it.
func (p *pass) recordAdoption(ctx context.Context, net neutron.Network, subnets []neutron.Subnet) error {
	rec := &samplecrdv2.AdoptedResources{NetworkID: net.ID, NetworkName: net.Name, NetworkDescription: net.Description}
	for _, s := range subnets {
		rec.Subnets = append(rec.Subnets, samplecrdv2.AdoptedSubnet{ID: s.ID, Name: s.Name, Description: s.Description})
	}
	if a := p.network.Status.Adopted; a != nil && a.NetworkID == net.ID && sameAdoptedIDs(a.Subnets, rec.Subnets) {
		return nil
	}
	if p.marked(net.Name, net.Description) || slices.ContainsFunc(subnets, func(s neutron.Subnet) bool { return p.marked(s.Name, s.Description) }) {
		return fmt.Errorf("adopting Neutron network %s: %w", net.ID, errAdoptionRecordPending)
	}
	return p.writeRecord(ctx, "the own names of Neutron network "+net.ID+" and its subnets", Record{Place: p.recorded.Place, Adopted: rec})
}

// sameAdoptedIDs reports whether a and b record the same subnets, by ID,
// in any order.
func sameAdoptedIDs(a, b []samplecrdv2.AdoptedSubnet) bool {
	return len(a) == len(b) && !slices.ContainsFunc(b, func(s samplecrdv2.AdoptedSubnet) bool {
		return !slices.ContainsFunc(a, func(t samplecrdv2.AdoptedSubnet) bool { return t.ID == s.ID })
	})
}

// adoptedSubnet is what status.adopted recorded of subnet id, if anything.
func adoptedSubnet(a *samplecrdv2.AdoptedResources, id string) (samplecrdv2.AdoptedSubnet, bool) {
	if a == nil {
		return samplecrdv2.AdoptedSubnet{}, false
	}
	i := slices.IndexFunc(a.Subnets, func(s samplecrdv2.AdoptedSubnet) bool { return s.ID == id })
	if i < 0 {
		return samplecrdv2.AdoptedSubnet{}, false
	}
	return a.Subnets[i], true
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

// compareSubnets compares every subnet of the adopted network net (subs)
// with wants: each entry must have its subnet there, equal to it in every
// field, no subnet of net may be one the spec does not name, and none may
// belong to someone else. It returns the subnets of wants, in its order.
// A mismatch names ranges and fields only where the namespace may already
// know the network (seen).
func (p *pass) compareSubnets(wants []desired.Want, mtu int, net neutron.Network, subs []neutron.Subnet, seen bool) ([]neutron.Subnet, error) {
	mismatch := func(format string, args ...any) error {
		if !seen {
			return mismatchUnseen(net.ID)
		}
		return &adoptionError{reason: samplecrdv1.ReasonAdoptionMismatch, msg: fmt.Sprintf(format, args...)}
	}
	matched := make([]neutron.Subnet, len(wants))
	for i, w := range wants {
		j := slices.IndexFunc(subs, func(s neutron.Subnet) bool { return !w.FromPool() && desired.SameCIDR(s.CIDR, w.Key) })
		if j < 0 {
			return nil, mismatch("Neutron network %s has no subnet of %s; nothing was changed", net.ID, cmp.Or(w.Key, "a subnet pool"))
		}
		matched[i] = subs[j]
	}
	for _, s := range subs {
		if !slices.ContainsFunc(matched, func(m neutron.Subnet) bool { return m.ID == s.ID }) {
			return nil, mismatch("Neutron network %s has a subnet, %s (%s), that spec.subnets does not name; nothing was changed", net.ID, s.ID, s.CIDR)
		}
	}
	for i, s := range matched {
		if other := p.otherOwner(p.owner, s.Name, s.Description); other != "" {
			return nil, adoptionRefused("Neutron subnet %s belongs to %s; it is not adopted", s.ID, other)
		}
		if diffs := adoptionDiff(wants[i].Subnet, mtu, net, s); len(diffs) > 0 {
			return nil, mismatch("Neutron subnet %s differs from the spec in %s; nothing was changed: make the spec say what Neutron holds, or change Neutron",
				s.ID, strings.Join(diffs, ", "))
		}
	}
	return matched, nil
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
