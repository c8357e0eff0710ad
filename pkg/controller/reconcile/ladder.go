package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Preflight refuses what cannot be reconciled now, before the controller
// puts its finalizer on: a spec Neutron would refuse that CEL cannot see
// (found before anything is asked of Neutron), and any Network before the
// first list of Neutron, when nothing is known of what Neutron holds. ok
// is true when Reconcile may go on.
func (r *Reconciler) Preflight(network *samplecrdv2.Network) (_ Outcome, ok bool) {
	// Preflight asks Neutron nothing: no request to name.
	p := r.newPass(context.Background(), network)
	// A range from a pool is known only once allocated: its subnet is
	// spelled out in Reconcile, and the API refuses what would need it
	// earlier.
	if _, err := p.wants(); err != nil {
		return r.knowingQuota(network, p.failed(phaseSyncing, err, LastObserved(network.Status))), false
	}
	if h := r.inv.Health(); !h.Synced {
		return p.waitForInventory(h), false
	}
	return Outcome{}, true
}

// waitForInventory answers for a Network synced before the first
// successful list of Neutron. A Network Ready for its generation stays so:
// nothing says it is not, and a restart or a new leader during an outage
// must not flip every Network (N status writes) only to flip them back.
// Nor does one whose project's first list is still under way (a
// namespace's credentials, just read): that list queues it again when it
// is done, and a failed one is a reason to say. Any other says why it
// waits, once, so that none is left without a reason.
func (p *pass) waitForInventory(h inventory.Health) Outcome {
	if isReady(p.network) {
		// The error says why, for the log (and a plan), not the status.
		return Outcome{Observed: LastObserved(p.network.Status), Requeue: AddRateLimited, Err: printableErr(errors.Join(inventory.ErrNotSynced, h.ListErr))}
	}
	if h.ListErr == nil {
		// Waiting for the project's first list, which queues the
		// Network again: no failure.
		return Outcome{Observed: LastObserved(p.network.Status), Requeue: AddRateLimited}
	}
	return p.failed(phaseWaiting, h.ListErr, LastObserved(p.network.Status))
}

// isReady reports whether network is Ready for its current generation.
func isReady(network *samplecrdv2.Network) bool {
	cond := meta.FindStatusCondition(network.Status.Conditions, samplecrdv1.ConditionReady)
	return cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == network.Generation
}

// Reconcile makes Neutron match network, whose finalizer is on and whose
// Preflight passed: the network, then its subnet, then what may change in
// place (the subnet's options, the network's MTU), then the router
// interface. Each step reads the
// inventory, and writes to Neutron only when what is there differs from
// the spec.
func (r *Reconciler) Reconcile(ctx context.Context, network *samplecrdv2.Network) Outcome {
	p := r.newPass(ctx, network)
	obs, err := p.ladder(ctx)
	// What status records of the place and of an adoption stays, whatever
	// the pass found: the place never changes, and the adoption's record
	// is the only copy of the names to give back. Only what the API server
	// has stored is reported (a record it refused is not).
	obs.Adopted = p.recorded.Adopted
	obs.Place = p.recorded.Place
	obs.Router = p.router
	if err != nil {
		return r.knowingQuota(network, p.failed(phaseSyncing, err, obs))
	}
	cond := ready()
	return r.knowingQuota(network, Outcome{Condition: &cond, Observed: obs, Events: p.events})
}

// The ladder of reconcile, in the manner of ORC's: each step finds its
// resource by the ID in status, then in the inventory, then (for a network
// named by spec.adopt) by adopting it, and creates it only when none has
// it. Everything a step touches is in the inventory, so it carries this
// cluster's mark and the Network's UID: nothing else is ever changed or
// deleted.

// ladder climbs the steps, and returns what Neutron holds, as far as it
// knows, even when a step fails.
func (p *pass) ladder(ctx context.Context) (Observed, error) {
	obs := LastObserved(p.network.Status)
	// The spec in Neutron's terms, one entry per subnet; a range from a
	// pool is spelled out once the pool has allocated it. Preflight
	// checked it.
	wants, err := p.wants()
	if err != nil {
		return obs, err
	}
	if err := p.recordPlace(ctx); err != nil {
		return obs, err
	}
	// From here every request must go to the place status records: the
	// client that sends it says, at that moment, that it does.
	ctx = neutron.InPlace(ctx, p.recorded.Place)
	net, netCreated, err := p.ensureNetwork(ctx, wants)
	if err != nil {
		return obs, err
	}
	obs.NetworkID = net.ID
	subnets, subnetCreated, blocked, err := p.ensureSubnets(ctx, wants, net)
	p.recordCreated(net, netCreated, subnets, subnetCreated)
	if err != nil {
		return obs, err
	}
	// Observed.Subnets, status.subnets, speaks of every subnet.
	obs = p.observed(net, subnets)
	if wants, err = spelledOut(wants, subnets); err != nil {
		return obs, err
	}
	plan, err := p.detachUnwanted(ctx, net, subnets)
	if err != nil {
		return obs, err
	}
	for i := range wants {
		if subnets[i], err = p.ensureSubnetOptions(ctx, wants[i].Subnet, subnets[i]); err != nil {
			return obs, err
		}
	}
	obs = p.observed(net, subnets)
	if net, err = p.ensureMTU(ctx, net); err != nil {
		return obs, err
	}
	obs = p.observed(net, subnets)
	err = p.attachWanted(ctx, plan, subnets)
	obs = p.observed(net, subnets)
	if err != nil {
		return obs, err
	}
	// A removal that ports block is said once everything else is done.
	return obs, blocked
}

// samePlace refuses to go on when the credentials reach another place
// (Keystone, region, interface or project) than the one status records: a
// clouds.yaml (the controller's, or a namespace's Secret) changed to
// another project's or region's. The inventory, listed there, holds
// nothing of the Network, so a sync would make a second network there, or
// a delete find nothing to delete (another region's Neutron answers 404),
// and the first network would be left behind for good. So it refuses too
// while the inventory was last listed elsewhere, though the credentials
// are right again. A network cannot move; whoever changed the credentials
// puts the old ones back. It is asked only where the pass found no network
// of the Network's, before it adopts or makes one or confirms a delete
// (whether status names a network or not: a create's answer may have been
// lost): an in-sync Network pays nothing for it, and stays Ready through
// an outage that keeps the place from being known. Every other write is the
// inventory's door's to refuse (its own samePlace).
func (p *pass) samePlace(ctx context.Context) error {
	recorded := recordedPlace(p.network.Status)
	if recorded.IsZero() {
		return nil
	}
	now, err := p.inv.Place(ctx)
	if err != nil {
		return err
	}
	if err := neutron.CheckPlace(recorded, now); err != nil {
		return err
	}
	// The credentials are the right ones again, but what the pass found
	// missing was looked for in the last list, which may be of the other
	// place (credentials swapped there and back): only a list of this
	// one says the network is gone.
	return p.inv.ListedIn(now)
}

// recordPlace stores, in a Network's status that records no place, the
// place its credentials reach, before anything is made or adopted (or,
// for a Network made before places were recorded, before anything more is
// done), once neutron.CheckPlace agrees with what status says and the
// inventory has been listed in that place. The pass
// goes on only once the API server has it, so a network can never be made
// in a place status does not name, even if its subnet is refused or the
// process dies right after the create; every later pass checks the
// credentials against it (samePlace, and the inventory's own check). A
// noauth Neutron, whose client has no place, records nothing.
func (p *pass) recordPlace(ctx context.Context) error {
	if p.network.Status.Place != nil {
		return nil
	}
	now, err := p.inv.Place(ctx)
	if err != nil || now.IsZero() {
		return err
	}
	if err := neutron.CheckPlace(recordedPlace(p.network.Status), now); err != nil {
		return err
	}
	// Only a place the inventory was listed in: every request of the pass
	// goes through its door, which requires that place. Credentials that
	// reach another for a moment (a clouds.yaml swapped and put back)
	// would otherwise be recorded for good, and the Network, with nothing
	// anywhere, would wait for them for ever. ListedIn asks for a list.
	if err := p.inv.ListedIn(now); err != nil {
		return err
	}
	return p.writeRecord(ctx, "the place, "+now.String()+",", Record{Place: now, Adopted: p.recorded.Adopted})
}

// ensureNetwork returns the Network's Neutron network, and whether it
// created it because there was none. Duplicates — a create that completed
// after its sender gave up, or died, while a retry made another — are
// deleted. One that holds a subnet not the Network's, or lost its mark,
// is left as it is, said in a Warning, and the pass goes on with the
// network it keeps: someone else's subnet must not hold up the Network's
// own repairs.
func (p *pass) ensureNetwork(ctx context.Context, wants []desired.Want) (_ neutron.Network, created bool, _ error) {
	keep, duplicates, found := chooseNetwork(p.inv.Get(p.owner.UID), p.network.Status.NetworkID)
	for _, d := range duplicates {
		err := p.inv.DeleteNetwork(ctx, p.owner, d.ID)
		if inventory.NotOnlyOurs(err) {
			p.eventf(corev1.EventTypeWarning, eventDuplicateLeft, "Left duplicate Neutron network %s: %v", d.ID, err)
			continue
		}
		if err != nil {
			return neutron.Network{}, false, err
		}
		metrics.DuplicatesDeleted.Inc()
		p.eventf(corev1.EventTypeWarning, eventDriftRepaired,
			"Deleted duplicate Neutron network %s (kept %s)", d.ID, keep.ID)
	}
	if found {
		return keep, false, nil
	}
	// Nothing found: before a network is adopted or made, the place the
	// credentials reach must be the one status records, whether or not a
	// network of it was ever known (a create's answer may have been lost).
	if err := p.samePlace(ctx); err != nil {
		return neutron.Network{}, false, err
	}
	if p.network.Spec.Adopt != nil {
		n, err := p.adoptNetwork(ctx, wants)
		return n, false, err
	}
	if p.network.Status.NetworkID != "" {
		p.eventf(corev1.EventTypeWarning, eventDriftRepaired,
			"Neutron network %s is gone; creating a new one", p.network.Status.NetworkID)
	}
	n, err := p.inv.CreateNetwork(ctx, p.owner, specMTU(p.network))
	if err != nil {
		return neutron.Network{}, false, err
	}
	klog.FromContext(ctx).Info("Created Neutron network", "networkID", n.ID)
	return n, true, nil
}

// recordCreated writes one Event that says what this sync created: the
// network and subnets of a new Network, or only those that a drift repair
// or a new spec.subnets entry had to make.
func (p *pass) recordCreated(net neutron.Network, netCreated bool, subnets []neutron.Subnet, created []bool) {
	var made []string
	for i, s := range subnets {
		if created[i] {
			made = append(made, fmt.Sprintf("%s (%s, gateway %s)", s.ID, s.CIDR, describeGateway(s.GatewayIP)))
		}
	}
	switch {
	case netCreated && len(made) == 1:
		p.eventf(corev1.EventTypeNormal, eventCreated, "Created Neutron network %s with subnet %s", net.ID, made[0])
	case netCreated && len(made) > 1:
		p.eventf(corev1.EventTypeNormal, eventCreated, "Created Neutron network %s with subnets %s", net.ID, strings.Join(made, ", "))
	case netCreated:
		p.eventf(corev1.EventTypeNormal, eventCreated, "Created Neutron network %s", net.ID)
	default:
		for _, m := range made {
			p.eventf(corev1.EventTypeNormal, eventCreated, "Created Neutron subnet %s on network %s", m, net.ID)
		}
	}
}

// ensureSubnetOptions makes the subnet's mutable options (gateway, DNS,
// routes, pools, DHCP) those of want, in one update request when any
// differs, and returns the subnet as Neutron then holds it.
func (p *pass) ensureSubnetOptions(ctx context.Context, want desired.Subnet, subnet neutron.Subnet) (neutron.Subnet, error) {
	u, changed := want.Update(subnet)
	if len(changed) == 0 {
		return subnet, nil
	}
	updated, err := p.inv.UpdateSubnet(ctx, p.owner, subnet.ID, u)
	if err != nil {
		return subnet, err
	}
	klog.FromContext(ctx).Info("Updated Neutron subnet", "subnetID", subnet.ID, "fields", changed)
	if u.Gateway != nil {
		p.eventf(corev1.EventTypeNormal, eventUpdated, "Updated Neutron subnet %s: %s (gateway %s to %s)",
			subnet.ID, joinFields(changed), describeGateway(subnet.GatewayIP), describeGateway(updated.GatewayIP))
	} else {
		p.eventf(corev1.EventTypeNormal, eventUpdated, "Updated Neutron subnet %s: %s", subnet.ID, joinFields(changed))
	}
	return updated, nil
}

// ensureMTU sets the network's MTU to spec.mtu when the spec has one and
// Neutron holds another. Without spec.mtu the MTU is Neutron's to choose.
func (p *pass) ensureMTU(ctx context.Context, net neutron.Network) (neutron.Network, error) {
	want := specMTU(p.network)
	if want == 0 || net.MTU == want {
		return net, nil
	}
	updated, err := p.inv.UpdateNetwork(ctx, p.owner, net.ID, neutron.NetworkUpdate{MTU: &want})
	if err != nil {
		return net, err
	}
	klog.FromContext(ctx).Info("Updated Neutron network MTU", "networkID", net.ID, "from", net.MTU, "to", updated.MTU)
	p.eventf(corev1.EventTypeNormal, eventUpdated, "Updated the MTU of Neutron network %s from %d to %d", net.ID, net.MTU, updated.MTU)
	return updated, nil
}

// describeGateway is a gateway for an Event: its address, or "none".
func describeGateway(gw string) string { return cmp.Or(gw, "none") }

// joinFields lists changed fields for an Event.
func joinFields(fields []string) string { return strings.Join(fields, ", ") }

// observed is observedOf net and subnets, with each subnet's router
// interface as the pass last made or found it, and its address counts as
// the inventory's latest list read them (never a request of the pass's
// own).
func (p *pass) observed(net neutron.Network, subnets []neutron.Subnet) Observed {
	o := observedOf(net, subnets...)
	if counts, ok := p.inv.IPs(p.owner.UID, net.ID); ok {
		o.withCounts(counts)
	}
	for i, s := range o.Subnets {
		if iface, ok := p.interfaces[s.ID]; ok {
			o.Subnets[i].RouterInterface = &iface
		}
	}
	return o
}
