package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Delete deletes network's Neutron resources, or releases them
// (deletionPolicy: Orphan). The Outcome is Finalized once Neutron has
// confirmed; 404 counts as confirmed. The controller then removes its
// finalizer. It starts only from a settled view of what the Network owns
// (Inventory.Settled): after a write whose answer was lost, it waits for
// the list that shows what the write did.
func (r *Reconciler) Delete(ctx context.Context, network *samplecrdv2.Network) Outcome {
	return r.knowingQuota(network, r.deleteNetwork(ctx, network))
}

// deleteNetwork is Delete's pass.
func (r *Reconciler) deleteNetwork(ctx context.Context, network *samplecrdv2.Network) Outcome {
	p := r.newPass(ctx, network)
	ctx = neutron.InPlace(ctx, p.recorded.Place) // as the ladder's requests
	if !r.inv.Synced() {
		return Outcome{Observed: LastObserved(network.Status), Requeue: AddRateLimited, Err: inventory.ErrNotSynced}
	}
	owned, err := r.inv.Settled(network.UID)
	if err != nil {
		return p.failed(phaseDeleting, err, LastObserved(network.Status))
	}
	// Nothing held of a Network whose status names a network or a place:
	// deleted by hand, or in a place the credentials no longer reach,
	// where the delete would confirm at once and the network stay behind
	// (a create whose answer was lost leaves a place and no networkID).
	if owned.Empty() && (network.Status.NetworkID != "" || !recordedPlace(network.Status).IsZero()) {
		if err := p.samePlace(ctx); err != nil {
			return p.failed(phaseDeleting, err, LastObserved(network.Status))
		}
	}
	if deletionPolicy(network) == samplecrdv2.DeletionPolicyOrphan {
		if err := p.releaseRouters(ctx, owned); err != nil {
			return p.failed(phaseReleasing, err, LastObserved(network.Status))
		}
		if err := p.release(ctx, owned); err != nil {
			return p.failed(phaseReleasing, err, LastObserved(network.Status))
		}
		return Outcome{Finalized: true, Events: p.events}
	}
	if network.Spec.Router != nil || network.Status.Router != nil {
		if _, err := detachAll(ctx, r.inv, owned); err != nil {
			return p.deletionFailure(ctx, owned, err)
		}
	}
	if err := DeleteOwned(ctx, p.inv, owned, network.Status.Adopted); err != nil {
		return p.deletionFailure(ctx, owned, err)
	}
	for _, n := range owned.Networks {
		p.eventf(corev1.EventTypeNormal, eventDeleted, "Deleted Neutron network %s", n.ID)
	}
	klog.FromContext(ctx).Info("Deleted Neutron resources", "networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return Outcome{Finalized: true, Events: p.events}
}

// release finalizes a Network whose deletionPolicy is Orphan: everything
// of it that carries the mark stays in Neutron without the mark — its
// network, and every subnet that is not on a duplicate, whatever state an
// adoption left (a subnet marked on a network whose marking failed is
// released too). Duplicates (see ensureNetwork) are deleted as usual, since
// nobody asked to keep them. Subnets are released before their network, so
// that a crash in between leaves a marked network, which the next attempt
// finds and releases. What was adopted gets its own names back.
func (p *pass) release(ctx context.Context, owned inventory.Owned) error {
	keep, duplicates, found := chooseNetwork(owned, p.network.Status.NetworkID)
	onDuplicate := func(s neutron.Subnet) bool {
		return slices.ContainsFunc(duplicates, func(d neutron.Network) bool { return d.ID == s.NetworkID })
	}
	adopted := p.network.Status.Adopted
	for _, s := range owned.Subnets {
		if onDuplicate(s) {
			continue
		}
		if err := p.inv.ReleaseSubnet(ctx, p.owner, s.ID, adoptedSubnetNames(adopted, s.ID)); err != nil {
			return err
		}
	}
	if found {
		var orig *inventory.Restored
		if adopted != nil && adopted.NetworkID == keep.ID {
			orig = &inventory.Restored{Name: adopted.NetworkName, Description: adopted.NetworkDescription}
		}
		if err := p.inv.ReleaseNetwork(ctx, p.owner, keep.ID, orig); err != nil {
			return err
		}
		p.eventf(corev1.EventTypeNormal, eventOrphaned,
			"Left Neutron network %s and its subnets in place without the ownership mark (deletionPolicy: Orphan)", keep.ID)
	}
	for _, d := range duplicates {
		if err := DeleteOwned(ctx, p.inv, p.inv.Get(p.owner.UID).Only(d.ID), nil); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).Info("Released Neutron resources", "networkID", keep.ID)
	return nil
}

// deletionFailure is the Outcome of a delete that Neutron did not confirm.
// When Neutron refuses because ports still use the network, it names the
// ports, so the operator knows what to remove.
func (p *pass) deletionFailure(ctx context.Context, owned inventory.Owned, err error) Outcome {
	out := p.failed(phaseDeleting, err, LastObserved(p.network.Status))
	var rejected *neutron.RejectedError
	if out.Condition == nil || out.Condition.Reason != samplecrdv1.ReasonDeletionBlocked || !errors.As(err, &rejected) {
		return out
	}
	var blocking []string
	for _, n := range owned.Networks {
		ports, listErr := p.inv.PortsOf(ctx, n.ID, "")
		if listErr != nil {
			return out
		}
		for _, port := range ports {
			if !port.DeletedWithNetwork() {
				blocking = append(blocking, fmt.Sprintf("%s (%s)", port.ID, cmp.Or(port.DeviceOwner, "no device_owner")))
			}
		}
	}
	if len(blocking) == 0 {
		// Nothing of ours in use: a router of its own that another
		// tool's interface holds, which Neutron's message names.
		return out
	}
	out.Condition.Message = namingRequest(fmt.Sprintf(
		"Neutron refuses to delete the network while ports use it; delete them to finish: %s (Neutron: %s)",
		boundList(blocking), rejected.Message), requestOf(err, p.requestID))
	return out
}

// DeleteOwned deletes owned through inv, the project's one door to
// Neutron: a Network's deletion and the garbage collector's
// (pkg/controller/collector) alike. Each network is one DELETE: Neutron
// deletes a network's subnets, and the ports it made for them (DHCP),
// with it, and the inventory forgets them with it (Store.RemoveNetwork);
// the door sends it only while every subnet on the network is owned's
// (Inventory.DeleteNetwork).
// A subnet of ours on a network that is not owned's is never deleted: the
// controller makes subnets only on networks of its own, so it is one that
// an adoption marked and never finished (the network's mark failed, or
// another Network adopted the network meanwhile). It is a user's, on a
// network that may be another Network's, whatever the deletionPolicy: it
// is released first, with the names adopted (the Network's
// status.adopted) records of it, if any. A network or subnet in use may be
// held by a router interface of ours that nothing recorded (an orphan's,
// or one whose status write was lost): those are detached, and the delete
// tried once more. Routers of its own go last.
func DeleteOwned(ctx context.Context, inv *inventory.Inventory, owned inventory.Owned, adopted *samplecrdv2.AdoptedResources) error {
	for _, s := range owned.Subnets {
		if slices.ContainsFunc(owned.Networks, func(n neutron.Network) bool { return n.ID == s.NetworkID }) {
			continue // deleted with its network
		}
		if err := inv.ReleaseSubnet(ctx, owned.Owner, s.ID, adoptedSubnetNames(adopted, s.ID)); err != nil {
			return fmt.Errorf("giving back Neutron subnet %s, marked by an adoption that never finished: %w", s.ID, err)
		}
	}
	for _, n := range owned.Networks {
		if err := detachingIfInUse(ctx, inv, owned, func() error { return inv.DeleteNetwork(ctx, owned.Owner, n.ID) }); err != nil {
			return err
		}
	}
	// Last: a router of its own is deleted only once no interface of
	// ours is on it, and Neutron refuses while another tool's is.
	for _, rt := range owned.Routers {
		if err := inv.DeleteRouter(ctx, owned.Owner, rt.ID); err != nil {
			return err
		}
	}
	return nil
}

// adoptedSubnetNames is what adopted records of subnet id as it was before
// the adoption marked it, nil if it records nothing of it.
func adoptedSubnetNames(adopted *samplecrdv2.AdoptedResources, id string) *inventory.Restored {
	a, ok := adoptedSubnet(adopted, id)
	if !ok {
		return nil
	}
	return &inventory.Restored{Name: a.Name, Description: a.Description}
}

// detachingIfInUse runs del, a delete; if Neutron refuses it as in use
// (409 NetworkInUse, SubnetInUse), it detaches owned's router interfaces
// and, if there were any, runs it once more. A delete that costs one
// request where no router ever was reads no ports.
func detachingIfInUse(ctx context.Context, inv *inventory.Inventory, owned inventory.Owned, del func() error) error {
	err := del()
	if !inUse(err) {
		return err
	}
	detached, detachErr := detachAll(ctx, inv, owned)
	if detachErr != nil {
		return detachErr
	}
	if detached > 0 {
		err = del()
	}
	return err
}
