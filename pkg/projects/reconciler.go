package projects

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/reconcile"
)

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
