package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

func ready() metav1.Condition {
	return metav1.Condition{
		Type:    samplecrdv1.ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  samplecrdv1.ReasonProvisioned,
		Message: "The Neutron network and subnet match the spec",
	}
}

func notReady(reason, message string) metav1.Condition {
	return metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: boundMessage(message)}
}

// maxMessageLength bounds every condition and Event message the controller
// writes (docs/conditions.md). Neutron's answers, a list of ports, an error
// with a response body: none of it may grow a status past what the API
// server accepts, or an Event past what a person reads.
const maxMessageLength = 1024

// boundMessage cuts msg to maxMessageLength, saying how much was left out.
func boundMessage(msg string) string {
	if len(msg) <= maxMessageLength {
		return msg
	}
	// The note takes at most 40 bytes; the cut backs off to a rune start.
	cut := maxMessageLength - 40
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… and %d more characters", msg[:cut], len(msg)-cut)
}

// boundList joins at most maxListed items, then says how many more there
// are.
func boundList(items []string) string {
	const maxListed = 10
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxListed], ", "), len(items)-maxListed)
}

// observed is what Neutron holds for a Network, as its status reports it.
type observed struct {
	networkID, subnetID string
	cidr, gateway       string
	pools               []samplecrdv1.AllocationPool
	mtu                 int32
	neutronStatus       string
	// adopted is what spec.adopt's network and subnet were called before
	// they were marked; kept for as long as the Network lives.
	adopted *samplecrdv1.AdoptedResources
}

// observedOf is the status of a Network whose network and subnet are known.
func observedOf(net neutron.Network, subnet neutron.Subnet) observed {
	o := observed{networkID: net.ID, subnetID: subnet.ID, cidr: subnet.CIDR, gateway: subnet.GatewayIP,
		mtu: int32(net.MTU), neutronStatus: net.Status}
	for _, p := range subnet.AllocationPools {
		o.pools = append(o.pools, samplecrdv1.AllocationPool{Start: p.Start, End: p.End})
	}
	return o
}

// lastObserved is what status says now: kept by a sync that fails before
// it knows better, so that a failure does not blank the IDs.
func lastObserved(st samplecrdv1.NetworkStatus) observed {
	return observed{networkID: st.NetworkID, subnetID: st.SubnetID, cidr: st.CIDR, gateway: st.Gateway,
		pools: st.AllocationPools, mtu: st.MTU, neutronStatus: st.NeutronStatus, adopted: st.Adopted}
}

// keepAdopted carries the adoption record of st over to o.
func (o observed) keepAdopted(st samplecrdv1.NetworkStatus) observed {
	o.adopted = st.Adopted
	return o
}

func (o observed) equal(st samplecrdv1.NetworkStatus) bool {
	return o.networkID == st.NetworkID && o.subnetID == st.SubnetID && o.cidr == st.CIDR && o.gateway == st.Gateway &&
		slices.Equal(o.pools, st.AllocationPools) && o.mtu == st.MTU && o.neutronStatus == st.NeutronStatus &&
		equality.Semantic.DeepEqual(o.adopted, st.Adopted)
}

// apply sets o's non-empty fields on status.
func (o observed) apply(status *applyv1.NetworkStatusApplyConfiguration) {
	if o.networkID != "" {
		status.WithNetworkID(o.networkID)
	}
	if o.subnetID != "" {
		status.WithSubnetID(o.subnetID)
	}
	if o.cidr != "" {
		status.WithCIDR(o.cidr)
	}
	if o.gateway != "" {
		status.WithGateway(o.gateway)
	}
	for _, p := range o.pools {
		status.WithAllocationPools(applyv1.AllocationPool().WithStart(p.Start).WithEnd(p.End))
	}
	if o.mtu != 0 {
		status.WithMTU(o.mtu)
	}
	if o.neutronStatus != "" {
		status.WithNeutronStatus(o.neutronStatus)
	}
	if a := o.adopted; a != nil {
		status.WithAdopted(applyv1.AdoptedResources().
			WithNetworkID(a.NetworkID).WithNetworkName(a.NetworkName).WithNetworkDescription(a.NetworkDescription).
			WithSubnetID(a.SubnetID).WithSubnetName(a.SubnetName).WithSubnetDescription(a.SubnetDescription))
	}
}

// updateStatus records cond and what Neutron holds in network's status with
// server-side apply, as the field manager network-controller. It writes
// nothing when the status already says the same thing, which is what makes
// a resync of an in-sync cluster free for the API server.
//
// Server-side apply is what lets the controller and users write the same
// object without clobbering each other: the controller owns exactly the
// fields it applies (status.conditions[type=Ready], observedGeneration and
// the observed fields) and nothing else, and it needs no resourceVersion,
// so it never fails with a conflict against a concurrent spec change.
func (c *Controller) updateStatus(ctx context.Context, network *samplecrdv1.Network, cond metav1.Condition, obs observed) error {
	_, err := c.applyStatus(ctx, network, cond, obs)
	return err
}

// reportCondition is updateStatus for a Network that is not Ready: the
// Warning Event that says why goes out only when the condition changes, so
// a Network that stays stuck for the same reason says so once, not at every
// retry.
func (c *Controller) reportCondition(ctx context.Context, network *samplecrdv1.Network, eventReason string, cond metav1.Condition, obs observed) error {
	changed, err := c.applyStatus(ctx, network, cond, obs)
	if changed {
		c.recorder.Event(network, corev1.EventTypeWarning, eventReason, cond.Message)
	}
	return err
}

// applyStatus writes the status when it differs, and reports whether the
// Ready condition itself changed (status, reason or message).
func (c *Controller) applyStatus(ctx context.Context, network *samplecrdv1.Network, cond metav1.Condition, obs observed) (condChanged bool, _ error) {
	cond.ObservedGeneration = network.Generation
	// SetStatusCondition keeps lastTransitionTime unless the status flips.
	// It works on a copy: the lister's object belongs to the cache.
	conditions := network.Status.DeepCopy().Conditions
	old := meta.FindStatusCondition(conditions, cond.Type)
	condChanged = old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message
	changed := meta.SetStatusCondition(&conditions, cond)
	if !changed && network.Status.ObservedGeneration == network.Generation && obs.equal(network.Status) {
		return false, nil
	}
	applied := meta.FindStatusCondition(conditions, samplecrdv1.ConditionReady)

	status := applyv1.NetworkStatus().
		WithObservedGeneration(network.Generation).
		WithConditions(metav1ac.Condition().
			WithType(applied.Type).
			WithStatus(applied.Status).
			WithReason(applied.Reason).
			WithMessage(applied.Message).
			WithObservedGeneration(applied.ObservedGeneration).
			WithLastTransitionTime(applied.LastTransitionTime))
	obs.apply(status)
	ac := applyv1.Network(network.Name, network.Namespace).WithStatus(status)
	if _, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).ApplyStatus(ctx, ac,
		metav1.ApplyOptions{FieldManager: controllerAgentName, Force: true}); err != nil {
		return condChanged, fmt.Errorf("applying status: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Updated status", "ready", applied.Status, "reason", applied.Reason, "networkID", obs.networkID, "subnetID", obs.subnetID)
	return condChanged, nil
}

// finalizerFieldManager owns the finalizer. It is not the status's manager:
// the API server keeps a manager's fields of the main resource and of the
// status subresource apart, but not every implementation does (client-go's
// fake tracker does not), and with one name an apply of the status would
// then withdraw the finalizer.
const finalizerFieldManager = controllerAgentName + "-finalizer"

// setFinalizer adds (present) or removes the controller's finalizer with
// server-side apply: metadata.finalizers is a set, so the controller's
// apply adds or withdraws its own entry and leaves everyone else's alone.
func (c *Controller) setFinalizer(ctx context.Context, network *samplecrdv1.Network, present bool) error {
	ac := applyv1.Network(network.Name, network.Namespace)
	if present {
		ac.WithFinalizers(samplecrdv1.NetworkFinalizer)
	}
	if _, err := c.networkclientset.SamplecrdV1().Networks(network.Namespace).Apply(ctx, ac,
		metav1.ApplyOptions{FieldManager: finalizerFieldManager, Force: true}); err != nil {
		verb := "adding"
		if !present {
			verb = "removing"
		}
		return fmt.Errorf("%s the finalizer: %w", verb, err)
	}
	return nil
}
