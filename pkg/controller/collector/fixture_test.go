package collector

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
)

// fixture is one project's Orphans over the fake Neutron and a fake
// clientset that holds the Networks: the API server of the live read, and
// the informer's cache too, save the uncached.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	client  *fake.Clientset
	neutron *neutronfake.Neutron
	inv     *inventory.Inventory
	o       *Orphans
	// events are the Events of every collection, as "Type Reason".
	events []string
	// uncached are UIDs of Networks in the API server that the
	// informer's cache has not caught up with.
	uncached map[types.UID]bool
}

// The fixture's collector is this cluster's; otherCluster shares its
// Neutron project, and sameName is another cluster given the same
// --cluster-name as this one.
var (
	ours         = mustMark("test-cluster", testClusterUID)
	otherCluster = mustMark("other-cluster", otherClusterUID)
	sameName     = mustMark("test-cluster", otherClusterUID)
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

// defaultConfig is the fixture's: orphans collected at their first
// sighting.
func defaultConfig() Config {
	return Config{Mark: ours, Enabled: true, MaxPerList: 50}
}

// newFixtureWith returns a fixture of cfg (its Networks are the
// fixture's clientset), a clock (nil: the real one), the Networks in the
// API server and what seed stores in Neutron. It lists Neutron once, as
// the controller does before its workers start; the list's requests are
// not part of any test.
func newFixtureWith(t *testing.T, cfg Config, clk clock.WithTicker, networks []*samplecrdv2.Network, seed func(*neutronfake.Neutron)) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, ctx: ctx, neutron: neutronfake.New()}
	if seed != nil {
		seed(f.neutron)
	}
	var objects []runtime.Object
	for _, n := range networks {
		objects = append(objects, n)
	}
	f.client = fake.NewClientset(objects...)
	f.inv = inventory.New(f.neutron, ours, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: clk})
	cfg.Networks = f.client
	f.o = NewOrphans(f.inv, cfg)
	f.list()
	if err := f.inv.Health().Err(); err != nil {
		t.Fatal(err)
	}
	f.neutron.ClearRequests()
	f.client.ClearActions()
	return f
}

// list lists Neutron and sights the orphans it finds, as the controller's
// handler of a list does (pkg/controller/tenancy's onNeutronListed).
func (f *fixture) list() {
	f.t.Helper()
	listed, err := f.inv.Refresh(f.ctx)
	if err != nil {
		return // the inventory's health says why
	}
	var missing []types.UID
	for _, uid := range f.inv.UIDs() {
		if _, ok := f.networkByUID(uid); !ok {
			missing = append(missing, uid)
		}
	}
	f.o.Sight(listed.Started, missing)
}

// networkByUID finds a Network in the clientset, which is the fixture's
// cache too, save the uncached.
func (f *fixture) networkByUID(uid types.UID) (*samplecrdv2.Network, bool) {
	if f.uncached[uid] {
		return nil, false
	}
	list, err := f.client.SamplecrdV2().Networks("").List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].UID == uid {
			return &list.Items[i], true
		}
	}
	return nil, false
}

// collect runs one collection of uid, as the collector's worker does, and
// writes down its Events.
func (f *fixture) collect(uid types.UID) reconcile.Outcome {
	_, cached := f.networkByUID(uid)
	out := f.o.Collect(f.ctx, uid, cached)
	for _, e := range out.Events {
		f.events = append(f.events, e.Type+" "+e.Reason)
	}
	return out
}

// takeEvents returns the Events recorded since the last call.
func (f *fixture) takeEvents() []string {
	out := f.events
	f.events = nil
	return out
}

const testUID = types.UID("1c2d3e4f-0000-0000-0000-000000000001")

var owner = neutron.Owner{Namespace: "default", Name: "net", UID: testUID}

// newNetwork is a Network of owner as a user creates it.
func newNetwork(cidr, gateway string) *samplecrdv2.Network {
	return &samplecrdv2.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv2.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: owner.Name, Namespace: owner.Namespace, UID: owner.UID, Generation: 1},
		Spec:       samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: cidr, Gateway: gateway}}},
	}
}

// Fixed Neutron IDs: the fake numbers its resources in creation order.
const seededNet = "net-1"

// inSync seeds Neutron with the network and subnet of owner, as this
// cluster's controller made them.
func inSync(cidr, gateway string) func(*neutronfake.Neutron) {
	return func(f *neutronfake.Neutron) { f.SeedOwned(ours, owner, cidr, gateway) }
}

// seedOwnRouter seeds owner's network and subnet, a router of its own on
// the external network "public" (external-3), with our interface on it.
func seedOwnRouter(f *neutronfake.Neutron) {
	inSync("192.168.0.0/16", "192.168.0.1")(f)
	public := f.AddExternalNetwork("public")
	r, err := f.CreateRouter(context.Background(), ours.ResourceName(owner), ours.Description(), public)
	if err != nil {
		panic(err)
	}
	f.PutPort(neutron.Port{NetworkID: seededNet, Name: ours.ResourceName(owner), Description: ours.Description(),
		DeviceOwner: neutron.RouterInterfaceOwner, DeviceID: r.ID, Addresses: []string{"192.168.0.1"}})
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
