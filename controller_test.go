package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/desired"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	"github.com/samplecrd/network-controller/pkg/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/neutron/fake"
)

// fixture is one controller over fake clients, in the manner of
// sample-controller's tests: the objects are put straight into the fake
// clientset and the informer's indexer, and one syncHandler call is run.
type fixture struct {
	t          *testing.T
	client     *fake.Clientset
	kubeclient *k8sfake.Clientset
	neutron    *neutronfake.Neutron
	recorder   *record.FakeRecorder
	controller *Controller
}

// The fixture's controller is this cluster's; otherCluster shares its
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

func newFixture(t *testing.T, network *samplecrdv1.Network, seed func(*neutronfake.Neutron)) *fixture {
	t.Helper()
	var networks []*samplecrdv1.Network
	if network != nil {
		networks = append(networks, network)
	}
	return newFixtureWith(t, defaultOptions(), networks, seed)
}

// defaultOptions are the fixture's: adoption allowed in "default", orphans
// collected at their first sighting.
func defaultOptions() Options {
	return Options{NeutronResyncPeriod: time.Hour, MaxRetryDelay: time.Minute, AdoptionNamespaces: []string{"default"},
		CollectOrphans: true, MaxOrphansPerList: 50}
}

func newFixtureWith(t *testing.T, opts Options, networks []*samplecrdv1.Network, seed func(*neutronfake.Neutron)) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, kubeclient: k8sfake.NewClientset(), neutron: neutronfake.New(), recorder: record.NewFakeRecorder(100)}
	if seed != nil {
		seed(f.neutron)
	}
	var objects []runtime.Object
	for _, n := range networks {
		objects = append(objects, n)
	}
	f.client = fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, f.kubeclient, f.client, factory.Samplecrd().V1().Networks(), f.neutron, ours, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.networksSynced = func() bool { return true }
	c.recorder = f.recorder
	for _, n := range networks {
		if err := factory.Samplecrd().V1().Networks().Informer().GetIndexer().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	// The inventory is listed as Run lists it before the workers start;
	// its list requests are not part of any sync.
	c.refreshNeutron(ctx)
	if err := c.inventory.Status().Healthy(); err != nil {
		t.Fatal(err)
	}
	// Nor are the keys that list queued: each test syncs what it means to.
	for c.workqueue.Len() > 0 {
		key, _ := c.workqueue.Get()
		c.workqueue.Forget(key)
		c.workqueue.Done(key)
	}
	f.neutron.ClearRequests()
	f.client.ClearActions()
	f.controller = c
	return f
}

// sync runs one syncHandler call for the Network default/name.
func (f *fixture) sync(name string) error {
	return f.syncKey(queueKey{ObjectName: cache.ObjectName{Namespace: "default", Name: name}})
}

// syncKey runs one syncHandler call for key.
func (f *fixture) syncKey(key queueKey) error {
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

// eventKinds is each Event as "Type Reason", what tests assert on: an
// Event's words are for people and may be improved without breaking a test.
func eventKinds(events []string) []string {
	out := make([]string, len(events))
	for i, e := range events {
		fields := strings.Fields(e)
		out[i] = strings.Join(fields[:min(2, len(fields))], " ")
	}
	return out
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (f *fixture) network(name string) *samplecrdv1.Network {
	n, err := f.client.SamplecrdV1().Networks("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("reading Network %s: %v", name, err)
	}
	return n
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

// withNamespace moves n to namespace ns.
func withNamespace(n *samplecrdv1.Network, ns string) *samplecrdv1.Network {
	n.Namespace = ns
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
	want, err := desired.SubnetOf(n.Spec, n.Spec.CIDR)
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
	return func(f *neutronfake.Neutron) { seedOwned(f, ours, owner, cidr, gateway) }
}

// seedOwned stores a network and subnet of o carrying mark m.
func seedOwned(f *neutronfake.Neutron, m neutron.Mark, o neutron.Owner, cidr, gateway string) (networkID, subnetID string) {
	networkID = f.AddNetwork(m.ResourceName(o), m.Description())
	return networkID, f.AddSubnet(networkID, m.ResourceName(o), m.Description(), cidr, gateway)
}

// seedForeign stores what other tools, people and clusters leave in a
// shared project, each with a name that once fooled the controller: none
// of it may ever be touched.
func seedForeign(f *neutronfake.Neutron) {
	f.AddNetwork("k8s-clusterapi-cluster-default-foo", "")
	f.AddNetwork("k8s-"+string(testUID), "")
	seedOwned(f, otherCluster, owner, "172.16.0.0/24", "172.16.0.1")
	seedOwned(f, otherCluster, neutron.Owner{Namespace: "default", Name: "gone", UID: otherUID}, "172.16.1.0/24", "172.16.1.1")
	f.AddNetwork("default/net/not-a-uid", ours.Description())
}

// otherUID is the UID of no Network in the fixture.
const otherUID = types.UID("9e9e9e9e-0000-4000-8000-000000000009")

// untouched fails t unless Neutron still holds every foreign resource.
func untouched(t *testing.T, f *fixture) {
	t.Helper()
	foreign := 0
	for _, n := range f.neutron.Networks() {
		if n.Description != ours.Description() || strings.Contains(n.Name, "not-a-uid") {
			foreign++
		}
	}
	if foreign != 5 {
		t.Errorf("%d foreign networks left of 5: %+v", foreign, f.neutron.Networks())
	}
}

var errUnavailable = errors.New("connection refused")

func TestSyncHandler(t *testing.T) {
	tests := []struct {
		name    string
		network *samplecrdv1.Network
		seed    func(*neutronfake.Neutron)
		failOn  map[string]error
		// key is what is synced; the Network default/net by default.
		key *queueKey
		// wantErr: "" none, "retry-after" a fixed delay, "backoff" an error,
		// "invalid" no retry until the spec changes.
		wantErr     string
		wantWrites  []string
		wantNeutron []string
		// wantReady is "Status/Reason" of the Ready condition afterwards.
		wantReady string
		// wantEvents are the Events recorded, as "Type Reason": their
		// wording is for people, and TestEventWording pins its format.
		wantEvents []string
		check      func(t *testing.T, f *fixture)
	}{
		{
			name:        "a new Network gets a finalizer, then a network and a subnet marked as ours in the create requests, then Ready",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				n := f.network("net")
				if !hasFinalizer(n) {
					t.Error("no finalizer")
				}
				if n.Status.NetworkID != "net-1" || n.Status.SubnetID != "subnet-2" || n.Status.ObservedGeneration != 1 {
					t.Errorf("status = %+v", n.Status)
				}
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				for _, got := range [][2]string{{net.Name, net.Description}, {sub.Name, sub.Description}} {
					if o, ok := ours.OwnerOf(got[0], got[1]); !ok || o.UID != testUID {
						t.Errorf("created %q / %q: not recognisable as this Network's", got[0], got[1])
					}
				}
			},
		},
		{
			name:      "an in-sync Network costs no write and no Neutron request",
			network:   provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed:      inSync("192.168.0.0/16", "192.168.0.1"),
			wantReady: "True/Provisioned",
		},
		{
			name: "a new gateway moves the subnet's gateway in one request and records the new generation",
			network: func() *samplecrdv1.Network {
				n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet, seededSubnet)
				n.Generation = 2
				return n
			}(),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.UpdateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Updated"},
			check: func(t *testing.T, f *fixture) {
				if got := f.neutron.Subnets()[0].GatewayIP; got != "192.168.0.254" {
					t.Errorf("Neutron gateway = %s", got)
				}
				if got := f.network("net").Status.ObservedGeneration; got != 2 {
					t.Errorf("observedGeneration = %d, want 2", got)
				}
			},
		},
		{
			name:        "every option goes into the two create requests; none needs an update afterwards",
			network:     withSpec(newNetwork("192.168.0.0/16", ""), everyOption),
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				if net.MTU != 1400 || sub.GatewayIP != "192.168.0.1" || sub.EnableDHCP ||
					!slices.Equal(sub.DNSNameservers, []string{"192.168.0.53", "192.168.0.54"}) || len(sub.HostRoutes) != 1 ||
					!slices.Equal(sub.AllocationPools, []neutron.AllocationPool{{Start: "192.168.1.10", End: "192.168.1.99"}}) {
					t.Errorf("Neutron holds %+v and %+v", net, sub)
				}
				st := f.network("net").Status
				if st.MTU != 1400 || st.Gateway != "192.168.0.1" || st.CIDR != "192.168.0.0/16" || st.NeutronStatus != "ACTIVE" ||
					!slices.Equal(st.AllocationPools, []samplecrdv1.AllocationPool{{Start: "192.168.1.10", End: "192.168.1.99"}}) {
					t.Errorf("status does not say what Neutron holds: %+v", st)
				}
			},
		},
		{
			name:        "a left-out gateway is the first host, and noGateway is none",
			network:     withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) { s.NoGateway = true }),
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				if sub := f.neutron.Subnets()[0]; sub.GatewayIP != "" ||
					!slices.Equal(sub.AllocationPools, []neutron.AllocationPool{{Start: "10.0.0.1", End: "10.0.0.254"}}) {
					t.Errorf("Neutron holds %+v", sub)
				}
			},
		},
		{
			name: "changed DNS, routes and DHCP go in one subnet update, the MTU in one network update; the IDs stay",
			network: withSpec(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet), func(s *samplecrdv1.NetworkSpec) {
				s.DNSNameservers = []string{"192.168.0.53"}
				s.HostRoutes = []samplecrdv1.HostRoute{{Destination: "10.0.0.0/8", NextHop: "192.168.0.254"}}
				s.EnableDHCP = ptr.To(false)
				s.MTU = ptr.To[int32](1300)
			}),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Updated", "Normal Updated"},
			check: func(t *testing.T, f *fixture) {
				st := f.network("net").Status
				if st.NetworkID != seededNet || st.SubnetID != seededSubnet || st.MTU != 1300 {
					t.Errorf("status = %+v", st)
				}
				if sub := f.neutron.Subnets()[0]; sub.EnableDHCP || len(sub.DNSNameservers) != 1 || len(sub.HostRoutes) != 1 {
					t.Errorf("Neutron holds %+v", sub)
				}
			},
		},
		{
			name: "pools Neutron would refuse: Ready=False InvalidSpec, a Warning, no request, no retry",
			network: withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) {
				s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.20", End: "10.0.0.30"}}
			}),
			wantErr:    "invalid",
			wantWrites: []string{"apply networks/status"},
			wantReady:  "False/InvalidSpec",
			wantEvents: []string{"Warning InvalidSpec"},
		},
		{
			name:    "an MTU Neutron refuses is NeutronRejected, with Neutron's words",
			network: withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) { s.MTU = ptr.To[int32](9000) }),
			wantErr: "retry-after", wantWrites: []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Warning NeutronRejected"},
		},
		{
			name:        "a deleted Network's subnet and network are deleted, then its finalizer released",
			network:     deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks"},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets()) != 0 {
					t.Errorf("left in Neutron: %v %v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
		},
		{
			name: "deletionPolicy Orphan: the network and subnet stay in Neutron without the mark, then the finalizer goes",
			network: withSpec(deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
				func(s *samplecrdv1.NetworkSpec) { s.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan }),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks"},
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantEvents:  []string{"Normal Orphaned"},
			check: func(t *testing.T, f *fixture) {
				nets, subs := f.neutron.Networks(), f.neutron.Subnets()
				if len(nets) != 1 || len(subs) != 1 {
					t.Fatalf("Neutron holds %v and %v, want the network and its subnet", nets, subs)
				}
				for _, got := range [][2]string{{nets[0].Name, nets[0].Description}, {subs[0].Name, subs[0].Description}} {
					if _, ok := ours.OwnerOf(got[0], got[1]); ok {
						t.Errorf("%q / %q still carries the mark", got[0], got[1])
					}
					if want := "released by network-controller (cluster=test-cluster) when Network default/net was deleted"; got[1] != want {
						t.Errorf("description %q, want %q", got[1], want)
					}
				}
			},
		},
		{
			name:    "adopt: a hand-made network whose subnet matches the spec is marked, subnet first, and managed; nothing is created",
			network: adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "made by a person")
				f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
			},
			// The second status write, before any mark, records the names.
			wantWrites:  []string{"apply networks", "apply networks/status", "apply networks/status"},
			wantNeutron: []string{neutronfake.GetNetwork, neutronfake.SubnetsOf, neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Adopted"},
			check: func(t *testing.T, f *fixture) {
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				for _, got := range [][2]string{{net.Name, net.Description}, {sub.Name, sub.Description}} {
					if o, ok := ours.OwnerOf(got[0], got[1]); !ok || o.UID != testUID {
						t.Errorf("%q / %q is not marked as this Network's", got[0], got[1])
					}
				}
				st := f.network("net").Status
				if st.NetworkID != seededNet || st.SubnetID != seededSubnet {
					t.Errorf("status = %+v", st)
				}
				want := &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
					SubnetID: seededSubnet, SubnetName: "handmade"}
				if !reflect.DeepEqual(st.Adopted, want) {
					t.Errorf("status.adopted = %+v, want %+v", st.Adopted, want)
				}
			},
		},
		{
			name:        "adopt: a namespace the administrator did not allow is AdoptionRefused before Neutron is asked anything",
			network:     withNamespace(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), "team-a"),
			seed:        func(f *neutronfake.Neutron) { f.AddNetwork("handmade", "made by a person") },
			key:         &queueKey{ObjectName: cache.ObjectName{Namespace: "team-a", Name: "net"}},
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: nil,
			wantEvents:  []string{"Warning AdoptionRefused"},
			check: func(t *testing.T, f *fixture) {
				if n := f.neutron.Networks()[0]; n.Name != "handmade" || n.Description != "made by a person" {
					t.Errorf("the network was changed: %+v", n)
				}
			},
		},
		{
			name: "adopt: released on delete by default, with the names it had before",
			network: func() *samplecrdv1.Network {
				n := deleting(provisioned(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), seededNet, seededSubnet))
				n.Status.Adopted = &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
					SubnetID: seededSubnet, SubnetName: "handmade-subnet", SubnetDescription: "the subnet"}
				return n
			}(),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks"},
			wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantEvents:  []string{"Normal Orphaned"},
			check: func(t *testing.T, f *fixture) {
				net, sub := f.neutron.Networks()[0], f.neutron.Subnets()[0]
				if net.Name != "handmade" || net.Description != "made by a person" || sub.Name != "handmade-subnet" || sub.Description != "the subnet" {
					t.Errorf("released as %q/%q and %q/%q, want the names they had before adoption", net.Name, net.Description, sub.Name, sub.Description)
				}
			},
		},
		{
			name: "adopt: a partial adoption (subnet marked, the network's mark failed) deleted with Orphan releases the subnet too",
			network: func() *samplecrdv1.Network {
				n := deleting(adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet))
				n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
				n.Spec.DeletionPolicy = samplecrdv1.DeletionPolicyOrphan
				n.Status.Adopted = &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", SubnetID: seededSubnet, SubnetName: "handmade-subnet"}
				return n
			}(),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "")
				f.AddSubnet(id, ours.ResourceName(owner), ours.Description(), "192.168.0.0/16", "192.168.0.1")
			},
			wantWrites:  []string{"apply networks"},
			wantNeutron: []string{neutronfake.UpdateSubnet},
			check: func(t *testing.T, f *fixture) {
				if subs := f.neutron.Subnets(); len(subs) != 1 || subs[0].Name != "handmade-subnet" || neutron.IsMark(subs[0].Description) {
					t.Errorf("subnets = %+v, want the adopted one back under its own name, unmarked", subs)
				}
			},
		},
		{
			name:    "adopt: a subnet that differs from the spec is AdoptionMismatch with the difference, and nothing is changed",
			network: adopting(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork("handmade", "")
				f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
			},
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.GetNetwork, neutronfake.SubnetsOf},
			wantReady:   "False/AdoptionMismatch",
			// Fields, never Neutron's values: the network is not the
			// author's to read before it is adopted.
			wantEvents: []string{"Warning AdoptionMismatch"},
			check: func(t *testing.T, f *fixture) {
				if n := f.neutron.Networks()[0]; n.Name != "handmade" || n.Description != "" {
					t.Errorf("the network was changed: %+v", n)
				}
			},
		},
		{
			name:        "adopt: another cluster's network is AdoptionRefused, and nothing is changed",
			network:     adopting(newNetwork("172.16.0.0/24", "172.16.0.1"), seededNet),
			seed:        func(f *neutronfake.Neutron) { seedOwned(f, otherCluster, owner, "172.16.0.0/24", "172.16.0.1") },
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:    "adopt: a network of another Network of this cluster is AdoptionRefused without naming that Network",
			network: adopting(newNetwork("172.16.0.0/24", "172.16.0.1"), seededNet),
			seed: func(f *neutronfake.Neutron) {
				seedOwned(f, ours, neutron.Owner{Namespace: "team-b", Name: "secret-project", UID: otherUID}, "172.16.0.0/24", "172.16.0.1")
			},
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:        "adopt: our mark on a name that names no Network is AdoptionRefused, and says so",
			network:     adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet),
			seed:        func(f *neutronfake.Neutron) { f.AddNetwork("default/net/not-a-uid", ours.Description()) },
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:        "adopt: a network that does not exist is AdoptionRefused; nothing is created in its place",
			network:     adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), "net-404"),
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.GetNetwork},
			wantReady:   "False/AdoptionRefused",
			wantEvents:  []string{"Warning AdoptionRefused"},
		},
		{
			name:        "a range from a pool: the pool is found, the subnet allocated in one request, and status says which range",
			network:     withSpec(newNetwork("", ""), func(s *samplecrdv1.NetworkSpec) { s.SubnetPool = "tenant-pool" }),
			seed:        func(f *neutronfake.Neutron) { f.AddSubnetPool("tenant-pool", 26, "10.100.0.0/16") },
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.FindSubnetPool, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check: func(t *testing.T, f *fixture) {
				if st := f.network("net").Status; st.CIDR != "10.100.0.0/26" || st.Gateway != "10.100.0.1" {
					t.Errorf("status = %+v", st)
				}
			},
		},
		{
			name: "a duplicate from a pool (a create that completed after its answer was lost) is deleted; the subnet status names is kept",
			network: withSpec(provisioned(newNetwork("10.100.0.64/26", ""), seededNet, "subnet-3"), func(s *samplecrdv1.NetworkSpec) {
				s.CIDR, s.SubnetPool = "", "tenant-pool"
			}),
			seed: func(f *neutronfake.Neutron) {
				netID, _ := seedOwned(f, ours, owner, "10.100.0.0/26", "10.100.0.1")
				f.AddSubnet(netID, ours.ResourceName(owner), ours.Description(), "10.100.0.64/26", "10.100.0.65")
			},
			wantNeutron: []string{neutronfake.DeleteSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired"},
			check: func(t *testing.T, f *fixture) {
				if subs := f.neutron.Subnets(); len(subs) != 1 || subs[0].ID != "subnet-3" {
					t.Errorf("Neutron holds %v", subs)
				}
			},
		},
		{
			name:        "a pool that does not exist is NeutronRejected, and no subnet is made",
			network:     withSpec(newNetwork("", ""), func(s *samplecrdv1.NetworkSpec) { s.SubnetPool = "no-such-pool" }),
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.FindSubnetPool},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Normal Created", "Warning NeutronRejected"},
		},
		{
			name:        "a deletion while Neutron is down keeps the finalizer and says why",
			network:     deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			failOn:      map[string]error{neutronfake.DeleteSubnet: errUnavailable},
			wantErr:     "backoff",
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.DeleteSubnet},
			wantReady:   "False/Deleting",
			wantEvents:  []string{"Warning DeletionFailed"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released before Neutron confirmed the deletion")
				}
			},
		},
		{
			name:        "Neutron unavailable: Ready=False NeutronUnavailable and a retry with backoff",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			failOn:      map[string]error{neutronfake.CreateNetwork: errUnavailable},
			wantErr:     "backoff",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronUnavailable",
			wantEvents:  []string{"Warning NeutronUnavailable"},
		},
		{
			name:    "a range that overlaps another tool's subnet: CIDRConflict with Neutron's words, retried only later",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed: func(f *neutronfake.Neutron) {
				f.AddSubnet(f.AddNetwork("someone-elses", ""), "someone-elses", "", "192.168.10.0/24", "192.168.10.1")
			},
			wantErr:    "retry-after",
			wantWrites: []string{"apply networks", "apply networks/status"},
			// On an overlap the network's subnets are read once, in case
			// the overlapping subnet is a late create of our own.
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet, neutronfake.SubnetsOf},
			wantReady:   "False/CIDRConflict",
			wantEvents:  []string{"Normal Created", "Warning CIDRConflict"},
			check: func(t *testing.T, f *fixture) {
				if got := f.network("net").Status.NetworkID; got != "net-3" {
					t.Errorf("status.networkID = %q: the network that was made must be recorded", got)
				}
				if len(f.neutron.Subnets()) != 1 {
					t.Errorf("subnets = %+v, want only the other tool's", f.neutron.Subnets())
				}
			},
		},
		{
			name:        "Neutron over quota: NeutronQuotaExceeded with Neutron's words, retried with (capped) backoff, not latched",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        func(f *neutronfake.Neutron) { f.SetNetworkQuota(0) },
			wantErr:     "backoff",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronQuotaExceeded",
			wantEvents:  []string{"Warning NeutronQuotaExceeded"},
		},
		{
			name:    "an invalid request: NeutronRejected, retried only later",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			failOn: map[string]error{neutronfake.CreateNetwork: neutron.ErrorForResponse("creating network", 400, "InvalidInput",
				"Invalid input for description.")},
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Warning NeutronRejected"},
		},
		{
			name:    "a delete blocked by a VM's port: DeletionBlocked naming the port, finalizer held, backoff",
			network: deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				f.AddPort(seededNet, "port-dhcp", "network:dhcp")
				f.AddPort(seededNet, "port-vm", "compute:nova")
			},
			wantErr:     "backoff",
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.PortsOf},
			wantReady:   "False/DeletionBlocked",
			wantEvents:  []string{"Warning DeletionBlocked"},
			check: func(t *testing.T, f *fixture) {
				if !hasFinalizer(f.network("net")) {
					t.Error("finalizer released while Neutron refused the delete")
				}
			},
		},
		{
			name:    "a duplicate network (a create that completed after its answer was lost) is deleted; the one status names is kept",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				f.AddNetwork(ours.ResourceName(owner), ours.Description())
			},
			wantNeutron: []string{neutronfake.DeleteNetwork},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired"},
			check: func(t *testing.T, f *fixture) {
				if n := f.neutron.Networks(); len(n) != 1 || n[0].ID != seededNet {
					t.Errorf("networks = %+v, want only %s", n, seededNet)
				}
			},
		},
		{
			name:        "what Neutron holds for a Network that is gone is collected, by its UID",
			network:     nil,
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			key:         &queueKey{OrphanUID: testUID},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets()) != 0 {
					t.Errorf("orphans left: %v %v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
		},
		{
			name:    "nothing is collected for a UID whose Network exists",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed:    inSync("192.168.0.0/16", "192.168.0.1"),
			key:     &queueKey{OrphanUID: testUID},
		},
		{
			name:        "a new Network beside other tools', other clusters' and look-alikes touches none of them",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:        seedForeign,
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
			check:       untouched,
		},
		{
			name:    "another cluster's resources of a UID with no Network here are not orphans of ours",
			network: nil,
			seed:    seedForeign,
			key:     &queueKey{OrphanUID: otherUID},
			check:   untouched,
		},
		{
			name:    "a deleted Network's look-alikes survive its deletion",
			network: deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				seedForeign(f)
			},
			wantWrites:  []string{"apply networks"},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted"},
			check:       untouched,
		},
		{
			name:        "a subnet whose range was changed behind our back is replaced, and the Event says what was created",
			network:     provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed:        inSync("10.9.0.0/16", "10.9.0.1"),
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired", "Normal Created"},
		},
		{
			name:        "a network deleted behind our back is made again, and the Events say so",
			network:     provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), "net-gone", "subnet-gone"),
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired", "Normal Created"},
		},
		{
			name:    "resources of an earlier Network of the same name are not the new one's: it makes its own",
			network: newNetwork("10.1.0.0/16", "10.1.0.1"),
			seed: func(f *neutronfake.Neutron) {
				seedOwned(f, ours, neutron.Owner{Namespace: "default", Name: "net", UID: otherUID}, "192.168.0.0/16", "192.168.0.1")
			},
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, tc.seed)
			for req, err := range tc.failOn {
				f.neutron.FailOn(req, err)
			}

			key := queueKey{ObjectName: cache.ObjectName{Namespace: "default", Name: "net"}}
			if tc.key != nil {
				key = *tc.key
			}
			err := f.syncKey(key)

			var retry retryAfterError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("sync failed: %v", err)
			case tc.wantErr == "invalid" && !errors.Is(err, errSpecMustChange):
				t.Fatalf("sync returned %v, want no retry until the spec changes", err)
			case tc.wantErr == "retry-after" && !errors.As(err, &retry):
				t.Fatalf("sync returned %v, want a retry after a fixed delay", err)
			case tc.wantErr == "backoff" && (err == nil || errors.As(err, &retry)):
				t.Fatalf("sync returned %v, want an error retried with backoff", err)
			}
			if got := f.writes(); !slices.Equal(got, tc.wantWrites) {
				t.Errorf("API writes = %q, want %q", got, tc.wantWrites)
			}
			if got := f.neutron.Requests(); !slices.Equal(got, tc.wantNeutron) {
				t.Errorf("Neutron requests = %q, want %q", got, tc.wantNeutron)
			}
			if tc.wantReady != "" {
				cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
				if cond == nil {
					t.Fatalf("no Ready condition, want %s", tc.wantReady)
				}
				if got := string(cond.Status) + "/" + cond.Reason; got != tc.wantReady {
					t.Errorf("Ready = %s (%s), want %s", got, cond.Message, tc.wantReady)
				}
			}
			if got := eventKinds(f.events()); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

// TestLostAnswersPauseWritesUntilAListShowsWhatHappened: Neutron completes
// creates whose answers the controller never got. The breaker opens, the
// next sync makes no request and says why, and the list that closes the
// breaker shows the late creates: they are used, not made again.
func TestLostAnswersPauseWritesUntilAListShowsWhatHappened(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	_, ctx := ktesting.NewTestContext(t)
	probe := func() {
		t.Helper()
		f.controller.refreshNeutron(ctx)
		if f.controller.neutronUp.isOpen() {
			t.Fatal("a successful list did not close the breaker")
		}
	}

	f.neutron.CompleteLate(neutronfake.CreateNetwork)
	if err := f.sync("net"); err == nil {
		t.Fatal("the sync whose create answer was lost succeeded")
	}
	err := f.sync("net")
	if !errors.Is(err, errNeutronDown) {
		t.Fatalf("a sync with the breaker open returned %v, want errNeutronDown", err)
	}
	if cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady); cond.Reason != samplecrdv1.ReasonNeutronUnavailable ||
		!strings.Contains(cond.Message, "Neutron is not answering") {
		t.Errorf("Ready = %s: %s", cond.Reason, cond.Message)
	}
	probe()
	f.neutron.CompleteLate(neutronfake.CreateSubnet)
	if err := f.sync("net"); err == nil {
		t.Fatal("the sync whose subnet answer was lost succeeded")
	}
	probe()
	if err := f.sync("net"); err != nil {
		t.Fatal(err)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{
		neutronfake.CreateNetwork,                         // completed late
		neutronfake.ListNetworks, neutronfake.ListSubnets, // the probe: the network is there
		neutronfake.CreateSubnet,                          // completed late
		neutronfake.ListNetworks, neutronfake.ListSubnets, // the probe: the subnet is there
	}) {
		t.Errorf("Neutron requests = %q", got)
	}
	st := f.network("net").Status
	if n, s := f.neutron.Networks(), f.neutron.Subnets(); len(n) != 1 || len(s) != 1 || n[0].ID != st.NetworkID || s[0].ID != st.SubnetID {
		t.Errorf("Neutron holds %+v and %+v; status names %s/%s", n, s, st.NetworkID, st.SubnetID)
	}
}

// TestLateSubnetFoundOnOverlapRefusal: a subnet create completes after the
// list that closed the breaker. The retry is refused as an overlap, and the
// controller finds its own subnet, carrying its mark, instead of failing.
func TestLateSubnetFoundOnOverlapRefusal(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	f.neutron.CompleteLate(neutronfake.CreateSubnet)
	if err := f.sync("net"); err == nil {
		t.Fatal("the sync whose subnet answer was lost succeeded")
	}
	f.controller.neutronUp.resetAfter(time.Now()) // a list read before the late create completed
	f.neutron.ClearRequests()
	if err := f.sync("net"); err != nil {
		t.Fatal(err)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{neutronfake.CreateSubnet, neutronfake.SubnetsOf}) {
		t.Errorf("Neutron requests = %q, want the refused create and one read", got)
	}
	if s := f.neutron.Subnets(); len(s) != 1 || s[0].ID != f.network("net").Status.SubnetID {
		t.Errorf("subnets %+v", s)
	}
}

// TestTheLongestNamesBecomeReady: a 253-character Network in a
// 63-character namespace has Neutron names within Neutron's limit, which
// still name it.
func TestTheLongestNamesBecomeReady(t *testing.T) {
	n := newNetwork("192.168.0.0/16", "192.168.0.1")
	n.Namespace, n.Name = strings.Repeat("n", 63), strings.Repeat("a", 253)
	f := newFixture(t, n, nil)
	if err := f.syncKey(queueKey{ObjectName: cache.ObjectName{Namespace: n.Namespace, Name: n.Name}}); err != nil {
		t.Fatal(err)
	}
	for _, net := range f.neutron.Networks() {
		if len(net.Name) > neutron.MaxNameLength || !strings.HasPrefix(net.Name, n.Namespace+"/aaaa") {
			t.Errorf("network name %q (%d characters)", net.Name, len(net.Name))
		}
	}
	if got := len(f.neutron.Subnets()); got != 1 {
		t.Errorf("%d subnets", got)
	}
}

// TestRefreshQueuesDriftAndOrphansAndCollectsOnlyOurs runs the refresh and
// then the queue to the end, as Run's goroutines do: resources of a gone
// Network are collected by a worker, the in-sync Network costs nothing,
// and nothing foreign or out of scope is touched.
func TestRefreshQueuesDriftAndOrphansAndCollectsOnlyOurs(t *testing.T) {
	inScope := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
	outOfScopeOrphan := neutron.Owner{Namespace: "elsewhere", Name: "x", UID: "5e5e5e5e-0000-4000-8000-000000000005"}
	orphan := neutron.Owner{Namespace: "default", Name: "gone", UID: otherUID}
	opts := defaultOptions()
	opts.Namespace = "default"
	f := newFixtureWith(t, opts, []*samplecrdv1.Network{inScope},
		func(n *neutronfake.Neutron) {
			inSync("192.168.0.0/16", "192.168.0.1")(n)
			seedForeign(n)
		})
	// Made after the fixture's first list: the refresh sees them as new.
	seedOwned(f.neutron, ours, orphan, "10.1.0.0/24", "10.1.0.1")
	seedOwned(f.neutron, ours, outOfScopeOrphan, "10.2.0.0/24", "10.2.0.1")
	_, ctx := ktesting.NewTestContext(t)

	f.controller.refreshNeutron(ctx)
	if got := f.controller.workqueue.Len(); got != 1 {
		t.Errorf("%d keys queued, want 1 (the orphan in scope)", got)
	}
	for f.controller.workqueue.Len() > 0 {
		f.controller.processNextWorkItem(ctx)
	}
	if got := f.neutron.Requests(); !slices.Equal(got, []string{neutronfake.ListNetworks, neutronfake.ListSubnets,
		neutronfake.DeleteSubnet, neutronfake.DeleteNetwork}) {
		t.Errorf("Neutron requests = %q, want two lists and the orphan's deletes", got)
	}
	for _, n := range f.neutron.Networks() {
		if o, ok := ours.OwnerOf(n.Name, n.Description); ok && o.UID == orphan.UID {
			t.Errorf("the orphan %s survived", n.ID)
		}
	}
	if got := f.controller.inventory.Get(outOfScopeOrphan.UID); len(got.Networks) != 1 {
		t.Errorf("another namespace's resources were touched: %+v", got)
	}
	untouched(t, f)
	if len(f.writes()) != 0 {
		t.Errorf("API writes %q", f.writes())
	}
}

func TestRetryPolicy(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		want      retry
		wantAfter time.Duration
	}{
		{"success", nil, noRetry, 0},
		{"a spec Neutron would refuse waits for a change", fmt.Errorf("%w: pools overlap", errSpecMustChange), noRetryUntilChanged, 0},
		{"a refusal comes back after a fixed delay", retryAfterError{err: errors.New("refused"), after: time.Minute}, retryAfterDelay, time.Minute},
		{"a wrapped refusal too", fmt.Errorf("x: %w", retryAfterError{err: errors.New("refused"), after: time.Second}), retryAfterDelay, time.Second},
		{"anything else backs off", errUnavailable, retryWithBackoff, 0},
		{"an unsynced inventory backs off", neutron.ErrNotSynced, retryWithBackoff, 0},
		{"a used-up quota backs off", neutron.ErrorForResponse("create", 409, "OverQuota", "Quota exceeded"), retryWithBackoff, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, after := retryPolicy(tc.err)
			if got != tc.want || after != tc.wantAfter {
				t.Errorf("retryPolicy(%v) = %v, %v; want %v, %v", tc.err, got, after, tc.want, tc.wantAfter)
			}
		})
	}
}

// TestBackoffIsCapped: a Network that keeps failing (over quota, blocked
// by ports) is retried at least every MaxRetryDelay, not every 1000s as
// client-go's default limiter would after enough failures.
func TestBackoffIsCapped(t *testing.T) {
	limiter := rateLimiter(5 * time.Second)
	key := queueKey{ObjectName: cache.ObjectName{Namespace: "default", Name: "net"}}
	var last time.Duration
	for range 30 {
		last = limiter.When(key)
	}
	if last != 5*time.Second {
		t.Errorf("delay after 30 failures = %v, want the cap 5s", last)
	}
}

// TestOverQuotaBecomesReadyOnceRaised: nobody touches the Network; the
// backoff retry finds the raised quota.
func TestOverQuotaBecomesReadyOnceRaised(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), func(n *neutronfake.Neutron) { n.SetNetworkQuota(0) })
	if err := f.sync("net"); err == nil {
		t.Fatal("created over quota")
	}
	f.neutron.SetNetworkQuota(10)
	if err := f.sync("net"); err != nil {
		t.Fatalf("after the quota was raised: %v", err)
	}
	if cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady); cond.Reason != samplecrdv1.ReasonProvisioned {
		t.Errorf("Ready = %s/%s", cond.Status, cond.Reason)
	}
}

// TestProcessNextWorkItemRequeues checks the queue after one item: backoff
// is counted for unavailability, reset on success, and not used for a
// refusal (which comes back only after rejectedRetryInterval).
func TestProcessNextWorkItemRequeues(t *testing.T) {
	key := queueKey{ObjectName: cache.ObjectName{Namespace: "default", Name: "net"}}
	tests := []struct {
		name         string
		failOn       error
		wantRequeues int
	}{
		{"unavailable: one backoff step", errUnavailable, 1},
		{"refused: no backoff step, and not queued now", neutron.ErrorForResponse("create", 400, "InvalidInput", "no"), 0},
		{"success: forgotten", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
			f.neutron.FailOn(neutronfake.CreateNetwork, tc.failOn)
			_, ctx := ktesting.NewTestContext(t)
			f.controller.workqueue.Add(key)
			f.controller.processNextWorkItem(ctx)
			if got := f.controller.workqueue.NumRequeues(key); got != tc.wantRequeues {
				t.Errorf("NumRequeues = %d, want %d", got, tc.wantRequeues)
			}
			if tc.failOn != nil && tc.wantRequeues == 0 && f.controller.workqueue.Len() != 0 {
				t.Error("a refused key was queued again at once")
			}
		})
	}
}

// TestReadyKeepsItsTransitionTimeUntilItFlips checks that a status write
// that does not change Ready's status keeps lastTransitionTime.
func TestReadyKeepsItsTransitionTimeUntilItFlips(t *testing.T) {
	n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet, seededSubnet)
	n.Generation = 2
	f := newFixture(t, n, inSync("192.168.0.0/16", "192.168.0.1"))
	if err := f.sync("net"); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if !cond.LastTransitionTime.Equal(&n.Status.Conditions[0].LastTransitionTime) {
		t.Errorf("lastTransitionTime moved from %v to %v while Ready stayed True", n.Status.Conditions[0].LastTransitionTime, cond.LastTransitionTime)
	}
	if cond.ObservedGeneration != 2 {
		t.Errorf("condition observedGeneration = %d, want 2", cond.ObservedGeneration)
	}
}

// TestUnsyncedInventoryReportsNeutronUnavailable: before Neutron was ever
// listed, a sync cannot tell what exists and must not create anything.
func TestUnsyncedInventoryReportsNeutronUnavailable(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	f.controller.inventory = neutron.NewInventory(f.neutron, ours)
	err := f.sync("net")
	if !errors.Is(err, neutron.ErrNotSynced) {
		t.Fatalf("sync returned %v, want ErrNotSynced", err)
	}
	if got := f.neutron.Requests(); len(got) != 0 {
		t.Errorf("Neutron requests %q before the inventory was listed", got)
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Reason != samplecrdv1.ReasonNeutronUnavailable || !strings.Contains(cond.Message, "not been listed") {
		t.Errorf("Ready = %+v, want False/NeutronUnavailable saying why", cond)
	}
}

func TestNeedsSync(t *testing.T) {
	base := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
	base.ResourceVersion = "10"
	change := func(edit func(n *samplecrdv1.Network)) *samplecrdv1.Network {
		n := base.DeepCopy()
		n.ResourceVersion = "11"
		edit(n)
		return n
	}
	tests := []struct {
		name string
		new  *samplecrdv1.Network
		want bool
	}{
		{"a resync (same resourceVersion)", base.DeepCopy(), true},
		{"a spec change (new generation)", change(func(n *samplecrdv1.Network) { n.Generation++ }), true},
		{"the start of a deletion", change(func(n *samplecrdv1.Network) { deleting(n) }), true},
		{"our own status write", change(func(n *samplecrdv1.Network) { n.Status.SubnetID = "x" }), false},
		{"a label change", change(func(n *samplecrdv1.Network) { n.Labels = map[string]string{"a": "b"} }), false},
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
	n := newNetwork("192.168.0.0/16", "192.168.0.1")
	n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	n.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}", "team": "net"}
	out, err := stripForCache(n)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*samplecrdv1.Network)
	if got.ManagedFields != nil || got.Annotations["kubectl.kubernetes.io/last-applied-configuration"] != "" {
		t.Errorf("managedFields %v and annotations %v survived the transform", got.ManagedFields, got.Annotations)
	}
	if got.Annotations["team"] != "net" || got.Spec.CIDR != "192.168.0.0/16" {
		t.Errorf("the transform dropped what the controller reads: %+v", got)
	}
}

// TestEventWording pins the words of the Event a person reads first, the
// one that names what was made. It is the one test that asserts on an
// Event's wording; the others assert on its type and reason.
func TestEventWording(t *testing.T) {
	f := newFixture(t, newNetwork("192.168.0.0/16", "192.168.0.1"), nil)
	if err := f.sync("net"); err != nil {
		t.Fatal(err)
	}
	want := []string{"Normal Created Created Neutron network net-1 with subnet subnet-2 (192.168.0.0/16, gateway 192.168.0.1)"}
	if got := f.events(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}
