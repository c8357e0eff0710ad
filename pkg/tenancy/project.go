package tenancy

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/inventory"
	"github.com/samplecrd/network-controller/pkg/reconcile"
)

// Project is what is kept for one OpenStack project: the inventory of what
// Neutron holds there (its informer, and the one door to it), and the
// reconciler that acts through it. The controller's own cloud is one; a
// namespace's credentials (spec.cloudCredentialsRef) make another.
type Project struct {
	Key        Key
	Inventory  *inventory.Inventory
	Reconciler Reconciler
}

// Reconciler is what is asked of one project's reconciler: pkg/reconcile's
// Reconciler. The Network controller asks the first three; this package
// and the garbage collector the last two.
type Reconciler interface {
	// Preflight refuses what cannot be reconciled now, before the
	// finalizer goes on; ok says Reconcile may go on.
	Preflight(network *samplecrdv1.Network) (_ reconcile.Outcome, ok bool)
	// Reconcile makes Neutron match network.
	Reconcile(ctx context.Context, network *samplecrdv1.Network) reconcile.Outcome
	// Delete deletes or releases network's Neutron resources; the
	// Outcome is Finalized when the finalizer may go.
	Delete(ctx context.Context, network *samplecrdv1.Network) reconcile.Outcome
	// CollectOrphans collects what Neutron holds for a Network of uid that
	// is gone; cached says the informer still holds one.
	CollectOrphans(ctx context.Context, uid types.UID, cached bool) reconcile.Outcome
	// SightOrphans is told which UIDs a list of Neutron found without a
	// Network in the cache, and returns those to collect.
	SightOrphans(started time.Time, missing []types.UID) []types.UID
}
