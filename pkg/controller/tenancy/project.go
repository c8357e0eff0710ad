package tenancy

import (
	"context"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/collector"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// Project is what is kept for one OpenStack project: the inventory of what
// Neutron holds there (its informer, and the one door to it), the
// reconciler that acts through it, and the garbage collection of its
// orphans (pkg/controller/collector), through it too. The controller's own cloud is
// one; a namespace's credentials (spec.cloudCredentialsRef) make another.
type Project struct {
	Key        Key
	Inventory  *inventory.Inventory
	Reconciler Reconciler
	Orphans    *collector.Orphans
}

// Reconciler is what the Network controller asks of one project's
// reconciler: pkg/controller/reconcile's Reconciler.
type Reconciler interface {
	// Preflight refuses what cannot be reconciled now, before the
	// finalizer goes on; ok says Reconcile may go on.
	Preflight(network *samplecrdv2.Network) (_ reconcile.Outcome, ok bool)
	// Reconcile makes Neutron match network.
	Reconcile(ctx context.Context, network *samplecrdv2.Network) reconcile.Outcome
	// Delete deletes or releases network's Neutron resources; the
	// Outcome is Finalized when the finalizer may go.
	Delete(ctx context.Context, network *samplecrdv2.Network) reconcile.Outcome
}
