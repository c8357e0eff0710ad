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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/desired"
	"github.com/samplecrd/network-controller/pkg/metrics"
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
	// eventOrphanCollectionCapped is recorded on a namespace.
	eventOrphanCollectionCapped = "OrphanCollectionCapped"
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
	if network.Spec.Adopt != nil {
		// Adoption records the network's own names in status before it
		// marks anything, and the sync goes on with that record: on a
		// copy, since the lister's object belongs to the cache.
		network = network.DeepCopy()
	}
	// The spec in Neutron's terms, once per sync. What Neutron would
	// refuse, and CEL cannot see, is refused here, before anything is asked
	// of Neutron. (A range from a pool is known only once allocated: its
	// subnet is spelled out in reconcile, and the API refuses what would
	// need it earlier.)
	var want desired.Subnet
	if network.Spec.CIDR != "" {
		if want, err = desired.SubnetOf(network.Spec, network.Spec.CIDR); err != nil {
			return c.reportFailure(ctx, network, err, lastObserved(network.Status))
		}
	}
	if st := c.inventory.Status(); !st.Synced {
		return c.waitForInventory(ctx, network, st)
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
	// What status says of an adoption stays, whatever the sync found: the
	// record is the only copy of the names to give back.
	obs = obs.keepAdopted(network.Status)
	if err != nil {
		return c.reportFailure(ctx, network, err, obs)
	}
	return c.updateStatus(ctx, network, ready(), obs)
}

// waitForInventory answers for a Network synced before the first
// successful list of Neutron, when nothing is known of what Neutron holds.
// A Network Ready for its generation stays so: nothing says it is not, and
// a restart or a new leader during an outage must not flip every Network
// (N status writes) only to flip them back. Any other says why it waits,
// once, so that none is left without a reason.
func (c *Controller) waitForInventory(ctx context.Context, network *samplecrdv1.Network, st neutron.Status) error {
	if isReady(network) {
		return neutron.ErrNotSynced
	}
	reason := samplecrdv1.ReasonNeutronUnavailable
	if neutron.IsAuthError(st.Err) {
		reason = samplecrdv1.ReasonAuthenticationFailed
	}
	cond := notReady(reason, "Neutron has not been listed yet: "+st.Healthy().Error())
	if err := c.reportCondition(ctx, network, reason, cond, lastObserved(network.Status)); err != nil {
		return err
	}
	return neutron.ErrNotSynced
}

// isReady reports whether network is Ready for its current generation.
func isReady(network *samplecrdv1.Network) bool {
	cond := meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady)
	return cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == network.Generation
}

// reconcile is the ladder: the network, then its subnet, then what may
// change in place (the subnet's options, the network's MTU). Each step
// reads the inventory, and writes to Neutron only when what is there
// differs from the spec. It returns what Neutron holds, as far as it knows.
// want is the desired subnet; zero for a range from a pool, which is
// spelled out once the pool has allocated it.
func (c *Controller) reconcile(ctx context.Context, network *samplecrdv1.Network, want desired.Subnet) (observed, error) {
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
		if want, err = desired.SubnetOf(network.Spec, subnet.CIDR); err != nil {
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
	if deletionPolicy(network) == samplecrdv1.DeletionPolicyOrphan {
		return c.orphan(ctx, network, owned)
	}
	if err := c.deleteOwned(ctx, ownerOf(network), owned); err != nil {
		cond := c.deletionFailure(ctx, owned, err)
		reason := eventDeletionFailed
		if cond.Reason == samplecrdv1.ReasonDeletionBlocked {
			reason = samplecrdv1.ReasonDeletionBlocked
		}
		if statusErr := c.reportCondition(ctx, network, reason, cond, lastObserved(network.Status)); statusErr != nil {
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

// deletionPolicy is what deleting network does to its Neutron resources:
// spec.deletionPolicy, else Orphan for an adopted network (it was someone
// else's before; deleting it needs saying so) and Delete for what the
// controller created.
func deletionPolicy(network *samplecrdv1.Network) samplecrdv1.DeletionPolicy {
	switch {
	case network.Spec.DeletionPolicy != "":
		return network.Spec.DeletionPolicy
	case network.Spec.Adopt != nil:
		return samplecrdv1.DeletionPolicyOrphan
	}
	return samplecrdv1.DeletionPolicyDelete
}

// orphan finalizes a Network whose deletionPolicy is Orphan: everything
// of it that carries the mark stays in Neutron without the mark — its
// network, and every subnet that is not on a duplicate, whatever state an
// adoption left (a subnet marked on a network whose marking failed is
// released too). Duplicates (see ensureNetwork) are deleted as usual, since
// nobody asked to keep them. Subnets are released before their network, so
// that a crash in between leaves a marked network, which the next attempt
// finds and releases. What was adopted gets its own names back.
func (c *Controller) orphan(ctx context.Context, network *samplecrdv1.Network, owned neutron.Owned) error {
	owner := ownerOf(network)
	keep, duplicates, found := chooseNetwork(owned, network.Status.NetworkID)
	onDuplicate := func(s neutron.Subnet) bool {
		return slices.ContainsFunc(duplicates, func(d neutron.Network) bool { return d.ID == s.NetworkID })
	}
	adopted := network.Status.Adopted
	for _, s := range owned.Subnets {
		if onDuplicate(s) {
			continue
		}
		var orig *restored
		if adopted != nil && adopted.SubnetID == s.ID {
			orig = &restored{adopted.SubnetName, adopted.SubnetDescription}
		}
		if err := c.releaseSubnet(ctx, owner, s.ID, orig); err != nil {
			return c.reportOrphanFailure(ctx, network, err)
		}
	}
	if found {
		var orig *restored
		if adopted != nil && adopted.NetworkID == keep.ID {
			orig = &restored{adopted.NetworkName, adopted.NetworkDescription}
		}
		if err := c.releaseNetwork(ctx, owner, keep.ID, orig); err != nil {
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
	return errors.Join(err, c.reportCondition(ctx, network, eventDeletionFailed, cond, lastObserved(network.Status)))
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
		boundList(blocking), rejected.Message))
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
// Sure means (see pkg/orphans): collection is on; the resources' names
// record this very cluster; two lists of Neutron a grace period apart found
// them orphaned; a live read of the API server, not the cache, finds no
// Network of that UID; and the list's budget of deletions is not spent.
// What fails a test is held back, counted, and looked at again at the next
// list.
func (c *Controller) collectOrphans(ctx context.Context, uid types.UID) error {
	if _, ok := c.networkByUID(uid); ok {
		c.orphans.Forget(uid)
		return nil
	}
	owned := c.inventory.Get(uid)
	if len(owned.Networks)+len(owned.Subnets) == 0 || !c.manages(owned.Owner) {
		c.orphans.Forget(uid)
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("owner", owned.Owner.Key(), "ownerUID", uid)
	switch {
	case !c.opts.CollectOrphans:
		return c.holdBack(ctx, owned, heldDisabled)
	case !c.mark.Collectable(owned.Owner):
		return c.holdBack(ctx, owned, heldNotThisCluster)
	case !c.orphans.Due(uid):
		if !c.orphans.Sighted(uid) {
			// Queued by a delete event, before any list saw it orphaned:
			// one list now makes the first sighting, and that list asks
			// for the second, a grace period later.
			c.requestRefreshAfter(0)
		}
		return nil
	}
	alive, err := c.ownerAlive(ctx, owned.Owner)
	if err != nil {
		return err
	}
	if alive {
		return c.holdBack(ctx, owned, heldOwnerAlive)
	}
	if ok, first := c.orphans.Take(); !ok {
		if first {
			c.recorder.Eventf(namespaceRef(owned.Owner.Namespace), corev1.EventTypeWarning, eventOrphanCollectionCapped,
				"More Neutron resources of deleted Networks are waiting to be collected than --max-orphans-per-list (%d) allows per list; the rest wait for the next list", c.opts.MaxOrphansPerList)
		}
		return c.holdBack(ctx, owned, heldCap)
	}
	if err := c.deleteOwned(ctx, owned.Owner, owned); err != nil {
		return err
	}
	c.orphans.Forget(uid)
	metrics.OrphansCollected.WithLabelValues("network").Add(float64(len(owned.Networks)))
	metrics.OrphansCollected.WithLabelValues("subnet").Add(float64(len(owned.Subnets)))
	logger.Info("Deleted orphaned Neutron resources", "networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return nil
}

// Why an orphan was not collected: the values of the "reason" label of
// orphans_held_back_total.
const (
	heldDisabled       = "disabled"
	heldNotThisCluster = "not-this-cluster"
	heldOwnerAlive     = "owner-alive"
	heldCap            = "cap"
)

// holdBack counts an orphan that stays, and says why in the log.
func (c *Controller) holdBack(ctx context.Context, owned neutron.Owned, reason string) error {
	metrics.OrphansHeldBack.WithLabelValues(reason).Inc()
	klog.FromContext(ctx).V(2).Info("Not collecting Neutron resources of a Network that is not in the cache",
		"owner", owned.Owner.Key(), "ownerUID", owned.Owner.UID, "reason", reason,
		"networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return nil
}

// ownerAlive asks the API server itself, not the cache, whether a Network
// of owner's UID exists: by name when the resource's name holds it whole,
// else among its namespace's Networks.
func (c *Controller) ownerAlive(ctx context.Context, owner neutron.Owner) (bool, error) {
	opts := metav1.ListOptions{}
	if !owner.Truncated() {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", owner.Name).String()
	}
	list, err := c.networkclientset.SamplecrdV1().Networks(owner.Namespace).List(ctx, opts)
	if err != nil {
		return false, fmt.Errorf("confirming with the API server that Network %s is gone: %w", owner.Key(), err)
	}
	return slices.ContainsFunc(list.Items, func(n samplecrdv1.Network) bool { return n.UID == owner.UID }), nil
}

// namespaceRef is the object a Warning about a namespace's orphans is
// recorded on: `kubectl describe namespace` shows it.
func namespaceRef(namespace string) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: namespace}
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
		invalid  *desired.InvalidSpecError
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
		cond = notReady(samplecrdv1.ReasonInvalidSpec, invalid.Message)
		result = fmt.Errorf("%w: %w", errSpecMustChange, syncErr)
	case errors.Is(syncErr, errAdoptionRecordPending):
		// The cache catches up in moments: retried with backoff.
		cond = notReady(samplecrdv1.ReasonProvisioning, "Adopting Neutron network "+network.Spec.Adopt.NetworkID+": "+syncErr.Error())
		result = syncErr
	case neutron.IsAuthError(syncErr):
		// Lasts until the credentials are fixed, which the Neutron
		// session notices by itself; backoff keeps the retries cheap.
		cond = notReady(samplecrdv1.ReasonAuthenticationFailed, syncErr.Error())
		result = syncErr
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
	if err := c.reportCondition(ctx, network, cond.Reason, cond, obs); err != nil {
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
