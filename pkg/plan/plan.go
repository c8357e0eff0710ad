package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/reconcile"
)

// maxPasses bounds the passes a plan runs. A sync that makes or adopts a
// Network takes one (its place, or the adoption's names, stored in status
// first, in the same pass), and one that waits without a failure (its
// project's first list under way) is followed by another.
const maxPasses = 5

// Reconciler is what a plan asks of a project's reconciler, as the
// controller's syncHandler does: pkg/reconcile's Reconciler.
type Reconciler interface {
	Preflight(network *samplecrdv1.Network) (_ reconcile.Outcome, ok bool)
	Reconcile(ctx context.Context, network *samplecrdv1.Network) reconcile.Outcome
	Delete(ctx context.Context, network *samplecrdv1.Network) reconcile.Outcome
}

// Project finds the reconciler of network's project, as the controller's
// projects do (policy first, then the credentials), on a DryRun; the
// error is what the controller would report, nil when it may go on.
type Project func(ctx context.Context, network *samplecrdv1.Network) (Reconciler, *DryRun, error)

// Result is what the controller would do for one Network.
type Result struct {
	// Network is namespace/name.
	Network string `json:"network"`
	// Exists says the Network is in the API server already: the plan
	// starts from its status (the Neutron IDs, the project), as the
	// controller would.
	Exists bool `json:"exists"`
	// Requests are the writes the syncs would send to Neutron, in order.
	Requests []Request `json:"requests"`
	// Warnings are what the plan found that Neutron would accept but an
	// operator should know: a range that overlaps another Network's.
	Warnings []string `json:"warnings,omitempty"`
	// Condition is the Ready condition the controller would report after
	// them.
	Condition *metav1.Condition `json:"condition,omitempty"`
	// Refused says the controller would not make Neutron match: the
	// Network would not become Ready (Condition says why).
	Refused bool `json:"refused"`
	// Unknown, when set, is where the plan stopped because it cannot
	// tell what Neutron would answer.
	Unknown string `json:"unknown,omitempty"`
	// Error is why the sync would stop where the controller reports no
	// condition (a Network Ready for its generation stays so while Neutron
	// cannot be listed), so that a refusal never goes unexplained.
	Error string `json:"error,omitempty"`
}

// Sync plans network: the passes of the controller's sync (project,
// Preflight, Reconcile, or Delete for a Network being deleted), each on the
// status the one before would have written, until one ends Ready or
// refused. Nothing is written: the Requests are the DryRun's.
func Sync(ctx context.Context, network *samplecrdv1.Network, exists bool, project Project) Result {
	res := Result{Network: network.Namespace + "/" + network.Name, Exists: exists, Requests: []Request{}}
	network = network.DeepCopy()
	for range maxPasses {
		out, dry := pass(ctx, network, project)
		if dry != nil {
			requests, warnings := dry.Take()
			res.Requests, res.Warnings = append(res.Requests, requests...), append(res.Warnings, warnings...)
		}
		var unknown *UnknownError
		if errors.As(out.Err, &unknown) {
			res.Unknown, res.Condition = unknown.Error(), nil
			return res
		}
		if out.Condition != nil {
			res.Condition = out.Condition
			if err := foldStatus(network, out); err != nil {
				res.Refused, res.Condition = true, &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionUnknown,
					Reason: samplecrdv1.ReasonInternalError, Message: err.Error()}
				return res
			}
		}
		if out.Finalized || meta.IsStatusConditionTrue(network.Status.Conditions, samplecrdv1.ConditionReady) && out.Err == nil {
			return res
		}
		// A pass that waits without a failure (the first list under
		// way) goes on at its next pass; anything else is the
		// controller's last word until something changes.
		if out.Requeue != reconcile.AddRateLimited || out.Err != nil {
			res.Refused = true
			if out.Condition == nil && out.Err != nil {
				res.Error = out.Err.Error()
			}
			return res
		}
	}
	res.Refused = true
	return res
}

// pass is one pass of syncHandler's Neutron half on network.
func pass(ctx context.Context, network *samplecrdv1.Network, project Project) (reconcile.Outcome, *DryRun) {
	r, dry, err := project(ctx, network)
	if out, refused := reconcile.ProjectRefused(network, err); refused {
		return out, dry
	}
	if err != nil {
		return reconcile.Outcome{Err: err, Condition: &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionUnknown,
			Reason: samplecrdv1.ReasonNeutronUnavailable, Message: fmt.Sprintf("finding the project: %v", err)}}, dry
	}
	if network.DeletionTimestamp != nil {
		return r.Delete(ctx, network), dry
	}
	if out, ok := r.Preflight(network); !ok {
		return out, dry
	}
	return r.Reconcile(ctx, network), dry
}

// foldStatus writes into network's status what the controller would apply
// after out: reconcile.StatusApply's apply configuration, which names every
// field the controller owns, read back as the status it makes.
func foldStatus(network *samplecrdv1.Network, out reconcile.Outcome) error {
	ac, _ := reconcile.StatusApply(network, *out.Condition, out.Observed)
	if ac == nil {
		return nil
	}
	data, err := json.Marshal(ac.Status)
	if err != nil {
		return fmt.Errorf("reading the planned status: %w", err)
	}
	var status samplecrdv1.NetworkStatus
	if err := json.Unmarshal(data, &status); err != nil {
		return fmt.Errorf("reading the planned status: %w", err)
	}
	network.Status = status
	return nil
}
