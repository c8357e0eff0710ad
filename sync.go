package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
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
	eventOrphanDeleted  = "OrphanDeleted"
	eventDeletionFailed = "DeletionFailed"
)

// syncHandler makes Neutron equal to the Network named by objRef and
// records the outcome in the Network's status. It is level-triggered: it
// does not know which event queued the key, and it does not need to.
func (c *Controller) syncHandler(ctx context.Context, objRef cache.ObjectName) error {
	logger := klog.FromContext(ctx)

	network, err := c.networksLister.Networks(objRef.Namespace).Get(objRef.Name)
	if apierrors.IsNotFound(err) {
		// The Network is gone. Whatever Neutron still holds under its name
		// is an orphan: its finalizer was removed by hand, or a controller
		// crashed between creating in Neutron and seeing the delete.
		return c.deleteOrphans(ctx, objRef.String())
	}
	if err != nil {
		return fmt.Errorf("reading Network %s from the cache: %w", objRef, err)
	}

	if network.DeletionTimestamp != nil {
		return c.finalize(ctx, network)
	}
	if !c.neutron.Synced() {
		if err := c.updateStatus(ctx, network, notReady(samplecrdv1.ReasonNeutronUnavailable,
			"Neutron has not been listed yet: "+lastRefreshError(c.neutron)), "", ""); err != nil {
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
		logger.V(2).Info("Added finalizer")
	}

	networkID, subnetID, err := c.ensureNeutron(ctx, network)
	if err != nil {
		return c.reportFailure(ctx, network, err, networkID, subnetID)
	}
	return c.updateStatus(ctx, network, ready(), networkID, subnetID)
}

// ensureNeutron creates, repairs or leaves alone the Neutron network and
// subnet of network, comparing against the inventory. It returns their IDs
// (those known so far when it fails).
func (c *Controller) ensureNeutron(ctx context.Context, network *samplecrdv1.Network) (networkID, subnetID string, err error) {
	logger := klog.FromContext(ctx)
	owner := neutron.Owner{Namespace: network.Namespace, Name: network.Name, UID: network.UID}
	nets, subs := c.neutron.Lookup(owner.Key())

	// Resources under this name but of another UID belong to an earlier
	// Network of the same name; ours are adopted, whatever wrote them.
	var mine []neutron.Network
	for _, n := range nets {
		if n.Owner.UID == network.UID {
			mine = append(mine, n)
			continue
		}
		if err := c.deleteNetworkAndSubnets(ctx, n, subs); err != nil {
			return "", "", err
		}
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventOrphanDeleted,
			"Deleted Neutron network %s left by an earlier Network of this name (uid %s)", n.ID, n.Owner.UID)
	}

	var net neutron.Network
	createdNetwork := false
	if len(mine) == 0 {
		// Not in the inventory. Either there is none, or a crash between
		// a create and its tagging left one untagged: look it up by name
		// before creating, so a crash never makes a duplicate.
		found, err := c.neutron.FindNetworks(ctx, owner)
		if err != nil {
			return "", "", err
		}
		if len(found) > 0 {
			if net, err = c.neutron.AdoptNetwork(ctx, found[0], owner); err != nil {
				return "", "", err
			}
			logger.Info("Adopted untagged Neutron network", "networkID", net.ID)
			mine = found
		} else {
			if net, err = c.neutron.CreateNetwork(ctx, owner); err != nil {
				return "", "", err
			}
			createdNetwork = true
			logger.Info("Created Neutron network", "networkID", net.ID)
		}
	} else {
		// One network per Network. Should there be more (nothing we know
		// of makes them), keep the one the status names, else the first.
		net = mine[0]
		for _, n := range mine {
			if n.ID == network.Status.NetworkID {
				net = n
			}
		}
	}
	// Untagged networks of this UID other than the chosen one are
	// duplicates: a create that Neutron finished after the controller that
	// sent it had died, and after its successor had made another.
	for _, n := range c.neutron.UntaggedOf(network.UID) {
		c.neutron.ForgetUntagged(network.UID, n.ID)
		if n.ID == net.ID || slices.ContainsFunc(mine, func(m neutron.Network) bool { return m.ID == n.ID }) {
			continue
		}
		if err := c.neutron.DeleteNetwork(ctx, n); err != nil {
			return net.ID, "", err
		}
		c.recorder.Eventf(network, corev1.EventTypeWarning, eventDriftRepaired, "Deleted duplicate untagged Neutron network %s", n.ID)
	}
	for _, n := range mine {
		if n.ID != net.ID {
			if err := c.deleteNetworkAndSubnets(ctx, n, subs); err != nil {
				return net.ID, "", err
			}
			c.recorder.Eventf(network, corev1.EventTypeWarning, eventDriftRepaired, "Deleted duplicate Neutron network %s", n.ID)
		}
	}

	want, err := netip.ParsePrefix(network.Spec.CIDR)
	if err != nil {
		// The CRD's validation makes this unreachable through the API.
		return net.ID, "", fmt.Errorf("spec.cidr %q: %w", network.Spec.CIDR, err)
	}
	matches := func(s neutron.Subnet) bool {
		got, err := netip.ParsePrefix(s.CIDR)
		return err == nil && got == want.Masked()
	}
	var onNet []neutron.Subnet
	for _, s := range subs {
		if s.NetworkID == net.ID {
			onNet = append(onNet, s)
		}
	}
	if !createdNetwork && !slices.ContainsFunc(onNet, matches) {
		// As with networks: an untagged subnet may exist. Ask Neutron.
		if onNet, err = c.neutron.SubnetsOf(ctx, net.ID); err != nil {
			return net.ID, "", err
		}
	}
	var subnet *neutron.Subnet
	for i, s := range onNet {
		if matches(s) && subnet == nil {
			subnet = &onNet[i]
			continue
		}
		// cidr is immutable in the API, so a subnet of another range was
		// changed behind our back (or is a leftover): report and repair.
		if err := c.neutron.DeleteSubnet(ctx, s); err != nil {
			return net.ID, "", err
		}
		c.recorder.Eventf(network, corev1.EventTypeWarning, eventDriftRepaired,
			"Neutron subnet %s had cidr %s instead of %s; deleted it", s.ID, s.CIDR, network.Spec.CIDR)
	}
	if subnet != nil && subnet.Owner.UID != network.UID {
		adopted, err := c.neutron.AdoptSubnet(ctx, *subnet, owner)
		if err != nil {
			return net.ID, "", err
		}
		logger.Info("Adopted untagged Neutron subnet", "subnetID", adopted.ID)
		subnet = &adopted
	}

	if subnet == nil {
		s, err := c.neutron.CreateSubnet(ctx, owner, net.ID, network.Spec.CIDR, network.Spec.Gateway)
		var rejected *neutron.RejectedError
		if errors.As(err, &rejected) && rejected.Overlap() {
			// On a network of our own, only a subnet of our own can
			// overlap: one whose create request Neutron finished after the
			// controller that sent it had died. Adopt it.
			if adopted, adoptErr := c.adoptSubnet(ctx, owner, net.ID, matches); adoptErr != nil || adopted != nil {
				if adoptErr != nil {
					return net.ID, "", adoptErr
				}
				return net.ID, adopted.ID, nil
			}
		}
		if err != nil {
			return net.ID, "", err
		}
		logger.Info("Created Neutron subnet", "subnetID", s.ID, "cidr", s.CIDR, "gateway", s.GatewayIP)
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventCreated,
			"Created Neutron network %s with subnet %s (%s, gateway %s)", net.ID, s.ID, s.CIDR, s.GatewayIP)
		return net.ID, s.ID, nil
	}
	if !sameIP(subnet.GatewayIP, network.Spec.Gateway) {
		old := subnet.GatewayIP
		s, err := c.neutron.UpdateSubnetGateway(ctx, *subnet, network.Spec.Gateway)
		if err != nil {
			return net.ID, subnet.ID, err
		}
		logger.Info("Updated Neutron subnet gateway", "subnetID", s.ID, "from", old, "to", s.GatewayIP)
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventUpdated, "Moved the gateway of Neutron subnet %s from %s to %s", s.ID, old, s.GatewayIP)
	}
	return net.ID, subnet.ID, nil
}

// adoptSubnet tags and returns the subnet of networkID that matches, or nil
// when there is none.
func (c *Controller) adoptSubnet(ctx context.Context, owner neutron.Owner, networkID string, matches func(neutron.Subnet) bool) (*neutron.Subnet, error) {
	subs, err := c.neutron.SubnetsOf(ctx, networkID)
	if err != nil {
		return nil, err
	}
	for _, s := range subs {
		if matches(s) {
			adopted, err := c.neutron.AdoptSubnet(ctx, s, owner)
			if err != nil {
				return nil, err
			}
			klog.FromContext(ctx).Info("Adopted Neutron subnet found on an overlap refusal", "subnetID", adopted.ID)
			return &adopted, nil
		}
	}
	return nil, nil
}

// finalize deletes network's Neutron resources and then releases its
// finalizer. Neutron must confirm first; 404 counts as confirmed.
func (c *Controller) finalize(ctx context.Context, network *samplecrdv1.Network) error {
	if !hasFinalizer(network) {
		return nil
	}
	if !c.neutron.Synced() {
		return neutron.ErrNotSynced
	}
	owner := neutron.Owner{Namespace: network.Namespace, Name: network.Name, UID: network.UID}
	nets, subs := c.neutron.Lookup(owner.Key())
	if !slices.ContainsFunc(nets, func(n neutron.Network) bool { return n.Owner.UID == network.UID }) {
		// A crash between create and tag leaves a network the inventory
		// cannot see; it must not outlive its Network.
		found, err := c.neutron.FindNetworks(ctx, owner)
		if err != nil {
			return err
		}
		nets = append(nets, found...)
	}
	if err := c.deleteAll(ctx, nets, subs); err != nil {
		c.recorder.Eventf(network, corev1.EventTypeWarning, eventDeletionFailed, "Deleting Neutron resources: %v", err)
		if statusErr := c.updateStatus(ctx, network, notReady(samplecrdv1.ReasonDeleting,
			"Waiting for Neutron to delete the network: "+err.Error()), network.Status.NetworkID, network.Status.SubnetID); statusErr != nil {
			return errors.Join(err, statusErr)
		}
		return err
	}
	for _, n := range nets {
		c.recorder.Eventf(network, corev1.EventTypeNormal, eventDeleted, "Deleted Neutron network %s", n.ID)
	}
	klog.FromContext(ctx).Info("Deleted Neutron resources; releasing the finalizer", "networks", len(nets), "subnets", len(subs))
	return c.setFinalizer(ctx, network, false)
}

// deleteOrphans deletes what Neutron holds under key, whose Network no
// longer exists.
func (c *Controller) deleteOrphans(ctx context.Context, key string) error {
	if !c.neutron.Synced() {
		return nil // the first refresh queues every orphan
	}
	nets, subs := c.neutron.Lookup(key)
	if len(nets) == 0 && len(subs) == 0 {
		return nil
	}
	if err := c.deleteAll(ctx, nets, subs); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Deleted orphaned Neutron resources", "networks", len(nets), "subnets", len(subs))
	return nil
}

// deleteAll deletes subnets before networks: Neutron refuses to delete a
// network whose subnets still have ports.
func (c *Controller) deleteAll(ctx context.Context, nets []neutron.Network, subs []neutron.Subnet) error {
	for _, s := range subs {
		if err := c.neutron.DeleteSubnet(ctx, s); err != nil {
			return err
		}
	}
	for _, n := range nets {
		if err := c.neutron.DeleteNetwork(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) deleteNetworkAndSubnets(ctx context.Context, n neutron.Network, subs []neutron.Subnet) error {
	var onNet []neutron.Subnet
	for _, s := range subs {
		if s.NetworkID == n.ID {
			onNet = append(onNet, s)
		}
	}
	return c.deleteAll(ctx, []neutron.Network{n}, onNet)
}

// reportFailure turns a failed sync into the Ready condition and a Warning
// Event, and decides how the key is retried: Neutron's refusals after a
// fixed, long delay (retrying them unchanged is pointless), everything else
// with backoff.
func (c *Controller) reportFailure(ctx context.Context, network *samplecrdv1.Network, syncErr error, networkID, subnetID string) error {
	var (
		rejected *neutron.RejectedError
		cond     metav1.Condition
		result   error
	)
	if errors.As(syncErr, &rejected) {
		reason := samplecrdv1.ReasonNeutronRejected
		if rejected.Overlap() {
			reason = samplecrdv1.ReasonCIDRConflict
		}
		cond = notReady(reason, "Neutron refused: "+rejected.Message)
		result = retryAfterError{err: syncErr, after: rejectedRetryInterval}
	} else {
		cond = notReady(samplecrdv1.ReasonNeutronUnavailable, syncErr.Error())
		result = syncErr
	}
	c.recorder.Event(network, corev1.EventTypeWarning, cond.Reason, cond.Message)
	if err := c.updateStatus(ctx, network, cond, networkID, subnetID); err != nil {
		return errors.Join(syncErr, err)
	}
	return result
}

func hasFinalizer(network *samplecrdv1.Network) bool {
	return slices.Contains(network.Finalizers, samplecrdv1.NetworkFinalizer)
}

// sameIP compares two addresses as addresses, not as text: Neutron answers
// in canonical form whatever form the user wrote.
func sameIP(a, b string) bool {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return x == y
}

func lastRefreshError(inv *neutron.Inventory) string {
	if _, err := inv.LastRefresh(); err != nil {
		return err.Error()
	}
	return "the first list is still running"
}
