package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
)

// fixture is one Reconciler over the fake Neutron and a fake clientset
// that holds the Networks. Its sync does what the controller's syncHandler
// does with an Outcome (status, finalizer, Events), so that a test reads
// as the story of a Network across passes: the status through the same
// StatusApply and server-side apply as the controller's applyStatus, so
// that the two cannot drift apart.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	client  *fake.Clientset
	neutron *neutronfake.Neutron
	inv     *inventory.Inventory
	r       *Reconciler
	// clock is the inventory's, when the test gave none.
	clock *clocktesting.FakeClock
	// events are the Events of every pass, as "Type Reason".
	events []string
	// fenced, when set, is the inventory's fence's refusal: this replica
	// cannot prove it still leads.
	fenced error
	// records are the Neutron requests sent before each record (status.place,
	// status.adopted) reached the API server, one list per record write.
	records [][]string
	// recordFault, when set, is the API server's answer to every record
	// write, and nothing is stored.
	recordFault error
}

// The fixture's reconciler is this cluster's; otherCluster shares its
// Neutron project.
var (
	ours         = mustMark("test-cluster", testClusterUID)
	otherCluster = mustMark("other-cluster", otherClusterUID)
)

// The UIDs of this cluster's kube-system namespace and another's.
const (
	testClusterUID  = types.UID("c1c1c1c1-0000-4000-8000-0000000000c1")
	otherClusterUID = types.UID("c2c2c2c2-0000-4000-8000-0000000000c2")
)

func mustMark(cluster string, clusterUID types.UID) neutron.Mark {
	m, err := neutron.NewMark(cluster, clusterUID)
	if err != nil {
		panic(err)
	}
	return m
}

// defaultOptions are the fixture's: no adoption grants.
func defaultOptions() Options {
	return Options{}
}

func newFixture(t *testing.T, network *samplecrdv1.Network, seed func(*neutronfake.Neutron)) *fixture {
	t.Helper()
	var networks []*samplecrdv1.Network
	if network != nil {
		networks = append(networks, network)
	}
	return newFixtureWith(t, defaultOptions(), nil, networks, seed)
}

// newFixtureWith is newFixture with options and a clock (nil: a fake one,
// f.clock, that only the test moves).
func newFixtureWith(t *testing.T, opts Options, clk clock.WithTicker, networks []*samplecrdv1.Network, seed func(*neutronfake.Neutron)) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, neutron: neutronfake.New()}
	if seed != nil {
		seed(f.neutron)
	}
	var objects []runtime.Object
	for _, n := range networks {
		// The status goes in as the controller's apply (seedStatus), not
		// as the creator's: only then does an apply that leaves a field
		// out remove it.
		bare := toV2(t, n)
		bare.Status = samplecrdv2.NetworkStatus{}
		objects = append(objects, bare)
	}
	f.client = fake.NewClientset(objects...)
	f.client.PrependReactor("patch", "networks", f.watchRecords)
	for _, n := range networks {
		f.seedStatus(n)
	}
	if clk == nil {
		// A clock the test moves: a lost answer settles only with a list
		// begun LateCompletionGrace after it (listAfterTheGrace).
		f.clock = clocktesting.NewFakeClock(time.Now())
		clk = f.clock
	}
	f.connect(f.neutron, opts, clk)
	if err := f.inv.Health().Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

// connect builds the inventory and the reconciler over client, and lists
// Neutron once, as the controller does before its workers start. The
// list's requests are not part of any test.
func (f *fixture) connect(client neutron.Interface, opts Options, clk clock.WithTicker) {
	f.t.Helper()
	if clk == nil && f.clock != nil {
		clk = f.clock
	}
	f.inv = inventory.New(client, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: clk,
		Fence: func() error { return f.fenced }})
	if opts.Records == nil {
		opts.Records = ApplyRecord{Client: f.client}
	}
	f.r = New(f.inv, ours, opts)
	f.list()
	f.neutron.ClearRequests()
	f.client.ClearActions()
}

// listAfterTheGrace moves the fixture's clock past LateCompletionGrace and
// lists Neutron: the list the inventory asks for after a lost answer,
// which shows what the lost request did.
func (f *fixture) listAfterTheGrace() {
	f.t.Helper()
	f.clock.Step(time.Hour)
	f.list()
}

// list lists Neutron, as the project's list loop does.
func (f *fixture) list() {
	f.t.Helper()
	_, _ = f.inv.Refresh(f.ctx) // on failure, the inventory's health says why
}

// watchRecords is the fake API server's first reactor to a patch: a
// record write (the pass's own, as RecordFieldManager) notes what Neutron
// had been asked by then, and fails with recordFault if that is set.
func (f *fixture) watchRecords(action k8stesting.Action) (bool, runtime.Object, error) {
	patch, ok := action.(k8stesting.PatchActionImpl)
	if !ok || patch.GetSubresource() != "status" || patch.PatchOptions.FieldManager != RecordFieldManager {
		return false, nil, nil
	}
	f.records = append(f.records, f.neutron.Requests())
	if f.recordFault != nil {
		return true, nil, f.recordFault
	}
	return false, nil, nil
}

// sync runs one pass for the Network default/name.
func (f *fixture) sync(name string) Outcome { return f.syncIn("default", name) }

// syncIn runs one pass for the Network namespace/name and writes down its
// Outcome: the finalizer, status, and the Events.
func (f *fixture) syncIn(namespace, name string) Outcome {
	f.t.Helper()
	network := f.storedIn(namespace, name)
	var out Outcome
	if network.DeletionTimestamp != nil {
		out = f.r.Delete(f.ctx, network)
		if out.Finalized {
			network.Finalizers = nil
			network = f.updateV2(network)
		}
	} else {
		var ok bool
		if out, ok = f.r.Preflight(network); ok {
			network.Finalizers = []string{samplecrdv1.NetworkFinalizer}
			network = f.updateV2(network)
			out = f.r.Reconcile(f.ctx, network)
		}
	}
	f.record(network, out)
	return out
}

// update stores n, a v1 fixture, as the API server stores it (v2), and
// returns it read back through v1.
func (f *fixture) update(n *samplecrdv1.Network) *samplecrdv1.Network {
	f.t.Helper()
	return toV1(f.t, f.updateV2(toV2(f.t, n)))
}

func (f *fixture) updateV2(n *samplecrdv2.Network) *samplecrdv2.Network {
	f.t.Helper()
	out, err := f.client.SamplecrdV2().Networks(n.Namespace).Update(f.ctx, n, metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// toV2 is n in v2's terms, by the scheme's conversion (the API server's):
// the tests spell their Networks of one subnet in v1.
func toV2(t *testing.T, n *samplecrdv1.Network) *samplecrdv2.Network {
	t.Helper()
	var out samplecrdv2.Network
	if err := scheme.Scheme.Convert(n.DeepCopy(), &out, nil); err != nil {
		t.Fatal(err)
	}
	out.APIVersion, out.Kind = samplecrdv2.SchemeGroupVersion.String(), "Network"
	return &out
}

// toV1 is n read through v1, by the scheme's conversion.
func toV1(t *testing.T, n *samplecrdv2.Network) *samplecrdv1.Network {
	t.Helper()
	var out samplecrdv1.Network
	if err := scheme.Scheme.Convert(n.DeepCopy(), &out, nil); err != nil {
		t.Fatal(err)
	}
	out.APIVersion, out.Kind = samplecrdv1.SchemeGroupVersion.String(), "Network"
	return &out
}

// record writes the Outcome down as the controller does: its Events, and
// the status StatusApply makes of it, applied as the controller's field
// manager.
func (f *fixture) record(network *samplecrdv2.Network, out Outcome) {
	f.t.Helper()
	for _, e := range out.Events {
		f.events = append(f.events, e.Type+" "+e.Reason)
	}
	if out.Condition == nil {
		return
	}
	if out.Warning != "" {
		f.events = append(f.events, corev1.EventTypeWarning+" "+out.Warning)
	}
	f.applyStatus(network, *out.Condition, out.Observed)
}

// seedStatus applies n's status as the controller's field manager, as if
// the controller had written it: a later apply that leaves a field out
// removes it, as it does in a cluster.
func (f *fixture) seedStatus(n *samplecrdv1.Network) {
	f.t.Helper()
	st := toV2(f.t, n).Status
	if len(st.Conditions) == 0 && LastObserved(st).Equal(samplecrdv2.NetworkStatus{}) {
		return
	}
	status := applyv2.NetworkStatus().WithObservedGeneration(st.ObservedGeneration)
	for _, c := range st.Conditions {
		status.WithConditions(conditionApply(c))
	}
	LastObserved(st).Apply(status)
	if _, err := f.client.SamplecrdV2().Networks(n.Namespace).ApplyStatus(f.ctx, applyv2.Network(n.Name, n.Namespace).WithStatus(status),
		metav1.ApplyOptions{FieldManager: statusManager, Force: true}); err != nil {
		f.t.Fatal(err)
	}
}

// statusManager is the controller's field manager of status.
const statusManager = "network-controller"

// applyStatus applies what StatusApply makes of cond and obs, if anything.
func (f *fixture) applyStatus(network *samplecrdv2.Network, cond metav1.Condition, obs Observed) {
	f.t.Helper()
	ac, _ := StatusApply(network, cond, obs)
	if ac == nil {
		return
	}
	if _, err := f.client.SamplecrdV2().Networks(network.Namespace).ApplyStatus(f.ctx, ac,
		metav1.ApplyOptions{FieldManager: statusManager, Force: true}); err != nil {
		f.t.Fatal(err)
	}
}

// network is the Network default/name read through v1.
func (f *fixture) network(name string) *samplecrdv1.Network { return f.networkIn("default", name) }

func (f *fixture) networkIn(namespace, name string) *samplecrdv1.Network {
	f.t.Helper()
	return toV1(f.t, f.storedIn(namespace, name))
}

// stored is the Network default/name as the API server stores it (v2).
func (f *fixture) stored(name string) *samplecrdv2.Network { return f.storedIn("default", name) }

func (f *fixture) storedIn(namespace, name string) *samplecrdv2.Network {
	f.t.Helper()
	n, err := f.client.SamplecrdV2().Networks(namespace).Get(f.ctx, name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("reading Network %s/%s: %v", namespace, name, err)
	}
	return n
}

// takeEvents returns the Events recorded since the last call.
func (f *fixture) takeEvents() []string {
	out := f.events
	f.events = nil
	return out
}

const testUID = types.UID("1c2d3e4f-0000-0000-0000-000000000001")

var owner = neutron.Owner{Namespace: "default", Name: "net", UID: testUID}

// newNetwork is a Network as a user creates it: no finalizer, no status.
func newNetwork(cidr, gateway string) *samplecrdv1.Network {
	return &samplecrdv1.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv1.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default", UID: testUID, Generation: 1},
		Spec:       samplecrdv1.NetworkSpec{CIDR: cidr, Gateway: gateway},
	}
}

// withSpec changes n's spec with change.
func withSpec(n *samplecrdv1.Network, change func(*samplecrdv1.NetworkSpec)) *samplecrdv1.Network {
	change(&n.Spec)
	return n
}

// adopting makes n adopt the Neutron network id.
func adopting(n *samplecrdv1.Network, id string) *samplecrdv1.Network {
	n.Spec.Adopt = &samplecrdv1.Adoption{NetworkID: id}
	return n
}

// everyOption sets every subnet and network option to a value other than
// Neutron's default.
func everyOption(s *samplecrdv1.NetworkSpec) {
	s.DNSNameservers = []string{"192.168.0.53", "192.168.0.54"}
	s.HostRoutes = []samplecrdv1.HostRoute{{Destination: "10.0.0.0/8", NextHop: "192.168.0.254"}}
	s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "192.168.1.10", End: "192.168.1.99"}}
	s.EnableDHCP = ptr.To(false)
	s.MTU = ptr.To[int32](1400)
}

// provisioned is a Network the controller has finished with.
func provisioned(n *samplecrdv1.Network, networkID, subnetID string) *samplecrdv1.Network {
	n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	want, err := desired.SubnetOf(desired.FromV1(n.Spec), n.Spec.CIDR)
	if err != nil {
		panic(err)
	}
	var pools []samplecrdv1.AllocationPool
	for _, p := range want.AllocationPools {
		pools = append(pools, samplecrdv1.AllocationPool{Start: p.Start, End: p.End})
	}
	n.Status = samplecrdv1.NetworkStatus{
		ObservedGeneration: n.Generation,
		NetworkID:          networkID,
		SubnetID:           subnetID,
		CIDR:               want.CIDR.String(),
		Gateway:            desired.AddrString(want.Gateway),
		AllocationPools:    pools,
		MTU:                neutronfake.MaxMTU,
		NeutronStatus:      "ACTIVE",
		Conditions: []metav1.Condition{{
			Type: samplecrdv1.ConditionReady, Status: metav1.ConditionTrue, Reason: samplecrdv1.ReasonProvisioned,
			Message: ready().Message, ObservedGeneration: n.Generation, LastTransitionTime: metav1.NewTime(time.Unix(1e9, 0)),
		}},
	}
	return n
}

func deleting(n *samplecrdv1.Network) *samplecrdv1.Network {
	now := metav1.NewTime(time.Now())
	n.DeletionTimestamp = &now
	return n
}

// Fixed Neutron IDs: the fake numbers its resources in creation order.
const (
	seededNet    = "net-1"
	seededSubnet = "subnet-2"
)

// inSync seeds Neutron with the network and subnet of owner, as this
// cluster's controller made them.
func inSync(cidr, gateway string) func(*neutronfake.Neutron) {
	return func(f *neutronfake.Neutron) { f.SeedOwned(ours, owner, cidr, gateway) }
}

// seedForeign stores what other tools, people and clusters leave in a
// shared project (neutronfake.SeedStrangers): none of it may ever be
// touched.
func seedForeign(f *neutronfake.Neutron) {
	f.SeedStrangers(ours, otherCluster, owner, otherUID)
}

// otherUID is the UID of no Network in the fixture.
const otherUID = types.UID("9e9e9e9e-0000-4000-8000-000000000009")

// untouched fails t unless Neutron still holds every foreign resource.
func untouched(t *testing.T, f *fixture) {
	t.Helper()
	if left := f.neutron.StrangersLeft(ours); left != neutronfake.StrangersSeeded {
		t.Errorf("%d foreign networks left of %d: %+v", left, neutronfake.StrangersSeeded, f.neutron.Networks())
	}
}

// hasFinalizer reports whether the controller's finalizer is on n.
func hasFinalizer(n *samplecrdv1.Network) bool {
	return len(n.Finalizers) == 1 && n.Finalizers[0] == samplecrdv1.NetworkFinalizer
}

// errUnavailable is a request that got no answer.
var errUnavailable = errors.New("connection refused")
