package collector

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// eventOrphanCollectionCapped is the reason of the Warning, recorded on a
// namespace, that the per-list cap held orphans back.
const eventOrphanCollectionCapped = "OrphanCollectionCapped"

// Collect deletes what Neutron holds under our mark for uid, once
// sure that no Network of that UID exists: its finalizer was removed by
// hand, or a create completed in Neutron after its Network was deleted.
// cached says whether the informer's cache holds a Network of uid.
//
// Sure means (see the package doc): collection is on; the resources' names
// record this very cluster; two lists of Neutron a grace period apart found
// them orphaned; a live read of the API server, not the cache, finds no
// Network of that UID; and the list's budget of deletions is not spent.
// What fails a test is held back, counted, and looked at again at the next
// list.
func (o *Orphans) Collect(ctx context.Context, uid types.UID, cached bool) reconcile.Outcome {
	if cached {
		o.tracker.Forget(uid)
		return reconcile.Outcome{}
	}
	owned := o.inv.Get(uid)
	if owned.Empty() || !o.manages(owned.Owner) {
		o.tracker.Forget(uid)
		return reconcile.Outcome{}
	}
	switch {
	case !o.cfg.Enabled:
		return o.holdBack(ctx, owned, metrics.HeldDisabled)
	case !o.cfg.Mark.Collectable(owned.Owner):
		return o.holdBack(ctx, owned, metrics.HeldNotThisCluster)
	case !o.tracker.Due(uid):
		if !o.tracker.Sighted(uid) {
			// Queued by a delete event, before any list saw it orphaned:
			// one list now makes the first sighting, and that list asks
			// for the second, a grace period later.
			o.inv.RequestRefresh(0)
		}
		return reconcile.Outcome{}
	}
	alive, err := o.ownerAlive(ctx, owned.Owner)
	if err != nil {
		return reconcile.Outcome{Requeue: reconcile.AddRateLimited, Err: err}
	}
	if alive {
		return o.holdBack(ctx, owned, metrics.HeldOwnerAlive)
	}
	if ok, first := o.tracker.Take(); !ok {
		out := o.holdBack(ctx, owned, metrics.HeldCap)
		if first {
			out.Events = []reconcile.Event{{Type: corev1.EventTypeWarning, Reason: eventOrphanCollectionCapped, Regarding: namespaceRef(owned.Owner.Namespace),
				Message: fmt.Sprintf("More Neutron resources of deleted Networks are waiting to be collected than --max-orphans-per-list (%d) allows per list; the rest wait for the next list", o.cfg.MaxPerList)}}
		}
		return out
	}
	if err := reconcile.DeleteOwned(ctx, o.inv, owned, nil); err != nil {
		if inventory.NotOnlyOurs(err) {
			// Refused before anything was sent, until someone else
			// removes a subnet, or a list drops what is no longer
			// marked: the deletion goes back to the list's budget, and
			// the next list sights the orphan again.
			o.tracker.GiveBack()
			return o.holdBack(ctx, owned, metrics.HeldNotOnlyOurs)
		}
		return reconcile.Outcome{Requeue: reconcile.AddRateLimited, Err: err}
	}
	o.tracker.Forget(uid)
	metrics.OrphansCollected.WithLabelValues("network").Add(float64(len(owned.Networks)))
	metrics.OrphansCollected.WithLabelValues("subnet").Add(float64(len(owned.Subnets)))
	metrics.OrphansCollected.WithLabelValues("router").Add(float64(len(owned.Routers)))
	klog.FromContext(ctx).Info("Deleted orphaned Neutron resources", "owner", owned.Owner.Key(), "ownerUID", uid,
		"networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return reconcile.Outcome{}
}

// holdBack counts an orphan that stays, and says why in the log.
func (o *Orphans) holdBack(ctx context.Context, owned inventory.Owned, reason string) reconcile.Outcome {
	metrics.OrphansHeldBack.WithLabelValues(reason).Inc()
	klog.FromContext(ctx).V(2).Info("Not collecting Neutron resources of a Network that is not in the cache",
		"owner", owned.Owner.Key(), "ownerUID", owned.Owner.UID, "reason", reason,
		"networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return reconcile.Outcome{}
}

// ownerAlive asks the API server itself, not the cache, whether a Network
// of owner's UID exists: by name when the resource's name holds it whole,
// else among its namespace's Networks.
func (o *Orphans) ownerAlive(ctx context.Context, owner neutron.Owner) (bool, error) {
	opts := metav1.ListOptions{}
	if !owner.Truncated() {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", owner.Name).String()
	}
	list, err := o.cfg.Networks.SamplecrdV2().Networks(owner.Namespace).List(ctx, opts)
	if err != nil {
		return false, fmt.Errorf("confirming with the API server that Network %s is gone: %w", owner.Key(), err)
	}
	return slices.ContainsFunc(list.Items, func(n samplecrdv2.Network) bool { return n.UID == owner.UID }), nil
}

// namespaceRef is the object a Warning about a namespace's orphans is
// recorded on: `kubectl describe namespace` shows it.
func namespaceRef(namespace string) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: namespace}
}
