package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/configmap"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
)

// fixture is one controller over fake clients and a fake reconciler, in
// the manner of sample-controller's tests: the objects are put straight
// into the fake clientset and the informer's indexer, and one syncHandler
// call is run. What a pass does to Neutron is pkg/controller/reconcile's to test;
// here, what the controller does with the pass's Outcome.
type fixture struct {
	t          *testing.T
	client     *fake.Clientset
	reconciler *fakeReconciler
	recorder   *record.FakeRecorder
	controller *Controller
	// cache is the informer's Indexer, which the fixture fills by hand.
	cache cache.Indexer
	// kube is the core API, and configMaps its ConfigMap informer's
	// Indexer (addConfigMap fills both).
	kube       *k8sfake.Clientset
	configMaps cache.Indexer
}

// fakeReconciler answers every pass with outcome, and records the calls.
type fakeReconciler struct {
	// refuse, when set, is Preflight's answer: the pass stops there.
	refuse *reconcile.Outcome
	// outcome answers Reconcile and Delete.
	outcome reconcile.Outcome
	// calls are the calls, as "Method".
	calls []string
}

func (r *fakeReconciler) Preflight(*samplecrdv2.Network) (reconcile.Outcome, bool) {
	r.calls = append(r.calls, "Preflight")
	if r.refuse != nil {
		return *r.refuse, false
	}
	return reconcile.Outcome{}, true
}

func (r *fakeReconciler) Reconcile(context.Context, *samplecrdv2.Network) reconcile.Outcome {
	r.calls = append(r.calls, "Reconcile")
	return r.outcome
}

func (r *fakeReconciler) Delete(context.Context, *samplecrdv2.Network) reconcile.Outcome {
	r.calls = append(r.calls, "Delete")
	return r.outcome
}

// fakeProjects hands every Network the one reconciler, as the controller's
// own project; it refuses what policy refuses, and credentials as a
// controller without a cloud does. pkg/controller/tenancy is tested on its own.
type fakeProjects struct {
	reconciler *fakeReconciler
	policy     *tenancy.Policy
}

func (p *fakeProjects) Start(context.Context, func(any)) error { return nil }

func (p *fakeProjects) For(_ context.Context, network *samplecrdv2.Network) (Reconciler, error) {
	if err := p.policy.Check(network); err != nil && network.DeletionTimestamp == nil {
		return nil, err
	}
	if network.Spec.CloudCredentialsRef != nil {
		return nil, &neutron.CredentialsError{Reason: "spec.cloudCredentialsRef needs the controller to run with a cloud"}
	}
	return p.reconciler, nil
}

const testUID = types.UID("1c2d3e4f-0000-0000-0000-000000000001")

func newFixture(t *testing.T, networks ...*samplecrdv2.Network) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, reconciler: &fakeReconciler{}, recorder: record.NewFakeRecorder(100)}
	var objects []runtime.Object
	for _, n := range networks {
		objects = append(objects, n)
	}
	f.client = fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(f.client, 0)
	// No TenantPolicy, and the namespace "default" grants nothing: the
	// safe default of a namespace the administrator said nothing about.
	namespaces := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := namespaces.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	grants := tenancy.NewPolicyFromListers(listers.NewTenantPolicyLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
		corelisters.NewNamespaceLister(namespaces), factory.Samplecrd().V2().Networks().Lister(), tenancy.Defaults{})
	f.kube = k8sfake.NewClientset()
	configMaps := kubeinformers.NewSharedInformerFactory(f.kube, 0).Core().V1().ConfigMaps()
	c, err := NewController(ctx, f.kube, f.client, factory.Samplecrd().V2().Networks(), configMaps,
		&fakeProjects{reconciler: f.reconciler, policy: grants}, Options{MaxRetryDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c.networksSynced = func() bool { return true }
	c.recorder, c.configMaps.Recorder = f.recorder, f.recorder
	for _, n := range networks {
		if err := factory.Samplecrd().V2().Networks().Informer().GetIndexer().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	f.controller = c
	f.cache = factory.Samplecrd().V2().Networks().Informer().GetIndexer()
	f.configMaps = configMaps.Informer().GetIndexer()
	return f
}

// addConfigMap puts cm in the API server, and in the informer's cache if
// it has the controller's mark, which the informer selects on.
func (f *fixture) addConfigMap(cm *corev1.ConfigMap) {
	if err := f.kube.Tracker().Add(cm); err != nil {
		f.t.Fatal(err)
	}
	if !configmap.Selector().Matches(labels.Set(cm.Labels)) {
		return
	}
	if err := f.configMaps.Add(cm); err != nil {
		f.t.Fatal(err)
	}
}

// catchUp puts what the API server holds for default/net into the cache,
// as the informer's watch would.
func (f *fixture) catchUp() {
	if err := f.cache.Update(f.network()); err != nil {
		f.t.Fatal(err)
	}
}

// sync runs one syncHandler call for the Network default/net.
func (f *fixture) sync() result { return f.syncKey(netKey) }

var netKey = cache.ObjectName{Namespace: "default", Name: "net"}

func (f *fixture) syncKey(key cache.ObjectName) result {
	_, ctx := ktesting.NewTestContext(f.t)
	return f.controller.syncHandler(ctx, key)
}

// writes returns the API writes the sync made, as "verb resource[/subresource]".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		verb := a.GetVerb()
		if p, ok := a.(core.PatchAction); ok && p.GetPatchType() == types.ApplyPatchType {
			verb = "apply"
		}
		res := a.GetResource().Resource
		if a.GetSubresource() != "" {
			res += "/" + a.GetSubresource()
		}
		out = append(out, verb+" "+res)
	}
	return out
}

// events returns the Events recorded, as "Type Reason".
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			fields := strings.Fields(e)
			out = append(out, strings.Join(fields[:min(2, len(fields))], " "))
		default:
			return out
		}
	}
}

func (f *fixture) network() *samplecrdv2.Network {
	n, err := f.client.SamplecrdV2().Networks("default").Get(context.Background(), "net", metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("reading Network default/net: %v", err)
	}
	return n
}

// newNetwork is a Network as a user creates it: no finalizer, no status.
func newNetwork() *samplecrdv2.Network {
	return &samplecrdv2.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv2.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default", UID: testUID, Generation: 1},
		Spec:       samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: "192.168.0.0/16", Gateway: "192.168.0.1"}}},
	}
}

// observed is what the fake reconciler reports Neutron holds.
var observed = reconcile.Observed{NetworkID: "net-1", MTU: 1442, NeutronStatus: "ACTIVE",
	Subnets: []samplecrdv2.SubnetStatus{{CIDR: "192.168.0.0/16", ID: "subnet-2", Gateway: "192.168.0.1"}}}

// provisioned is a Network whose status already says what observed says.
func provisioned(n *samplecrdv2.Network) *samplecrdv2.Network {
	n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	n.Status = samplecrdv2.NetworkStatus{ObservedGeneration: n.Generation, NetworkID: observed.NetworkID, Subnets: observed.Status().Subnets,
		MTU: observed.MTU, NeutronStatus: observed.NeutronStatus,
		Conditions: []metav1.Condition{withGeneration(readyCondition, n.Generation)}}
	return n
}

func withGeneration(c metav1.Condition, gen int64) metav1.Condition {
	c.ObservedGeneration, c.LastTransitionTime = gen, metav1.NewTime(time.Unix(1e9, 0))
	return c
}

// withCredentials makes n name its namespace's credentials, which the
// fixture's controller, run without Keystone, cannot use.
func withCredentials(n *samplecrdv2.Network) *samplecrdv2.Network {
	n.Spec.CloudCredentialsRef = &samplecrdv2.CloudCredentialsReference{SecretName: "cloud", CloudName: "team"}
	return n
}

func deleting(n *samplecrdv2.Network) *samplecrdv2.Network {
	now := metav1.NewTime(time.Now())
	n.DeletionTimestamp = &now
	return n
}

var (
	readyCondition = metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionTrue, Reason: samplecrdv1.ReasonProvisioned, Message: "in sync"}
	downCondition  = metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: samplecrdv1.ReasonNeutronUnavailable, Message: "down"}
)

// ready and down are Outcomes of the fake reconciler.
func ready(events ...reconcile.Event) reconcile.Outcome {
	return reconcile.Outcome{Condition: &readyCondition, Observed: observed, Events: events}
}

func down() reconcile.Outcome {
	return reconcile.Outcome{Condition: &downCondition, Warning: downCondition.Reason, Observed: observed,
		Requeue: reconcile.AddRateLimited, Err: errors.New("down")}
}

var created = reconcile.Event{Type: corev1.EventTypeNormal, Reason: "Created", Message: "Created it"}

// TestSyncHandler is the specification of what the controller writes for
// each Outcome: the finalizer before any pass that may create, status only
// when it changes, a Warning only when the condition changes, and the
// finalizer's release only once Delete says so.
func TestSyncHandler(t *testing.T) {
	tests := []struct {
		name       string
		network    *samplecrdv2.Network
		refuse     *reconcile.Outcome
		outcome    reconcile.Outcome
		wantCalls  []string
		wantWrites []string
		wantEvents []string
		wantReady  string
		wantResult reconcile.Requeue
	}{
		{
			name:       "a new Network: the finalizer goes on before Reconcile, then its status",
			network:    newNetwork(),
			outcome:    ready(created),
			wantCalls:  []string{"Preflight", "Reconcile"},
			wantWrites: []string{"apply networks", "apply networks/status"},
			wantEvents: []string{"Normal Created"},
			wantReady:  "True/Provisioned",
		},
		{
			name: "a router its namespace is not granted: NotAllowed, one Warning, no finalizer, its project not asked",
			network: func() *samplecrdv2.Network {
				n := newNetwork()
				n.Spec.Router = &samplecrdv2.RouterReference{Name: "edge"}
				return n
			}(),
			wantWrites: []string{"apply networks/status"},
			wantEvents: []string{"Warning NotAllowed"},
			wantReady:  "False/NotAllowed",
			wantResult: reconcile.AddAfter,
		},
		{
			name: "a deletion is never refused by policy: what a Network made, it removes",
			network: func() *samplecrdv2.Network {
				n := deleting(provisioned(newNetwork()))
				n.Spec.Router = &samplecrdv2.RouterReference{Name: "edge"}
				return n
			}(),
			outcome:    reconcile.Outcome{Finalized: true},
			wantCalls:  []string{"Delete"},
			wantWrites: []string{"apply networks"},
			wantReady:  "True/Provisioned",
		},
		{
			name:       "refused by Preflight: status and one Warning, no finalizer, no Reconcile",
			network:    newNetwork(),
			refuse:     &reconcile.Outcome{Condition: &downCondition, Warning: "NeutronUnavailable", Requeue: reconcile.AddRateLimited, Err: errors.New("down")},
			wantCalls:  []string{"Preflight"},
			wantWrites: []string{"apply networks/status"},
			wantEvents: []string{"Warning NeutronUnavailable"},
			wantReady:  "False/NeutronUnavailable",
			wantResult: reconcile.AddRateLimited,
		},
		{
			name:       "refused by Preflight with nothing to say: no write at all",
			network:    provisioned(newNetwork()),
			refuse:     &reconcile.Outcome{Requeue: reconcile.AddRateLimited, Err: errors.New("not listed")},
			wantCalls:  []string{"Preflight"},
			wantResult: reconcile.AddRateLimited,
			wantReady:  "True/Provisioned",
		},
		{
			name:      "an Outcome that status already says costs no write",
			network:   provisioned(newNetwork()),
			outcome:   ready(),
			wantCalls: []string{"Preflight", "Reconcile"},
			wantReady: "True/Provisioned",
		},
		{
			name: "a Network already failing for the same reason gets no second Warning",
			network: func() *samplecrdv2.Network {
				n := provisioned(newNetwork())
				n.Status.Conditions = []metav1.Condition{withGeneration(downCondition, 1), *reconcile.ProgressCondition(withGeneration(downCondition, 1))}
				return n
			}(),
			outcome:    down(),
			wantCalls:  []string{"Preflight", "Reconcile"},
			wantReady:  "False/NeutronUnavailable",
			wantResult: reconcile.AddRateLimited,
		},
		{
			name:       "a failing pass: status, a Warning, and backoff",
			network:    provisioned(newNetwork()),
			outcome:    down(),
			wantCalls:  []string{"Preflight", "Reconcile"},
			wantWrites: []string{"apply networks/status"},
			wantEvents: []string{"Warning NeutronUnavailable"},
			wantReady:  "False/NeutronUnavailable",
			wantResult: reconcile.AddRateLimited,
		},
		{
			name:       "a deleted Network finalized: its Events, then the finalizer goes, then its project is told",
			network:    deleting(provisioned(newNetwork())),
			outcome:    reconcile.Outcome{Finalized: true, Events: []reconcile.Event{{Type: corev1.EventTypeNormal, Reason: "Deleted"}}},
			wantCalls:  []string{"Delete"},
			wantWrites: []string{"apply networks"},
			wantEvents: []string{"Normal Deleted"},
		},
		{
			name:       "a deleted Network not finalized: the finalizer stays, status says why",
			network:    deleting(provisioned(newNetwork())),
			outcome:    down(),
			wantCalls:  []string{"Delete"},
			wantWrites: []string{"apply networks/status"},
			wantEvents: []string{"Warning NeutronUnavailable"},
			wantReady:  "False/NeutronUnavailable",
			wantResult: reconcile.AddRateLimited,
		},
		{
			name:       "a Network whose credentials cannot be used: status and one Warning, no finalizer, no reconciler",
			network:    withCredentials(newNetwork()),
			wantWrites: []string{"apply networks/status"},
			wantEvents: []string{"Warning CredentialsUnavailable"},
			wantReady:  "False/CredentialsUnavailable",
			wantResult: reconcile.AddRateLimited,
		},
		{
			name:       "a deleted Network whose credentials cannot be used: the finalizer stays, status says why",
			network:    deleting(withCredentials(provisioned(newNetwork()))),
			wantWrites: []string{"apply networks/status"},
			wantEvents: []string{"Warning CredentialsUnavailable"},
			wantReady:  "False/CredentialsUnavailable",
			wantResult: reconcile.AddRateLimited,
		},
		{
			name:    "a deleted Network without our finalizer: nothing to do",
			network: deleting(newNetwork()),
		},
		{
			name: "a Network that is gone: nothing to do",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var networks []*samplecrdv2.Network
			if tc.network != nil {
				networks = append(networks, tc.network)
			}
			f := newFixture(t, networks...)
			f.reconciler.refuse, f.reconciler.outcome = tc.refuse, tc.outcome
			res := f.syncKey(netKey)
			if res.requeue != tc.wantResult {
				t.Errorf("requeue = %v (%v), want %v", res.requeue, res.err, tc.wantResult)
			}
			if got := f.reconciler.calls; !slices.Equal(got, tc.wantCalls) {
				t.Errorf("reconciler calls = %q, want %q", got, tc.wantCalls)
			}
			if got := f.writes(); !slices.Equal(got, tc.wantWrites) {
				t.Errorf("API writes = %q, want %q", got, tc.wantWrites)
			}
			if got := f.events(); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
			if tc.wantReady != "" {
				n := f.network()
				cond := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady)
				if got := string(cond.Status) + "/" + cond.Reason; got != tc.wantReady || cond.ObservedGeneration != n.Generation {
					t.Errorf("Ready = %s for generation %d, want %s for %d", got, cond.ObservedGeneration, tc.wantReady, n.Generation)
				}
			}
			if slices.Contains(tc.wantCalls, "Reconcile") && !slices.Contains(f.network().Finalizers, samplecrdv1.NetworkFinalizer) {
				t.Error("reconciled without the finalizer on")
			}
		})
	}
}

// TestStatusSaysWhatNeutronHolds: the observed state of an Outcome lands
// in status field by field.
func TestStatusSaysWhatNeutronHolds(t *testing.T) {
	f := newFixture(t, newNetwork())
	f.reconciler.outcome = ready()
	f.sync()
	st := f.network().Status
	if st.NetworkID != observed.NetworkID || !equality.Semantic.DeepEqual(st.Subnets, observed.Subnets) || st.MTU != observed.MTU || st.NeutronStatus != observed.NeutronStatus || st.ObservedGeneration != 1 {
		t.Errorf("status = %+v, want what %+v says", st, observed)
	}
}

// TestProcessNextWorkItemRequeues checks the queue and syncs_total after
// one item of each kind of result.
func TestProcessNextWorkItemRequeues(t *testing.T) {
	metrics.RegisterController()
	syncs := func(result string) float64 {
		v, err := testutil.GetCounterMetricValue(metrics.SyncsTotal.WithLabelValues(result))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name         string
		outcome      reconcile.Outcome
		wantResult   string
		wantRequeues int
	}{
		{"success: forgotten", ready(), metrics.ResultSuccess, 0},
		{"soon: one backoff step, counted a success", reconcile.Outcome{Requeue: reconcile.AddRateLimited}, metrics.ResultSuccess, 1},
		{"an invalid spec: forgotten until it changes, counted invalid", reconcile.Outcome{Requeue: reconcile.ForgetUntilSpecChanges, Err: errors.New("pools")}, metrics.ResultInvalid, 0},
		{"refused: no backoff step, back after the delay", reconcile.Outcome{Requeue: reconcile.AddAfter, After: time.Hour, Err: errors.New("no")}, metrics.ResultRejected, 0},
		{"unavailable: one backoff step", reconcile.Outcome{Requeue: reconcile.AddRateLimited, Err: errors.New("down")}, metrics.ResultError, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, newNetwork())
			f.reconciler.outcome = tc.outcome
			before := syncs(tc.wantResult)
			_, ctx := ktesting.NewTestContext(t)
			f.controller.workqueue.Add(netKey)
			f.controller.processNextWorkItem(ctx)
			if got := f.controller.workqueue.NumRequeues(netKey); got != tc.wantRequeues {
				t.Errorf("NumRequeues = %d, want %d", got, tc.wantRequeues)
			}
			if f.controller.workqueue.Len() != 0 {
				t.Error("the key was queued again at once")
			}
			if got := syncs(tc.wantResult) - before; got != 1 {
				t.Errorf("syncs_total{result=%q} rose by %v, want 1", tc.wantResult, got)
			}
		})
	}
}

// TestReadyKeepsItsTransitionTimeUntilItFlips checks that a status write
// that does not change Ready's status keeps lastTransitionTime.
func TestReadyKeepsItsTransitionTimeUntilItFlips(t *testing.T) {
	n := provisioned(newNetwork())
	n.Generation = 2
	f := newFixture(t, n)
	f.reconciler.outcome = ready()
	f.sync()
	cond := meta.FindStatusCondition(f.network().Status.Conditions, samplecrdv1.ConditionReady)
	if !cond.LastTransitionTime.Equal(&n.Status.Conditions[0].LastTransitionTime) {
		t.Errorf("lastTransitionTime moved from %v to %v while Ready stayed True", n.Status.Conditions[0].LastTransitionTime, cond.LastTransitionTime)
	}
	if cond.ObservedGeneration != 2 || f.network().Status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2", cond.ObservedGeneration)
	}
}

// queued drains c's queue, and returns its keys, sorted.
func queued(c *Controller) []string {
	var out []string
	for c.workqueue.Len() > 0 {
		key, _ := c.workqueue.Get()
		out = append(out, key.String())
		c.workqueue.Forget(key)
		c.workqueue.Done(key)
	}
	slices.Sort(out)
	return out
}

func TestNeedsSync(t *testing.T) {
	base := provisioned(newNetwork())
	base.ResourceVersion = "10"
	change := func(edit func(n *samplecrdv2.Network)) *samplecrdv2.Network {
		n := base.DeepCopy()
		n.ResourceVersion = "11"
		edit(n)
		return n
	}
	tests := []struct {
		name string
		new  *samplecrdv2.Network
		want bool
	}{
		{"a resync (same resourceVersion)", base.DeepCopy(), true},
		{"a spec change (new generation)", change(func(n *samplecrdv2.Network) { n.Generation++ }), true},
		// A v1 write that drops the annotation of the other subnets: the
		// API server compared v1's specs, equal, and kept the generation.
		{"a spec change with the same generation", change(func(n *samplecrdv2.Network) { n.Spec.Subnets = n.Spec.Subnets[:0] }), true},
		{"our finalizer taken away", change(func(n *samplecrdv2.Network) { n.Finalizers = nil }), true},
		{"the start of a deletion", change(func(n *samplecrdv2.Network) { deleting(n) }), true},
		{"our own status write", change(func(n *samplecrdv2.Network) { n.Status.NetworkID = "x" }), false},
		{"a label change", change(func(n *samplecrdv2.Network) { n.Labels = map[string]string{"a": "b"} }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsSync(base, tc.new); got != tc.want {
				t.Errorf("needsSync = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCacheKeepsOnlyWhatTheControllerReads(t *testing.T) {
	n := newNetwork()
	n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	n.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}", "team": "net"}
	out, err := stripForCache(n)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*samplecrdv2.Network)
	if got.ManagedFields != nil || got.Annotations["kubectl.kubernetes.io/last-applied-configuration"] != "" {
		t.Errorf("managedFields %v and annotations %v survived the transform", got.ManagedFields, got.Annotations)
	}
	if got.Annotations["team"] != "net" || len(got.Spec.Subnets) != 1 || got.Spec.Subnets[0].CIDR != "192.168.0.0/16" {
		t.Errorf("the transform dropped what the controller reads: %+v", got)
	}
}

// TestKstatusConditionsFollowReady: while Ready is False, exactly one of
// kstatus's Reconciling (the controller gets past it by itself) and
// Stalled (someone must act) is True, with Ready's reason and message;
// once Ready, neither is left.
func TestKstatusConditionsFollowReady(t *testing.T) {
	notReady := func(reason string, requeue reconcile.Requeue) reconcile.Outcome {
		c := metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: "because"}
		return reconcile.Outcome{Condition: &c, Requeue: requeue, Err: errors.New(reason)}
	}
	f := newFixture(t, provisioned(newNetwork()))
	for _, step := range []struct {
		outcome reconcile.Outcome
		want    []string // condition type=status reason, Ready first
	}{
		{down(), []string{"Ready=False NeutronUnavailable", "Reconciling=True NeutronUnavailable"}},
		{notReady(samplecrdv1.ReasonInvalidSpec, reconcile.ForgetUntilSpecChanges), []string{"Ready=False InvalidSpec", "Stalled=True InvalidSpec"}},
		{notReady(samplecrdv1.ReasonNeutronQuotaExceeded, reconcile.AddRateLimited), []string{"Ready=False NeutronQuotaExceeded", "Stalled=True NeutronQuotaExceeded"}},
		{notReady(samplecrdv1.ReasonProvisioning, reconcile.AddRateLimited), []string{"Ready=False Provisioning", "Reconciling=True Provisioning"}},
		{ready(), []string{"Ready=True Provisioned"}},
	} {
		f.reconciler.outcome = step.outcome
		f.sync()
		f.catchUp()
		var got []string
		for _, c := range f.network().Status.Conditions {
			got = append(got, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason))
			if c.Type != samplecrdv1.ConditionReady && c.Message != "because" && c.Message != downCondition.Message {
				t.Errorf("%s says %q, not Ready's message", c.Type, c.Message)
			}
		}
		if !slices.Equal(got, step.want) {
			t.Errorf("after a pass with Ready reason %s: conditions %v, want %v", step.outcome.Condition.Reason, got, step.want)
		}
	}
}

// TestAStatusWithoutItsKstatusConditionGetsIt: a Network written by a
// controller from before the kstatus conditions, failing for the same
// reason as now, gets its Reconciling condition at the next pass.
func TestAStatusWithoutItsKstatusConditionGetsIt(t *testing.T) {
	n := provisioned(newNetwork())
	n.Status.Conditions = []metav1.Condition{withGeneration(downCondition, 1)}
	f := newFixture(t, n)
	f.reconciler.outcome = down()
	f.sync()
	if c := meta.FindStatusCondition(f.network().Status.Conditions, samplecrdv1.ConditionReconciling); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("conditions %+v: want Reconciling=True beside Ready", f.network().Status.Conditions)
	}
}

// publishing is a provisioned Network that publishes into ConfigMap name.
func publishing(name string) *samplecrdv2.Network {
	n := provisioned(newNetwork())
	n.Spec.WriteConfigMapToRef = &samplecrdv2.ConfigMapReference{Name: name}
	return n
}

// configMap is a ConfigMap of default holding data, controlled by owner
// when it is not nil.
func configMap(name string, owner *samplecrdv2.Network, data map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("cm-" + name), ResourceVersion: "1"}, Data: data}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, samplecrdv1.SchemeGroupVersion.WithKind("Network"))}
		cm.Labels = map[string]string{configmap.ManagedByLabel: configmap.ManagedBy}
	}
	return cm
}

// unmarked is cm without the controller's mark: a tenant's ConfigMap
// that names a Network as its controller, or one whose mark was removed.
func unmarked(cm *corev1.ConfigMap) *corev1.ConfigMap {
	cm.Labels = nil
	return cm
}

// published is what a Network publishes for observed.
var published = map[string]string{"NETWORK_ID": "net-1", "SUBNET_ID": "subnet-2", "PROJECT_ID": "", "CIDR": "192.168.0.0/16", "GATEWAY": "192.168.0.1", "MTU": "1442"}

// kubeWrites returns the writes to the core API, as "verb resource/name".
func (f *fixture) kubeWrites() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		switch a.GetVerb() {
		case "create", "update":
			out = append(out, a.GetVerb()+" configmaps/"+a.(core.CreateAction).GetObject().(*corev1.ConfigMap).Name)
		case "delete":
			out = append(out, "delete configmaps/"+a.(core.DeleteAction).GetName())
		}
	}
	return out
}

// TestTheOwnedConfigMap is the specification of the object a Network owns
// (spec.writeConfigMapToRef): created with the Network as its controller,
// repaired when edited, never written when someone else's, deleted when
// no longer named.
func TestTheOwnedConfigMap(t *testing.T) {
	n := publishing("net-info")
	tests := []struct {
		name       string
		network    *samplecrdv2.Network
		existing   []*corev1.ConfigMap
		outcome    reconcile.Outcome
		wantWrites []string
		wantData   map[string]map[string]string // by ConfigMap name; nil: does not exist
		wantEvents []string
		wantErr    bool
	}{
		{
			name:       "missing: created with what Neutron holds",
			network:    n,
			outcome:    ready(),
			wantWrites: []string{"create configmaps/net-info"},
			wantData:   map[string]map[string]string{"net-info": published},
		},
		{
			name:     "in sync: nothing written",
			network:  n,
			existing: []*corev1.ConfigMap{configMap("net-info", n, published)},
			outcome:  ready(),
			wantData: map[string]map[string]string{"net-info": published},
		},
		{
			name:       "edited by hand: repaired, the extra key gone",
			network:    n,
			existing:   []*corev1.ConfigMap{configMap("net-info", n, map[string]string{"NETWORK_ID": "forged", "EXTRA": "x"})},
			outcome:    ready(),
			wantWrites: []string{"update configmaps/net-info"},
			wantData:   map[string]map[string]string{"net-info": published},
		},
		{
			name:       "someone else's of that name: left as it is, a Warning, retried",
			network:    n,
			existing:   []*corev1.ConfigMap{configMap("net-info", nil, map[string]string{"theirs": "yes"})},
			outcome:    ready(),
			wantData:   map[string]map[string]string{"net-info": {"theirs": "yes"}},
			wantEvents: []string{"Warning ConfigMapNotControlled"},
			wantErr:    true,
		},
		{
			name:       "controlled by the Network, without the mark (a tenant's, or the mark removed; not in the cache): repaired, the mark put back",
			network:    n,
			existing:   []*corev1.ConfigMap{unmarked(configMap("net-info", n, map[string]string{"theirs": "yes"}))},
			outcome:    ready(),
			wantWrites: []string{"update configmaps/net-info"},
			wantData:   map[string]map[string]string{"net-info": published},
		},
		{
			name:    "controlled by another Network of that name (another UID): left as it is",
			network: n,
			existing: []*corev1.ConfigMap{configMap("net-info", func() *samplecrdv2.Network {
				o := newNetwork()
				o.UID = "00000000-0000-4000-8000-0000000000ff"
				return o
			}(), map[string]string{"NETWORK_ID": "old"})},
			outcome:    ready(),
			wantData:   map[string]map[string]string{"net-info": {"NETWORK_ID": "old"}},
			wantEvents: []string{"Warning ConfigMapNotControlled"},
			wantErr:    true,
		},
		{
			name:       "renamed: the old one deleted, the new one created",
			network:    n,
			existing:   []*corev1.ConfigMap{configMap("old-info", n, published)},
			outcome:    ready(),
			wantWrites: []string{"delete configmaps/old-info", "create configmaps/net-info"},
			wantData:   map[string]map[string]string{"net-info": published, "old-info": nil},
		},
		{
			name:       "no longer named: deleted; another's of the namespace untouched",
			network:    provisioned(newNetwork()),
			existing:   []*corev1.ConfigMap{configMap("net-info", n, published), configMap("other", nil, map[string]string{"a": "b"})},
			outcome:    ready(),
			wantWrites: []string{"delete configmaps/net-info"},
			wantData:   map[string]map[string]string{"net-info": nil, "other": {"a": "b"}},
		},
		{
			name:     "no subnet yet: nothing to publish",
			network:  publishing("net-info"),
			outcome:  reconcile.Outcome{Condition: &downCondition, Requeue: reconcile.AddRateLimited, Err: errors.New("down")},
			wantData: map[string]map[string]string{"net-info": nil},
			wantErr:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.network)
			for _, cm := range tt.existing {
				f.addConfigMap(cm)
			}
			f.reconciler.outcome = tt.outcome
			res := f.sync()
			if got := f.kubeWrites(); !slices.Equal(got, tt.wantWrites) {
				t.Errorf("writes = %q, want %q", got, tt.wantWrites)
			}
			for name, want := range tt.wantData {
				cm, err := f.kube.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
				switch {
				case want == nil && err == nil:
					t.Errorf("ConfigMap %s exists, want none", name)
				case want != nil && err != nil:
					t.Errorf("ConfigMap %s: %v", name, err)
				case want != nil && !maps.Equal(cm.Data, want):
					t.Errorf("ConfigMap %s holds %v, want %v", name, cm.Data, want)
				case want != nil && name == "net-info" && len(tt.existing) == 0 && !metav1.IsControlledBy(cm, tt.network):
					t.Errorf("ConfigMap %s is not controlled by the Network: %+v", name, cm.OwnerReferences)
				case want != nil && metav1.IsControlledBy(cm, tt.network) && !configmap.Selector().Matches(labels.Set(cm.Labels)):
					t.Errorf("ConfigMap %s has labels %v: the controller's informer does not see it", name, cm.Labels)
				}
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events = %q, want %q", got, tt.wantEvents)
			}
			if (res.err != nil) != tt.wantErr {
				t.Errorf("err = %v, want an error: %v", res.err, tt.wantErr)
			}
		})
	}
}

// TestHandleObjectQueuesOnlyTheControllingNetwork: a ConfigMap's change
// queues the Network that controls it, and nothing for a ConfigMap that
// no Network controls or whose Network (by UID) is gone.
func TestHandleObjectQueuesOnlyTheControllingNetwork(t *testing.T) {
	n := publishing("net-info")
	replaced := newNetwork()
	replaced.UID = "00000000-0000-4000-8000-0000000000ff"
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{"controlled by the Network", configMap("net-info", n, nil), []string{"default/net"}},
		{"a tombstone of one", cache.DeletedFinalStateUnknown{Key: "default/net-info", Obj: configMap("net-info", n, nil)}, []string{"default/net"}},
		{"controlled by no one", configMap("net-info", nil, nil), nil},
		{"controlled by a Network of that name that was replaced", configMap("net-info", replaced, nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, n)
			f.controller.handleObject(tt.obj)
			if got := queued(f.controller); !slices.Equal(got, tt.want) {
				t.Errorf("queued %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOneNamespacesBacklogDoesNotDelayAnother: every key an informer
// adds (a Network made or changed, the --resync-period resync of every
// Network, a TenantPolicy's change, a project's first list) is queued,
// whatever its namespace; with one FIFO, a namespace that holds 10,000
// Networks put 10,000 keys ahead of every other namespace's at each
// resync. Its syncs are not free (a credential taking turns past
// --max-cloud-credentials-per-namespace is read, authenticated at
// Keystone and kept again at each of them), so another namespace's new
// Network waited for all of them, on the workers every namespace shares.
// The e2e test of fairness fails its Networks, so their retries go
// through the fair limiter; added keys never do.
//
// The guarantee: the workers take keys from the namespaces with keys
// waiting in turn (fairqueue.Queue, a FIFO per namespace served round
// robin, as API Priority and Fairness does with its queues), so that a
// namespace's key waits behind at most one key of each other namespace,
// however many that namespace queued. With client-go's default queue
// underneath (one FIFO), the victim's key comes after all 1,000.
func TestOneNamespacesBacklogDoesNotDelayAnother(t *testing.T) {
	f := newFixture(t)
	q := f.controller.workqueue
	defer q.ShutDown()
	const backlog = 1000
	for i := range backlog {
		q.Add(cache.ObjectName{Namespace: "attacker", Name: fmt.Sprintf("n%d", i)})
	}
	victim := cache.ObjectName{Namespace: "victim", Name: "net"}
	q.Add(victim)
	for handed := 0; handed <= backlog; handed++ {
		key, _ := q.Get()
		q.Done(key)
		if key == victim {
			if handed > 1 {
				t.Errorf("the victim's key was handed out after %d keys of the attacker's namespace, want at most 1", handed)
			}
			return
		}
	}
	t.Fatal("the victim's key was never handed out")
}

// oneProject hands every Network the one real reconciler: pkg/controller/reconcile
// over the fake Neutron, writing to the fixture's fake clientset, so that a
// test follows a Network through the queue as the controller runs it.
type oneProject struct{ r *reconcile.Reconciler }

func (p oneProject) Start(context.Context, func(any)) error { return nil }

func (p oneProject) For(context.Context, *samplecrdv2.Network) (Reconciler, error) { return p.r, nil }

// TestANewNetworkIsReadyAfterOneTripThroughTheQueue: a new Network's
// place (and an adoption's names) is stored in status by the pass that
// makes (or marks) its network, before it does, not by a pass of its own:
// one Get from the queue makes it Ready, and the key is not requeued (no
// step of the queue's rate limiter). A record the API server refuses
// makes nothing in Neutron and is retried with backoff.
func TestANewNetworkIsReadyAfterOneTripThroughTheQueue(t *testing.T) {
	inKeystone := func(f *neutronfake.Neutron) { f.SetProject("project-a"); f.SetRegion("region-1") }
	handmade := func(f *neutronfake.Neutron) {
		inKeystone(f)
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
	}
	adopting := func(n *samplecrdv2.Network) *samplecrdv2.Network {
		n.Spec.Adopt = &samplecrdv2.Adoption{NetworkID: "net-1"} // the fake's first ID
		return n
	}
	const (
		finalizer = "apply networks"
		status    = "apply networks/status"
	)
	tests := []struct {
		name    string
		network *samplecrdv2.Network
		seed    func(*neutronfake.Neutron)
		// recordFault is the API server's answer to the pass's record.
		recordFault error
		// wantReady is "Status/Reason" after the one trip.
		wantReady    string
		wantRequeues int
		// wantNeutron are the writes Neutron received, in order.
		wantNeutron []string
		// wantAPI are the API server writes, in order.
		wantAPI []string
	}{
		{
			name: "through Keystone: the place stored, the network and subnet made, Ready; no requeue", network: newNetwork(), seed: inKeystone,
			wantReady: "True/Provisioned", wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantAPI: []string{finalizer, status, status},
		},
		{
			name: "a Neutron without Keystone: no place to store, made, Ready; no requeue", network: newNetwork(),
			wantReady: "True/Provisioned", wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantAPI: []string{finalizer, status},
		},
		{
			name: "an adoption: the place and the names stored, then marked, Ready; no requeue", network: adopting(newNetwork()), seed: handmade,
			wantReady: "True/Provisioned", wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantAPI: []string{finalizer, status, status, status},
		},
		{
			name: "the place write fails: nothing made in Neutron, Provisioning, one backoff step", network: newNetwork(), seed: inKeystone,
			recordFault: apierrors.NewServiceUnavailable("etcd is down"),
			wantReady:   "False/Provisioning", wantRequeues: 1, wantNeutron: nil,
			wantAPI: []string{finalizer, status, status},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.network)
			fakeNeutron := neutronfake.New()
			if tc.seed != nil {
				tc.seed(fakeNeutron)
			}
			mark, err := neutron.NewMark("test-cluster", types.UID("c1c1c1c1-0000-4000-8000-0000000000c1"))
			if err != nil {
				t.Fatal(err)
			}
			inv := inventory.New(fakeNeutron, mark, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour})
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			f.controller.projects = oneProject{r: reconcile.New(inv, mark, reconcile.Options{Records: reconcile.ApplyRecord{Client: f.client}})}
			f.client.PrependReactor("patch", "networks", func(action core.Action) (bool, runtime.Object, error) {
				patch, ok := action.(core.PatchActionImpl)
				if ok && tc.recordFault != nil && patch.GetSubresource() == "status" && patch.PatchOptions.FieldManager == reconcile.RecordFieldManager {
					return true, nil, tc.recordFault
				}
				return false, nil, nil
			})
			fakeNeutron.ClearRequests()
			f.client.ClearActions()

			f.controller.workqueue.Add(netKey)
			f.controller.processNextWorkItem(ctx)

			cond := meta.FindStatusCondition(f.network().Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil {
				t.Fatalf("no Ready condition after one trip, want %s", tc.wantReady)
			}
			if got := string(cond.Status) + "/" + cond.Reason; got != tc.wantReady {
				t.Errorf("Ready after one trip = %s (%s), want %s", got, cond.Message, tc.wantReady)
			}
			if got := f.controller.workqueue.NumRequeues(netKey); got != tc.wantRequeues {
				t.Errorf("requeues = %d, want %d", got, tc.wantRequeues)
			}
			if tc.wantRequeues == 0 && f.controller.workqueue.Len() != 0 {
				t.Error("the key is back in the queue")
			}
			var writes []string
			for _, req := range fakeNeutron.Requests() {
				if strings.HasPrefix(req, "create-") || strings.HasPrefix(req, "update-") || strings.HasPrefix(req, "delete-") {
					writes = append(writes, req)
				}
			}
			if !slices.Equal(writes, tc.wantNeutron) {
				t.Errorf("Neutron writes = %q, want %q", writes, tc.wantNeutron)
			}
			if got := f.writes(); !slices.Equal(got, tc.wantAPI) {
				t.Errorf("API server writes = %q, want %q", got, tc.wantAPI)
			}
		})
	}
}
