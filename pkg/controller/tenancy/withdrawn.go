package tenancy

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// A grant holds for as long as a Network uses it, not only when it is
// made. When a TenantPolicy stops granting the router a Network is
// attached to (or the external network of a router of its own), the
// Network detaches: its sync runs as if spec.router were not set, which
// removes its interface from that router (and deletes a router of its
// own, whose gateway was on the external network), keeps its network and
// subnet, and then reports the refusal, NotAllowed or
// ExternalNetworkNotAllowed. Once status says it is attached to nothing,
// its syncs are refused before Neutron is asked anything, as for a
// Network that never had the grant. A grant given back attaches it again
// at the next sync, which a TenantPolicy's change queues.

// withdrawn is the Reconciler of a Network whose spec.router is no
// longer granted, while status says it is attached: the project's
// Reconciler, asked of the Network without its router.
type withdrawn struct {
	Reconciler
	refusal *reconcile.NotAllowedError
}

// withdrawnFrom returns the reconciler for network, refused by err: a
// withdrawn one when the refusal is of spec.router alone and status says
// the Network is attached, else nil (refused as it is).
func withdrawnFrom(r Reconciler, network *samplecrdv2.Network, refusal *reconcile.NotAllowedError) Reconciler {
	if !refusal.Router || network.Status.Router == nil {
		return nil
	}
	return withdrawn{Reconciler: r, refusal: refusal}
}

// withoutRouter is network as its sync sees it once its router is not
// granted.
func withoutRouter(network *samplecrdv2.Network) *samplecrdv2.Network {
	n := network.DeepCopy()
	n.Spec.Router = nil
	return n
}

// Preflight implements Reconciler.
func (w withdrawn) Preflight(network *samplecrdv2.Network) (reconcile.Outcome, bool) {
	return w.Reconciler.Preflight(withoutRouter(network))
}

// Reconcile detaches, then reports the refusal: a pass that failed
// reports its own failure, so that what blocks the detach is said.
func (w withdrawn) Reconcile(ctx context.Context, network *samplecrdv2.Network) reconcile.Outcome {
	out := w.Reconciler.Reconcile(ctx, withoutRouter(network))
	if out.Condition == nil || out.Condition.Status != metav1.ConditionTrue {
		return out
	}
	said := *w.refusal
	said.Message = strings.TrimSuffix(said.Message, reconcile.NothingAsked) +
		"; the Network was detached from it, and keeps its network and subnet (docs/tenancy.md)"
	refused, _ := reconcile.ProjectRefused(network, &said)
	refused.Observed, refused.Events = out.Observed, append(out.Events, refused.Events...)
	return refused
}
