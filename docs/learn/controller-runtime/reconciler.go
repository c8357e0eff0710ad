// Package main is the core of network-controller's reconcile written once
// more with controller-runtime, for chapter 12 of docs/learn: create the
// Neutron network and subnet, keep the gateway in step, delete both behind
// a finalizer, and say so in the Ready condition. It is a separate Go
// module, so that the controller itself does not depend on
// controller-runtime. What it leaves out, and the controller has, is listed
// in README.md beside it.
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// NetworkReconciler is syncHandler's counterpart: controller-runtime calls
// Reconcile with a key, as a worker calls syncHandler.
type NetworkReconciler struct {
	// Client reads from the manager's cache (the lister) and writes to
	// the API server.
	Client client.Client
	// Neutron is the same interface the controller uses; the tests use
	// its fake.
	Neutron neutron.Interface
	// Mark names and describes what this cluster makes in Neutron.
	Mark neutron.Mark
}

// SetupWithManager is NewController's counterpart: For is the informer and
// its handlers, the predicate is needsSync.
func (r *NetworkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&samplecrdv1.Network{}, builder.WithPredicates(needsSync)).
		Complete(r)
}

// needsSync is controller.go's needsSync as a predicate: a new generation
// (a spec change, or the start of a deletion, which changes the generation
// of an object with finalizers), or a resync. GenerationChangedPredicate
// alone drops resyncs (an update with the same resourceVersion), and with
// them the periodic re-check that finds what changed in Neutron behind the
// controller's back.
var needsSync = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
	},
})

// Reconcile makes Neutron match the Network named by req. Returning an
// error is AddRateLimited; nil is Forget.
func (r *NetworkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var network samplecrdv1.Network
	if err := r.Client.Get(ctx, req.NamespacedName, &network); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !network.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.delete(ctx, &network)
	}
	// The finalizer goes on before anything exists in Neutron.
	if controllerutil.AddFinalizer(&network, samplecrdv1.NetworkFinalizer) {
		if err := r.Client.Update(ctx, &network); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	netID, subnetID, err := r.ensure(ctx, &network)
	if err != nil {
		return ctrl.Result{}, errors.Join(err, r.setReady(ctx, &network, metav1.ConditionFalse, samplecrdv1.ReasonNeutronUnavailable, err.Error()))
	}
	network.Status.NetworkID, network.Status.SubnetID = netID, subnetID
	return ctrl.Result{}, r.setReady(ctx, &network, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned, "the Neutron network and subnet match the spec")
}

// ensure is the ladder, short: the network and subnet this Network owns
// (found by the ownership mark, else created), then what may change.
func (r *NetworkReconciler) ensure(ctx context.Context, network *samplecrdv1.Network) (netID, subnetID string, _ error) {
	name := r.Mark.ResourceName(neutron.Owner{Namespace: network.Namespace, Name: network.Name, UID: network.UID})
	net, found, err := r.findNetwork(ctx, name)
	if err != nil {
		return "", "", err
	}
	if !found {
		if net, err = r.Neutron.CreateNetwork(ctx, name, r.Mark.Description(), 0); err != nil {
			return "", "", fmt.Errorf("creating the network: %w", err)
		}
	}
	subnet, found, err := r.findSubnet(ctx, net.ID)
	if err != nil {
		return "", "", err
	}
	// The spec in Neutron's terms, from the controller's own pkg/controller/desired:
	// a gateway that moves takes the allocation pools with it, in one
	// request, as Neutron needs.
	want, err := desired.SubnetOf(desired.FromV1(network.Spec), network.Spec.CIDR)
	if err != nil {
		return "", "", err
	}
	if !found {
		if subnet, err = r.Neutron.CreateSubnet(ctx, want.Request(net.ID, name, r.Mark.Description())); err != nil {
			return "", "", fmt.Errorf("creating the subnet: %w", err)
		}
	} else if update, changed := want.Update(subnet); len(changed) > 0 {
		if _, err := r.Neutron.UpdateSubnet(ctx, subnet.ID, update); err != nil {
			return "", "", fmt.Errorf("updating %v: %w", changed, err)
		}
	}
	return net.ID, subnet.ID, nil
}

func (r *NetworkReconciler) findNetwork(ctx context.Context, name string) (neutron.Network, bool, error) {
	var found neutron.Network
	err := r.Neutron.ListNetworks(ctx, r.Mark.Description(), func(page []neutron.Network) error {
		for _, n := range page {
			if n.Name == name {
				found = n
			}
		}
		return nil
	})
	return found, found.ID != "", err
}

func (r *NetworkReconciler) findSubnet(ctx context.Context, networkID string) (neutron.Subnet, bool, error) {
	var found neutron.Subnet
	err := r.Neutron.ListSubnets(ctx, r.Mark.Description(), func(page []neutron.Subnet) error {
		for _, s := range page {
			if s.NetworkID == networkID {
				found = s
			}
		}
		return nil
	})
	return found, found.ID != "", err
}

// delete removes the network, and the finalizer last: Neutron deletes a
// network's subnets with it, in the one request, as the controller's
// DeleteOwned relies on. Every subnet on it goes, whoever made it, so the
// network is read first and deleted only while its one subnet is
// status.subnetID, at the revision read (the controller's door does the
// same for whatever its inventory holds).
func (r *NetworkReconciler) delete(ctx context.Context, network *samplecrdv1.Network) error {
	if !controllerutil.ContainsFinalizer(network, samplecrdv1.NetworkFinalizer) {
		return nil
	}
	if id := network.Status.NetworkID; id != "" {
		n, err := r.Neutron.GetNetwork(ctx, id)
		switch {
		case neutron.IsNotFound(err): // gone counts as deleted
		case err != nil:
			return fmt.Errorf("reading the network: %w", err)
		case slices.ContainsFunc(n.SubnetIDs, func(s string) bool { return s != network.Status.SubnetID }):
			return fmt.Errorf("network %s holds subnets this Network did not make, which Neutron would delete with it: %v", id, n.SubnetIDs)
		default:
			if err := r.Neutron.DeleteNetwork(ctx, id, n.RevisionNumber); err != nil { // gone counts as deleted
				return fmt.Errorf("deleting the network: %w", err)
			}
		}
	}
	controllerutil.RemoveFinalizer(network, samplecrdv1.NetworkFinalizer)
	return r.Client.Update(ctx, network)
}

// setReady writes the Ready condition and the IDs to status, as
// applyStatus does, but with an update of the status subresource.
func (r *NetworkReconciler) setReady(ctx context.Context, network *samplecrdv1.Network, status metav1.ConditionStatus, reason, message string) error {
	meta.SetStatusCondition(&network.Status.Conditions, metav1.Condition{Type: samplecrdv1.ConditionReady, Status: status,
		Reason: reason, Message: message, ObservedGeneration: network.Generation})
	network.Status.ObservedGeneration = network.Generation
	return r.Client.Status().Update(ctx, network)
}
