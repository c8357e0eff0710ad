package main

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// fixture is the reconciler over controller-runtime's fake client and the
// same fake Neutron the controller's own tests use.
type fixture struct {
	t       *testing.T
	client  client.Client
	neutron *neutronfake.Neutron
	r       *NetworkReconciler
}

var key = types.NamespacedName{Namespace: "default", Name: "net"}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := samplecrdv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	network := &samplecrdv1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, UID: "1c2d3e4f-0000-4000-8000-000000000001", Generation: 1},
		Spec:       samplecrdv1.NetworkSpec{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(network).WithStatusSubresource(network).Build()
	mark, err := neutron.NewMark("test-cluster", "c1c1c1c1-0000-4000-8000-0000000000c1")
	if err != nil {
		t.Fatal(err)
	}
	n := neutronfake.New()
	return &fixture{t: t, client: c, neutron: n, r: &NetworkReconciler{Client: c, Neutron: n, Mark: mark}}
}

func (f *fixture) reconcile() {
	f.t.Helper()
	if _, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		f.t.Fatalf("Reconcile: %v", err)
	}
}

func (f *fixture) network() *samplecrdv1.Network {
	f.t.Helper()
	var n samplecrdv1.Network
	if err := f.client.Get(context.Background(), key, &n); err != nil {
		f.t.Fatal(err)
	}
	return &n
}

// TestTheNetworkLifecycle: created with its finalizer first and Ready
// after; a second pass changes nothing; a new gateway is one update; a
// deletion empties Neutron, then lets the object go.
func TestTheNetworkLifecycle(t *testing.T) {
	f := newFixture(t)

	f.reconcile()
	n := f.network()
	if !meta.IsStatusConditionTrue(n.Status.Conditions, samplecrdv1.ConditionReady) || n.Status.NetworkID == "" || n.Status.SubnetID == "" {
		t.Fatalf("after the first pass: status %+v, want Ready with both IDs", n.Status)
	}
	if len(n.Finalizers) != 1 || n.Finalizers[0] != samplecrdv1.NetworkFinalizer {
		t.Errorf("finalizers %v, want the controller's", n.Finalizers)
	}
	if nets, subnets := f.neutron.Networks(), f.neutron.Subnets(); len(nets) != 1 || len(subnets) != 1 || subnets[0].GatewayIP != "10.0.0.1" {
		t.Fatalf("Neutron holds %v and %v, want one network and its subnet on 10.0.0.1", nets, subnets)
	}

	f.neutron.ClearRequests()
	f.reconcile()
	for _, req := range f.neutron.Requests() {
		if req != neutronfake.ListNetworks && req != neutronfake.ListSubnets {
			t.Errorf("a pass over an in-sync Network wrote %s", req)
		}
	}

	n = f.network()
	n.Spec.Gateway = "10.0.0.254"
	if err := f.client.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	f.reconcile()
	if subnets := f.neutron.Subnets(); len(subnets) != 1 || subnets[0].GatewayIP != "10.0.0.254" || subnets[0].ID != n.Status.SubnetID {
		t.Errorf("after the gateway change Neutron holds %v, want the same subnet on 10.0.0.254", subnets)
	}

	if err := f.client.Delete(context.Background(), f.network()); err != nil {
		t.Fatal(err)
	}
	f.reconcile()
	if nets, subnets := f.neutron.Networks(), f.neutron.Subnets(); len(nets) != 0 || len(subnets) != 0 {
		t.Errorf("after the deletion Neutron still holds %v and %v", nets, subnets)
	}
	var gone samplecrdv1.Network
	if err := f.client.Get(context.Background(), key, &gone); err == nil {
		t.Errorf("the Network is still there with finalizers %v", gone.Finalizers)
	}
}

// TestNeutronDownIsNotReady: a failed create is Ready=False with the
// reason, and an error, which controller-runtime retries with backoff.
func TestNeutronDownIsNotReady(t *testing.T) {
	f := newFixture(t)
	f.neutron.FailOn(neutronfake.CreateNetwork, neutron.ErrorForResponse(neutronfake.CreateNetwork, 503, "ServiceUnavailable", "down"))
	if _, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err == nil {
		t.Error("Reconcile returned no error while Neutron is down: nothing would retry it")
	}
	cond := meta.FindStatusCondition(f.network().Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != samplecrdv1.ReasonNeutronUnavailable {
		t.Errorf("Ready = %+v, want False/NeutronUnavailable", cond)
	}
}

// TestNeedsSyncKeepsResyncs: the predicate passes what controller.go's
// needsSync passes (a resync, a new generation, the start of a deletion)
// and drops the controller's own status writes coming back.
func TestNeedsSyncKeepsResyncs(t *testing.T) {
	old := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "net", ResourceVersion: "7", Generation: 1}}
	with := func(change func(*samplecrdv1.Network)) *samplecrdv1.Network {
		n := old.DeepCopy()
		change(n)
		return n
	}
	for _, tc := range []struct {
		name string
		new  *samplecrdv1.Network
		want bool
	}{
		{"a resync: the same resourceVersion", with(func(*samplecrdv1.Network) {}), true},
		{"a spec change: a new generation", with(func(n *samplecrdv1.Network) { n.ResourceVersion, n.Generation = "8", 2 }), true},
		{"a status write coming back", with(func(n *samplecrdv1.Network) { n.ResourceVersion, n.Status.NetworkID = "8", "net-1" }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsSync.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("needsSync = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestADeleteTakesNoSubnetItDidNotMake: a subnet someone added to the
// Network's network would go with the network's delete, so the delete
// waits, the finalizer held, until it is removed.
func TestADeleteTakesNoSubnetItDidNotMake(t *testing.T) {
	f := newFixture(t)
	f.reconcile()
	n := f.network()
	lab := f.neutron.AddSubnet(n.Status.NetworkID, "lab", "made by hand", "10.7.0.0/24", "10.7.0.1")
	if err := f.client.Delete(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err == nil {
		t.Error("the delete returned no error while a subnet not its own is on the network")
	}
	if subnets := f.neutron.Subnets(); len(subnets) != 2 {
		t.Errorf("Neutron holds subnets %v, want its own and %s", subnets, lab)
	}
	if len(f.network().Finalizers) == 0 {
		t.Error("the finalizer is gone")
	}
}
