package tenancy

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/collector"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

var ours = func() neutron.Mark {
	m, err := neutron.NewMark("test-cluster", "c1c1c1c1-0000-4000-8000-0000000000c1")
	if err != nil {
		panic(err)
	}
	return m
}()

// idle is the own project's Reconciler, which no test of the Set asks
// anything of.
type idle struct{ Reconciler }

// heldOwn holds the own project, and records the keys released.
type heldOwn struct {
	own      *Project
	mu       sync.Mutex
	released []Key
}

// releasedKeys are the keys released so far.
func (r *heldOwn) releasedKeys() []Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.released)
}

func (r *heldOwn) Start(ctx context.Context, start StartFunc) {
	start(ctx, Key{}, r.own)
}
func (r *heldOwn) For(context.Context, *samplecrdv2.Network) (*Project, error) { return r.own, nil }
func (r *heldOwn) Get(key Key) (*Project, bool)                                { return r.own, key == (Key{}) }
func (r *heldOwn) Own() *Project                                               { return r.own }
func (r *heldOwn) Release(_ context.Context, key Key) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = append(r.released, key)
	return nil
}

// setFixture is a Set over a fake clientset's informer, the fake Neutron and
// the own project's garbage collection; queued collects what it queues.
type setFixture struct {
	set        *Set
	neutron    *neutronfake.Neutron
	reconciler *idle
	registry   *heldOwn
	informer   cache.SharedIndexInformer
	client     *fake.Clientset
	queued     []string
}

func newSetFixture(t *testing.T, networks ...*samplecrdv2.Network) *setFixture {
	t.Helper()
	f := &setFixture{neutron: neutronfake.New(), reconciler: &idle{}, client: fake.NewClientset()}
	inv := inventory.New(f.neutron, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour})
	f.registry = &heldOwn{own: &Project{Inventory: inv, Reconciler: f.reconciler,
		Orphans: collector.NewOrphans(inv, collector.Config{Mark: ours, Networks: f.client, Enabled: true, MaxPerList: 50})}}
	factory := informers.NewSharedInformerFactory(f.client, 0)
	nets := factory.Samplecrd().V2().Networks()
	set, err := newSet(nets, f.registry, nil, setOptions{Recorder: record.NewFakeRecorder(10), MaxRetryDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.set, f.informer = set, nets.Informer()
	for _, n := range networks {
		if err := f.informer.GetIndexer().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	set.enqueue = func(obj any) {
		f.queued = append(f.queued, cache.MetaObjectToName(obj.(*samplecrdv2.Network)).String())
	}
	return f
}

// drain returns what was queued, sorted, and forgets it.
func (f *setFixture) drain() []string {
	out := f.queued
	f.queued = nil
	slices.Sort(out)
	return out
}

func setNetwork(name, uid string, creds bool) *samplecrdv2.Network {
	n := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)}}
	if creds {
		n.Spec.CloudCredentialsRef = &samplecrdv2.CloudCredentialsReference{SecretName: "cloud", CloudName: "team"}
	}
	return n
}

// TestAListOfNeutronQueuesWhatChangedAndWhatIsOrphaned: the handler of a
// list queues the Networks whose resources changed behind our back, every
// Network when Neutron answers again or the project's quota crossed into
// or out of nearly full, and hands the garbage collector the
// UIDs without a Network in the cache, which it sights and queues.
func TestAListOfNeutronQueuesWhatChangedAndWhatIsOrphaned(t *testing.T) {
	const gone = types.UID("9e9e9e9e-0000-4000-8000-000000000009")
	net := setNetwork("net", "1c2d3e4f-0000-0000-0000-000000000001", false)
	f := newSetFixture(t, net, setNetwork("other", "0f0f0f0f-0000-4000-8000-00000000000f", false))
	for _, o := range []neutron.Owner{reconcile.OwnerOf(net), {Namespace: "default", Name: "gone", UID: gone}} {
		f.neutron.AddNetwork(ours.ResourceName(o), ours.Description())
	}
	_, ctx := ktesting.NewTestContext(t)

	listed, err := f.set.Own().Inventory.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.set.onNeutronListed(ctx, f.set.Own(), listed)
	if got := f.drain(); !slices.Equal(got, []string{"default/net"}) {
		t.Errorf("queued %q, want the changed Network", got)
	}
	// Both UIDs carry our mark in a namespace in scope: the collector
	// would queue either it was given, so one queued means it was given
	// only the one without a Network in the cache.
	if n := f.set.collector.Len(); n != 1 {
		t.Errorf("%d orphans handed to the garbage collector, want only %s, the one without a Network", n, gone)
	}

	f.set.onNeutronListed(ctx, f.set.Own(), inventory.Listed{Recovered: true})
	if got := f.drain(); !slices.Equal(got, []string{"default/net", "default/other"}) {
		t.Errorf("queued %q after Neutron recovered, want every Network", got)
	}
	f.set.onNeutronListed(ctx, f.set.Own(), inventory.Listed{QuotaChanged: true})
	if got := f.drain(); !slices.Equal(got, []string{"default/net", "default/other"}) {
		t.Errorf("queued %q after the project's quota changed, want every Network of the project", got)
	}
}

// TestADeletedNetworkIsHandedToTheGarbageCollector: the informer's delete
// event queues the Network's UID for collection, in case its finalizer was
// removed by hand and something of it remains in Neutron.
func TestADeletedNetworkIsHandedToTheGarbageCollector(t *testing.T) {
	f := newSetFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.informer.RunWithContext(ctx)
	n := setNetwork("net", "1c2d3e4f-0000-0000-0000-000000000001", false)
	if _, err := f.client.SamplecrdV2().Networks("default").Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), f.informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, ok := f.set.networkByUID(n.UID)
		return ok, nil
	}); err != nil {
		t.Fatalf("the Network never reached the cache: %v", err)
	}
	if err := f.client.SamplecrdV2().Networks("default").Delete(ctx, "net", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return f.set.collector.Len() == 1, nil
	}); err != nil {
		t.Errorf("the deleted Network's UID never reached the garbage collector's queue: %v", err)
	}
}

// TestCredentialsAreReleasedWithTheLastNetworkNamingThem: a namespace's
// credentials are let go when the informer sees the last Network that
// names them go, whichever way it went (through the controller's
// finalizer, before it had one, its finalizer removed by a person, its
// namespace deleted: the informer sees a delete each time); never while
// another names them, and never the controller's own. Two Networks that
// go together release them, whatever order their events come in (both
// handlers may find the other gone: a release is idempotent).
func TestCredentialsAreReleasedWithTheLastNetworkNamingThem(t *testing.T) {
	cases := []struct {
		name string
		// deleted are deleted from the API server in this order.
		deleted      []string
		wantReleased bool
	}{
		{name: "the controller's own credentials are never released", deleted: []string{"plain"}},
		{name: "one of two Networks naming them gone: kept", deleted: []string{"first"}},
		{name: "both gone, one after the other: released", deleted: []string{"first", "second"}, wantReleased: true},
		{name: "both gone, the other order: released", deleted: []string{"second", "first"}, wantReleased: true},
		{name: "all three gone: released", deleted: []string{"plain", "second", "first"}, wantReleased: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newSetFixture(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go f.informer.RunWithContext(ctx)
			for _, n := range []*samplecrdv2.Network{
				setNetwork("first", "00000000-0000-4000-8000-000000000001", true),
				setNetwork("second", "00000000-0000-4000-8000-000000000002", true),
				setNetwork("plain", "00000000-0000-4000-8000-000000000003", false),
			} {
				if _, err := f.client.SamplecrdV2().Networks("default").Create(ctx, n, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			waitForCached(ctx, t, f, 3)
			for _, name := range tc.deleted {
				if err := f.client.SamplecrdV2().Networks("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			waitForCached(ctx, t, f, 3-len(tc.deleted))
			// The collector is handed every deleted Network by the same
			// handler, after the release: once it holds them all, every
			// release has run.
			if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				return f.set.collector.Len() == len(tc.deleted), nil
			}); err != nil {
				t.Fatalf("the delete handler did not run for every deleted Network: %v", err)
			}
			released := f.registry.releasedKeys()
			team := Key{Namespace: "default", Secret: "cloud", Cloud: "team"}
			if (len(released) > 0) != tc.wantReleased || slices.ContainsFunc(released, func(k Key) bool { return k != team }) {
				t.Errorf("released %v; want the team's credentials released: %v, and nothing else", released, tc.wantReleased)
			}
		})
	}
}

// waitForCached waits until the informer's cache holds n Networks.
func waitForCached(ctx context.Context, t *testing.T, f *setFixture, n int) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(f.informer.GetStore().List()) == n, nil
	}); err != nil {
		t.Fatalf("the cache never held %d Networks: %v", n, err)
	}
}

// refusing is a Policy that refuses every Network.
type refusing struct{}

func (refusing) Check(n *samplecrdv2.Network) error {
	return &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: "namespace " + n.Namespace + " is granted nothing"}
}
func (refusing) HasSynced() bool             { return true }
func (refusing) OnChange(func(string)) error { return nil }

// TestPolicyIsAskedBeforeTheProjectButNeverOfADeletion: a Network its
// namespace may not have gets the policy's refusal and no project; one
// being deleted gets its project whatever the policy says, since what a
// Network made it may always remove.
func TestPolicyIsAskedBeforeTheProjectButNeverOfADeletion(t *testing.T) {
	f := newSetFixture(t)
	f.set.policy = refusing{}
	_, ctx := ktesting.NewTestContext(t)
	live := setNetwork("net", "1c2d3e4f-0000-0000-0000-000000000001", false)
	if r, err := f.set.For(ctx, live); !reconcile.IsNotAllowed(err) || r != nil {
		t.Errorf("For(a live Network its namespace may not have) = %v, %v; want no reconciler and NotAllowed", r, err)
	}
	deleting := live.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if r, err := f.set.For(ctx, deleting); err != nil || r != f.reconciler {
		t.Errorf("For(a Network being deleted) = %v, %v; want its project's reconciler", r, err)
	}
}

// recording is a Reconciler that records the spec.router of the Network
// each pass was asked of, and answers Ready with what it was told.
type recording struct {
	Reconciler
	routers []*samplecrdv2.RouterReference
	out     reconcile.Outcome
}

func (r *recording) Preflight(n *samplecrdv2.Network) (reconcile.Outcome, bool) {
	return reconcile.Outcome{}, true
}

func (r *recording) Reconcile(_ context.Context, n *samplecrdv2.Network) reconcile.Outcome {
	r.routers = append(r.routers, n.Spec.Router)
	return r.out
}

// routerRefused is a Policy that refuses spec.router; everything when
// all is set; and, when capped, a Network without a router too, as a
// namespace's cap (maxNetworks) does.
type routerRefused struct{ all, capped bool }

func (p routerRefused) Check(n *samplecrdv2.Network) error {
	switch {
	case p.all:
		return &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: "not granted"}
	case n.Spec.Router != nil:
		return &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: "router not granted", Router: true}
	case p.capped:
		return &reconcile.NotAllowedError{Reason: samplecrdv1.ReasonNotAllowed, Message: "over the namespace's cap"}
	}
	return nil
}
func (routerRefused) HasSynced() bool             { return true }
func (routerRefused) OnChange(func(string)) error { return nil }

// TestAWithdrawnRouterGrantDetaches: a grant holds for as long as it is
// used. A Network attached to a router whose grant is withdrawn is synced
// without its router (so its interface is detached, and its network and
// subnet kept) and then reports the refusal; one attached to nothing is
// refused before anything, as before; any other refusal refuses, one of
// the Network without its router too (its namespace's cap): the detach is
// a sync, which may remake what is missing.
func TestAWithdrawnRouterGrantDetaches(t *testing.T) {
	attached := func() *samplecrdv2.Network {
		n := setNetwork("net", "1c2d3e4f-0000-0000-0000-000000000001", false)
		n.Spec.Router = &samplecrdv2.RouterReference{Name: "shared-router"}
		n.Status.Router = &samplecrdv2.RouterStatus{ID: "router-1"}
		n.Status.Subnets = []samplecrdv2.SubnetStatus{{CIDR: "10.0.0.0/24", ID: "subnet-1", RouterInterface: &samplecrdv2.RouterInterfaceStatus{PortID: "port-1"}}}
		return n
	}
	notAttached := func() *samplecrdv2.Network { n := attached(); n.Status.Router = nil; return n }
	cases := []struct {
		name       string
		network    *samplecrdv2.Network
		policy     checker
		passOK     bool
		wantPass   bool
		wantReason string
	}{
		{name: "attached, the router's grant withdrawn: synced without its router, then NotAllowed",
			network: attached(), policy: routerRefused{}, passOK: true, wantPass: true, wantReason: samplecrdv1.ReasonNotAllowed},
		{name: "attached, the detach failed: the pass's own failure is reported",
			network: attached(), policy: routerRefused{}, passOK: false, wantPass: true, wantReason: samplecrdv1.ReasonNeutronUnavailable},
		{name: "attached to nothing: refused before any pass",
			network: notAttached(), policy: routerRefused{}, wantReason: samplecrdv1.ReasonNotAllowed},
		{name: "attached, but refused for something else: refused before any pass",
			network: attached(), policy: routerRefused{all: true}, wantReason: samplecrdv1.ReasonNotAllowed},
		{name: "attached, the router's grant withdrawn, and past its namespace's cap: refused before any pass (a detach may make nothing)",
			network: attached(), policy: routerRefused{capped: true}, wantReason: samplecrdv1.ReasonNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newSetFixture(t)
			rec := &recording{}
			f.registry.own.Reconciler = rec
			f.set.policy = tc.policy
			rec.out = reconcile.Outcome{Condition: &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionTrue, Reason: samplecrdv1.ReasonProvisioned}}
			if !tc.passOK {
				rec.out = reconcile.Outcome{Condition: &metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: samplecrdv1.ReasonNeutronUnavailable}}
			}
			_, ctx := ktesting.NewTestContext(t)
			r, err := f.set.For(ctx, tc.network)
			var out reconcile.Outcome
			switch {
			case err != nil:
				out, _ = reconcile.ProjectRefused(tc.network, err)
			case r == nil:
				t.Fatal("no reconciler and no error")
			default:
				if _, ok := r.Preflight(tc.network); !ok {
					t.Fatal("Preflight refused")
				}
				out = r.Reconcile(ctx, tc.network)
			}
			if tc.wantPass != (len(rec.routers) == 1) || (tc.wantPass && rec.routers[0] != nil) {
				t.Errorf("passes asked with spec.router %v; want a pass without its router: %v", rec.routers, tc.wantPass)
			}
			if out.Condition == nil || out.Condition.Reason != tc.wantReason {
				t.Errorf("condition %+v, want reason %s", out.Condition, tc.wantReason)
			}
			if tc.network.Spec.Router == nil {
				t.Error("the Network in the cache lost its spec.router")
			}
		})
	}
}
