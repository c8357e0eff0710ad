package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// Event reasons, besides the Ready condition's reasons.
const (
	eventCreated        = "Created"
	eventUpdated        = "Updated"
	eventDeleted        = "Deleted"
	eventDriftRepaired  = "DriftRepaired"
	eventDeletionFailed = "DeletionFailed"
	eventOrphaned       = "Orphaned"
	eventAdopted        = "Adopted"
)

// syncHandler makes Neutron equal to the Network named by key and records
// the outcome in the Network's status; for an orphan key, it collects what
// Neutron still holds for a Network that is gone. It is level-triggered: it
// does not know which event queued the key, and it does not need to.
func (c *Controller) syncHandler(ctx context.Context, key queueKey) error {
	if key.OrphanUID != "" {
		return c.collectOrphans(ctx, key.OrphanUID)
	}
	network, err := c.networksLister.Networks(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// Gone: its Neutron resources, if any are left, are collected
		// under its UID (queued by the delete event and by every refresh).
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Network %s from the cache: %w", key, err)
	}

	if network.DeletionTimestamp != nil {
		return c.finalize(ctx, network)
	}
	// The spec in Neutron's terms, once per sync. What Neutron would
	// refuse, and CEL cannot see, is refused here, before anything is asked
	// of Neutron. (A range from a pool is known only once allocated: its
	// subnet is spelled out in reconcile, and the API refuses what would
	// need it earlier.)
	var want desiredSubnet
	if network.Spec.CIDR != "" {
		if want, err = desiredSubnetOf(network.Spec, network.Spec.CIDR); err != nil {
			return c.reportFailure(ctx, network, err, lastObserved(network.Status))
		}
	}
	if st := c.inventory.Status(); !st.Synced {
		if err := c.updateStatus(ctx, network, notReady(samplecrdv1.ReasonNeutronUnavailable,
			"Neutron has not been listed yet: "+st.Healthy().Error()), lastObserved(network.Status)); err != nil {
			return err
		}
		return neutron.ErrNotSynced
	}

	// The finalizer goes on before anything exists in Neutron, so that no
	// Neutron resource can outlive its Network unnoticed.
	if !hasFinalizer(network) {
		if err := c.setFinalizer(ctx, network, true); err != nil {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Added finalizer")
	}

	obs, err := c.reconcile(ctx, network, want)
	if err != nil {
		return c.reportFailure(ctx, network, err, obs)
	}
	return c.updateStatus(ctx, network, ready(), obs)
}

// reconcile is the ladder: the network, then its subnet, then what may
// change in place (the subnet's options, the network's MTU). Each step
// reads the inventory, and writes to Neutron only when what is there
// differs from the spec. It returns what Neutron holds, as far as it knows.
// want is the desired subnet; zero for a range from a pool, which is
// spelled out once the pool has allocated it.
func (c *Controller) reconcile(ctx context.Context, network *samplecrdv1.Network, want desiredSubnet) (observed, error) {
	obs := lastObserved(network.Status)
	owned := c.inventory.Get(network.UID)
	net, netCreated, err := c.ensureNetwork(ctx, network, want, owned)
	if err != nil {
		return obs, err
	}
	obs.networkID = net.ID
	// Read again: an adoption has just added to it.
	owned = c.inventory.Get(network.UID)
	subnet, subnetCreated, err := c.ensureSubnet(ctx, network, want, net, owned)
	c.recordCreated(network, net, netCreated, subnet, subnetCreated)
	if err != nil {
		return obs, err
	}
	obs = observedOf(net, subnet)
	if network.Spec.SubnetPool != "" {
		if want, err = desiredSubnetOf(network.Spec, subnet.CIDR); err != nil {
			return obs, err
		}
	}
	if subnet, err = c.ensureSubnetOptions(ctx, network, want, subnet); err != nil {
		return obs, err
	}
	obs = observedOf(net, subnet)
	if net, err = c.ensureMTU(ctx, network, net); err != nil {
		return obs, err
	}
	return observedOf(net, subnet), nil
}

// finalize deletes network's Neutron resources and then releases its
// finalizer. Neutron must confirm first; 404 counts as confirmed.
func (c *Controller) finalize(ctx context.Context, network *samplecrdv1.Network) error {
	if !hasFinalizer(network) {
		return nil
	}
	if !c.inventory.Status().Synced {
		return neutron.ErrNotSynced
	}
	owned := c.inventory.Get(network.UID)
	if network.Spec.DeletionPolicy == samplecrdv1.DeletionPolicyOrphan {
		return c.orphan(ctx, network, owned)
	}
	if err := c.deleteOwned(ctx, ownerOf(network), owned); err != nil {
		cond := c.deletionFailure(ctx, owned, err)
		reason := eventDeletionFailed
		if cond.Reason == samplecrdv1.ReasonDeletionBlocked {
			reason = samplecrdv1.ReasonDeletionBlocked
		}
		c.recorder.Event(network, corev1.EventTypeWarning, reason, cond.Message)
		if statusErr := c.updateStatus(ctx, network, cond, lastObserved(network.Status)); statusErr != nil {
			return errors.Join(err, statusErr)
		}
		// Retried with backoff, capped at --max-retry-delay: the ports of a
		// blocked delete go away by someone else's hand.
		return err
	}
	for _, n := range owned.Networks {
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventDeleted, "Deleted Neutron network %s", n.ID)
	}
	klog.FromContext(ctx).Info("Deleted Neutron resources; releasing the finalizer", "networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return c.setFinalizer(ctx, network, false)
}

// orphan finalizes a Network whose deletionPolicy is Orphan: its network
// and that network's subnets stay in Neutron without the mark; duplicates
// (see ensureNetwork) are deleted as usual, since nobody asked to keep them.
// Subnets are released before their network, so that a crash in between
// leaves a marked network, which the next attempt finds and releases.
func (c *Controller) orphan(ctx context.Context, network *samplecrdv1.Network, owned neutron.Owned) error {
	owner := ownerOf(network)
	keep, duplicates, found := chooseNetwork(owned, network.Status.NetworkID)
	if found {
		for _, s := range owned.Subnets {
			if s.NetworkID != keep.ID {
				continue
			}
			if err := c.releaseSubnet(ctx, owner, s.ID); err != nil {
				return c.reportOrphanFailure(ctx, network, err)
			}
		}
		if err := c.releaseNetwork(ctx, owner, keep.ID); err != nil {
			return c.reportOrphanFailure(ctx, network, err)
		}
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventOrphaned,
			"Left Neutron network %s and its subnets in place without the ownership mark (deletionPolicy: Orphan)", keep.ID)
	}
	for _, d := range duplicates {
		if err := c.deleteOwned(ctx, owner, c.inventory.Get(network.UID).Only(d.ID)); err != nil {
			return c.reportOrphanFailure(ctx, network, err)
		}
	}
	klog.FromContext(ctx).Info("Released Neutron resources; releasing the finalizer", "networkID", keep.ID)
	return c.setFinalizer(ctx, network, false)
}

func (c *Controller) reportOrphanFailure(ctx context.Context, network *samplecrdv1.Network, err error) error {
	cond := notReady(samplecrdv1.ReasonDeleting, "Waiting for Neutron to release the network (deletionPolicy: Orphan): "+err.Error())
	c.recorder.Event(network, corev1.EventTypeWarning, eventDeletionFailed, cond.Message)
	return errors.Join(err, c.updateStatus(ctx, network, cond, lastObserved(network.Status)))
}

// deletionFailure is the Ready condition of a Network whose Neutron
// resources could not be deleted. When Neutron refuses because ports still
// use them, it names the ports, so the operator knows what to remove.
func (c *Controller) deletionFailure(ctx context.Context, owned neutron.Owned, err error) metav1.Condition {
	var rejected *neutron.RejectedError
	if !errors.As(err, &rejected) || !rejected.InUse() {
		return notReady(samplecrdv1.ReasonDeleting, "Waiting for Neutron to delete the network: "+err.Error())
	}
	var blocking []string
	for _, n := range owned.Networks {
		ports, listErr := c.neutron.PortsOf(ctx, n.ID)
		if listErr != nil {
			return notReady(samplecrdv1.ReasonDeletionBlocked, "Neutron refused: "+rejected.Message)
		}
		for _, p := range ports {
			if !ownedByNeutron(p) {
				blocking = append(blocking, fmt.Sprintf("%s (%s)", p.ID, cmp.Or(p.DeviceOwner, "no device_owner")))
			}
		}
	}
	return notReady(samplecrdv1.ReasonDeletionBlocked, fmt.Sprintf(
		"Neutron refuses to delete the network while ports use it; delete them to finish: %s (Neutron: %s)",
		strings.Join(blocking, ", "), rejected.Message))
}

// ownedByNeutron reports whether a port is one Neutron makes and deletes
// with its network (DHCP, OVN's metadata and router ports), not one that
// blocks a delete.
func ownedByNeutron(p neutron.Port) bool {
	return strings.HasPrefix(p.DeviceOwner, "network:dhcp") || p.DeviceOwner == "network:distributed"
}

// collectOrphans deletes what Neutron holds under our mark for uid, once
// sure that no Network of that UID exists: its finalizer was removed by
// hand, or a create completed in Neutron after its Network was deleted.
func (c *Controller) collectOrphans(ctx context.Context, uid types.UID) error {
	if _, ok := c.networkByUID(uid); ok {
		return nil
	}
	owned := c.inventory.Get(uid)
	if len(owned.Networks)+len(owned.Subnets) == 0 || !c.manages(owned.Owner) {
		return nil
	}
	if err := c.deleteOwned(ctx, owned.Owner, owned); err != nil {
		return err
	}
	orphansCollected.WithLabelValues("network").Add(float64(len(owned.Networks)))
	orphansCollected.WithLabelValues("subnet").Add(float64(len(owned.Subnets)))
	klog.FromContext(ctx).Info("Deleted orphaned Neutron resources", "owner", owned.Owner.Key(),
		"networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return nil
}

// deleteOwned deletes subnets before networks: Neutron refuses to delete a
// network whose subnets still have ports.
func (c *Controller) deleteOwned(ctx context.Context, owner neutron.Owner, owned neutron.Owned) error {
	for _, s := range owned.Subnets {
		if err := c.deleteSubnet(ctx, owner, s.ID); err != nil {
			return err
		}
	}
	for _, n := range owned.Networks {
		if err := c.deleteNetwork(ctx, owner, n.ID); err != nil {
			return err
		}
	}
	return nil
}

// reportFailure turns a failed sync into the Ready condition and a Warning
// Event, and decides how the key is retried: Neutron's refusals of an
// invalid request after a fixed, long delay (retrying them unchanged is
// pointless); a used-up quota and everything else (unreachable, 5xx,
// timeouts) with backoff capped at --max-retry-delay.
func (c *Controller) reportFailure(ctx context.Context, network *samplecrdv1.Network, syncErr error, obs observed) error {
	var (
		rejected *neutron.RejectedError
		invalid  *invalidSpecError
		adoption *adoptionError
		cond     metav1.Condition
		result   error
	)
	switch {
	case errors.As(syncErr, &adoption):
		cond = notReady(adoption.reason, adoption.msg)
		result = retryAfterError{err: syncErr, after: rejectedRetryInterval}
	case errors.As(syncErr, &invalid):
		// Nothing to retry: the spec must change, and its change queues
		// the Network again.
		cond = notReady(samplecrdv1.ReasonInvalidSpec, invalid.msg)
		result = nil
	case errors.As(syncErr, &rejected) && rejected.OverQuota():
		// Not terminal: a quota is raised, a network freed. Backoff,
		// capped, notices either without anyone touching the Network.
		cond = notReady(samplecrdv1.ReasonNeutronQuotaExceeded, "Neutron refused: "+rejected.Message)
		result = syncErr
	case errors.As(syncErr, &rejected):
		reason := samplecrdv1.ReasonNeutronRejected
		if rejected.Overlap() {
			reason = samplecrdv1.ReasonCIDRConflict
		}
		cond = notReady(reason, "Neutron refused: "+rejected.Message)
		result = retryAfterError{err: syncErr, after: rejectedRetryInterval}
	default:
		cond = notReady(samplecrdv1.ReasonNeutronUnavailable, syncErr.Error())
		result = syncErr
	}
	c.recorder.Event(network, corev1.EventTypeWarning, cond.Reason, cond.Message)
	if err := c.updateStatus(ctx, network, cond, obs); err != nil {
		return errors.Join(syncErr, err)
	}
	return result
}

// ownerOf is the owner Neutron resources of network are created for.
func ownerOf(network *samplecrdv1.Network) neutron.Owner {
	return neutron.Owner{Namespace: network.Namespace, Name: network.Name, UID: network.UID}
}

func hasFinalizer(network *samplecrdv1.Network) bool {
	return slices.Contains(network.Finalizers, samplecrdv1.NetworkFinalizer)
}
