package reconcile

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/inventory"
	"github.com/samplecrd/network-controller/pkg/metrics"
	"github.com/samplecrd/network-controller/pkg/neutron"
)

// SightOrphans takes the UIDs that a list of Neutron, begun at started,
// found without a Network in the informer's cache, and returns those to
// queue for collection: the ones in the controller's scope. It starts the
// list's budget, and asks for a second list a grace period later when a
// UID is new.
func (r *Reconciler) SightOrphans(started time.Time, missing []types.UID) []types.UID {
	orphaned := slices.DeleteFunc(slices.Clone(missing), func(uid types.UID) bool { return !r.manages(r.inv.Get(uid).Owner) })
	if len(r.orphans.NewList(started, orphaned)) > 0 {
		r.inv.RequestRefresh(r.opts.OrphanGracePeriod)
	}
	return orphaned
}

// CollectOrphans deletes what Neutron holds under our mark for uid, once
// sure that no Network of that UID exists: its finalizer was removed by
// hand, or a create completed in Neutron after its Network was deleted.
// cached says whether the informer's cache holds a Network of uid.
//
// Sure means (see pkg/orphans): collection is on; the resources' names
// record this very cluster; two lists of Neutron a grace period apart found
// them orphaned; a live read of the API server, not the cache, finds no
// Network of that UID; and the list's budget of deletions is not spent.
// What fails a test is held back, counted, and looked at again at the next
// list.
func (r *Reconciler) CollectOrphans(ctx context.Context, uid types.UID, cached bool) Outcome {
	if cached {
		r.orphans.Forget(uid)
		return Outcome{}
	}
	owned := r.inv.Get(uid)
	if owned.Empty() || !r.manages(owned.Owner) {
		r.orphans.Forget(uid)
		return Outcome{}
	}
	switch {
	case !r.opts.CollectOrphans:
		return r.holdBack(ctx, owned, metrics.HeldDisabled)
	case !r.mark.Collectable(owned.Owner):
		return r.holdBack(ctx, owned, metrics.HeldNotThisCluster)
	case !r.orphans.Due(uid):
		if !r.orphans.Sighted(uid) {
			// Queued by a delete event, before any list saw it orphaned:
			// one list now makes the first sighting, and that list asks
			// for the second, a grace period later.
			r.inv.RequestRefresh(0)
		}
		return Outcome{}
	}
	alive, err := r.ownerAlive(ctx, owned.Owner)
	if err != nil {
		return Outcome{Requeue: AddRateLimited, Err: err}
	}
	if alive {
		return r.holdBack(ctx, owned, metrics.HeldOwnerAlive)
	}
	if ok, first := r.orphans.Take(); !ok {
		out := r.holdBack(ctx, owned, metrics.HeldCap)
		if first {
			out.Events = []Event{{Type: corev1.EventTypeWarning, Reason: eventOrphanCollectionCapped, Regarding: namespaceRef(owned.Owner.Namespace),
				Message: fmt.Sprintf("More Neutron resources of deleted Networks are waiting to be collected than --max-orphans-per-list (%d) allows per list; the rest wait for the next list", r.opts.MaxOrphansPerList)}}
		}
		return out
	}
	if err := r.deleteOwned(ctx, owned); err != nil {
		return Outcome{Requeue: AddRateLimited, Err: err}
	}
	r.orphans.Forget(uid)
	metrics.OrphansCollected.WithLabelValues("network").Add(float64(len(owned.Networks)))
	metrics.OrphansCollected.WithLabelValues("subnet").Add(float64(len(owned.Subnets)))
	metrics.OrphansCollected.WithLabelValues("router").Add(float64(len(owned.Routers)))
	klog.FromContext(ctx).Info("Deleted orphaned Neutron resources", "owner", owned.Owner.Key(), "ownerUID", uid,
		"networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return Outcome{}
}

// holdBack counts an orphan that stays, and says why in the log.
func (r *Reconciler) holdBack(ctx context.Context, owned inventory.Owned, reason string) Outcome {
	metrics.OrphansHeldBack.WithLabelValues(reason).Inc()
	klog.FromContext(ctx).V(2).Info("Not collecting Neutron resources of a Network that is not in the cache",
		"owner", owned.Owner.Key(), "ownerUID", owned.Owner.UID, "reason", reason,
		"networks", len(owned.Networks), "subnets", len(owned.Subnets))
	return Outcome{}
}

// ownerAlive asks the API server itself, not the cache, whether a Network
// of owner's UID exists: by name when the resource's name holds it whole,
// else among its namespace's Networks.
func (r *Reconciler) ownerAlive(ctx context.Context, owner neutron.Owner) (bool, error) {
	opts := metav1.ListOptions{}
	if !owner.Truncated() {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", owner.Name).String()
	}
	list, err := r.networks.SamplecrdV1().Networks(owner.Namespace).List(ctx, opts)
	if err != nil {
		return false, fmt.Errorf("confirming with the API server that Network %s is gone: %w", owner.Key(), err)
	}
	return slices.ContainsFunc(list.Items, func(n samplecrdv1.Network) bool { return n.UID == owner.UID }), nil
}
