package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
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

func newFixture(t *testing.T, network *samplecrdv1.Network, seed func(*neutronfake.Neutron)) *fixture {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	f := &fixture{t: t, kubeclient: k8sfake.NewClientset(), neutron: neutronfake.New(), recorder: record.NewFakeRecorder(100)}
	if seed != nil {
		seed(f.neutron)
	}
	var objects []*samplecrdv1.Network
	if network != nil {
		objects = append(objects, network)
		f.client = fake.NewClientset(network)
	} else {
		f.client = fake.NewClientset()
	}
	factory := informers.NewSharedInformerFactory(f.client, 0)
	c, err := NewController(ctx, f.kubeclient, f.client, factory.Samplecrd().V1().Networks(), f.neutron, Options{NeutronResyncPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.networksSynced = func() bool { return true }
	c.recorder = f.recorder
	for _, n := range objects {
		if err := factory.Samplecrd().V1().Networks().Informer().GetIndexer().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	// The inventory is listed as Run lists it before the workers start;
	// its list requests are not part of any sync.
	if _, err := c.neutron.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	f.neutron.ClearRequests()
	f.client.ClearActions()
	f.controller = c
	return f
}

// sync runs one syncHandler call for namespace/name.
func (f *fixture) sync(name string) error {
	_, ctx := ktesting.NewTestContext(f.t)
	return f.controller.syncHandler(ctx, cache.ObjectName{Namespace: "default", Name: name})
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

// provisioned is a Network the controller has finished with.
func provisioned(n *samplecrdv1.Network, networkID, subnetID string) *samplecrdv1.Network {
	n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	n.Status = samplecrdv1.NetworkStatus{
		ObservedGeneration: n.Generation,
		NetworkID:          networkID,
		SubnetID:           subnetID,
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

// inSync seeds Neutron with the tagged network and subnet of owner.
func inSync(cidr, gateway string) func(*neutronfake.Neutron) {
	return func(f *neutronfake.Neutron) {
		id := f.AddNetwork(owner, true)
		f.AddSubnet(owner, true, id, cidr, gateway)
	}
}

var errUnavailable = errors.New("connection refused")

func TestSyncHandler(t *testing.T) {
	tests := []struct {
		name    string
		network *samplecrdv1.Network
		seed    func(*neutronfake.Neutron)
		failOn  map[string]error
		// wantErr: "" none, "retry-after" a fixed delay, "backoff" an error.
		wantErr     string
		wantWrites  []string
		wantNeutron []string
		// wantReady is "Status/Reason" of the Ready condition afterwards.
		wantReady  string
		wantEvents []string
		check      func(t *testing.T, f *fixture)
	}{
		{
			name:        "a new Network gets a finalizer, then a Neutron network and subnet, then Ready",
			network:     newNetwork("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.FindNetworks, neutronfake.CreateNetwork, neutronfake.TagNetwork, neutronfake.CreateSubnet, neutronfake.TagSubnet},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Created Created Neutron network net-1 with subnet subnet-2 (192.168.0.0/16, gateway 192.168.0.1)"},
			check: func(t *testing.T, f *fixture) {
				n := f.network("net")
				if !hasFinalizer(n) {
					t.Error("no finalizer")
				}
				if n.Status.NetworkID != "net-1" || n.Status.SubnetID != "subnet-2" || n.Status.ObservedGeneration != 1 {
					t.Errorf("status = %+v", n.Status)
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
			name: "a new gateway moves the subnet's gateway and records the new generation",
			network: func() *samplecrdv1.Network {
				n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.254"), seededNet, seededSubnet)
				n.Generation = 2
				return n
			}(),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.UpdateGateway},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Normal Updated Moved the gateway of Neutron subnet subnet-2 from 192.168.0.1 to 192.168.0.254"},
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
			name:        "a deleted Network's subnet and network are deleted, then its finalizer released",
			network:     deleting(provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)),
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantWrites:  []string{"apply networks"},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			wantEvents:  []string{"Normal Deleted Deleted Neutron network net-1"},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets()) != 0 {
					t.Errorf("left in Neutron: %v %v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
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
			wantEvents:  []string{"Warning DeletionFailed Deleting Neutron resources: connection refused"},
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
			wantNeutron: []string{neutronfake.FindNetworks, neutronfake.CreateNetwork},
			wantReady:   "False/NeutronUnavailable",
			wantEvents:  []string{"Warning NeutronUnavailable connection refused"},
		},
		{
			name:    "Neutron refuses an overlapping range: CIDRConflict with its message, retried only later",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			failOn: map[string]error{neutronfake.CreateSubnet: &neutron.RejectedError{StatusCode: 400, Type: "InvalidInput",
				Message: "Requested subnet with cidr: 192.168.0.0/16 overlaps with another subnet"}},
			wantErr:    "retry-after",
			wantWrites: []string{"apply networks", "apply networks/status"},
			// On an overlap the network's subnets are read once, in case
			// the overlapping subnet is a late create of our own.
			wantNeutron: []string{neutronfake.FindNetworks, neutronfake.CreateNetwork, neutronfake.TagNetwork, neutronfake.CreateSubnet, neutronfake.SubnetsOf},
			wantReady:   "False/CIDRConflict",
			wantEvents:  []string{"Warning CIDRConflict Neutron refused: Requested subnet with cidr: 192.168.0.0/16 overlaps with another subnet"},
			check: func(t *testing.T, f *fixture) {
				if got := f.network("net").Status.NetworkID; got != "net-1" {
					t.Errorf("status.networkID = %q: the network that was made must be recorded", got)
				}
			},
		},
		{
			name:    "Neutron over quota: NeutronRejected, retried only later",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			failOn: map[string]error{neutronfake.CreateNetwork: &neutron.RejectedError{StatusCode: 409, Type: "OverQuota",
				Message: "Quota exceeded for resources: ['network']."}},
			wantErr:     "retry-after",
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.FindNetworks, neutronfake.CreateNetwork},
			wantReady:   "False/NeutronRejected",
			wantEvents:  []string{"Warning NeutronRejected Neutron refused: Quota exceeded for resources: ['network']."},
		},
		{
			name:    "after a crash between create and tag, the untagged network and subnet are adopted, not duplicated",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed: func(f *neutronfake.Neutron) {
				id := f.AddNetwork(owner, false)
				f.AddSubnet(owner, false, id, "192.168.0.0/16", "192.168.0.1")
			},
			wantWrites:  []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.FindNetworks, neutronfake.TagNetwork, neutronfake.SubnetsOf, neutronfake.TagSubnet},
			wantReady:   "True/Provisioned",
			check: func(t *testing.T, f *fixture) {
				if n, s := len(f.neutron.Networks()), len(f.neutron.Subnets()); n != 1 || s != 1 {
					t.Errorf("%d networks and %d subnets in Neutron, want 1 and 1", n, s)
				}
				if st := f.network("net").Status; st.NetworkID != seededNet || st.SubnetID != seededSubnet {
					t.Errorf("status names %s/%s, want the adopted %s/%s", st.NetworkID, st.SubnetID, seededNet, seededSubnet)
				}
			},
		},
		{
			name:    "an untagged duplicate network (a create finished after its sender died) is deleted",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed: func(f *neutronfake.Neutron) {
				inSync("192.168.0.0/16", "192.168.0.1")(f)
				f.AddNetwork(owner, false)
			},
			wantNeutron: []string{neutronfake.DeleteNetwork},
			wantReady:   "True/Provisioned",
			wantEvents:  []string{"Warning DriftRepaired Deleted duplicate untagged Neutron network net-3"},
			check: func(t *testing.T, f *fixture) {
				if n := len(f.neutron.Networks()); n != 1 {
					t.Errorf("%d networks in Neutron, want 1", n)
				}
			},
		},
		{
			name:        "resources whose Network is gone are garbage-collected",
			network:     nil,
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets()) != 0 {
					t.Errorf("orphans left: %v %v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
		},
		{
			name:        "a subnet whose range was changed behind our back is replaced",
			network:     provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			seed:        inSync("10.9.0.0/16", "10.9.0.1"),
			wantWrites:  []string{"apply networks/status"},
			wantNeutron: []string{neutronfake.SubnetsOf, neutronfake.DeleteSubnet, neutronfake.CreateSubnet, neutronfake.TagSubnet},
			wantReady:   "True/Provisioned",
			wantEvents: []string{
				"Warning DriftRepaired Neutron subnet subnet-2 had cidr 10.9.0.0/16 instead of 192.168.0.0/16; deleted it",
				"Normal Created Created Neutron network net-1 with subnet subnet-3 (192.168.0.0/16, gateway 192.168.0.1)",
			},
		},
		{
			name:    "resources of an earlier Network of the same name are deleted, and new ones made",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed: func(f *neutronfake.Neutron) {
				old := neutron.Owner{Namespace: "default", Name: "net", UID: "an-earlier-uid"}
				id := f.AddNetwork(old, true)
				f.AddSubnet(old, true, id, "192.168.0.0/16", "192.168.0.1")
			},
			wantWrites: []string{"apply networks", "apply networks/status"},
			wantNeutron: []string{neutronfake.DeleteSubnet, neutronfake.DeleteNetwork,
				neutronfake.FindNetworks, neutronfake.CreateNetwork, neutronfake.TagNetwork, neutronfake.CreateSubnet, neutronfake.TagSubnet},
			wantReady: "True/Provisioned",
			wantEvents: []string{
				"Normal OrphanDeleted Deleted Neutron network net-1 left by an earlier Network of this name (uid an-earlier-uid)",
				"Normal Created Created Neutron network net-3 with subnet subnet-4 (192.168.0.0/16, gateway 192.168.0.1)",
			},
			check: func(t *testing.T, f *fixture) {
				for _, n := range f.neutron.Networks() {
					if n.Owner.UID != testUID {
						t.Errorf("network %s of uid %s left", n.ID, n.Owner.UID)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, tc.seed)
			for req, err := range tc.failOn {
				f.neutron.FailOn(req, err)
			}

			err := f.sync("net")

			var retry retryAfterError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("sync failed: %v", err)
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
			if got := f.events(); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
			if tc.check != nil {
				tc.check(t, f)
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
	f.controller.neutron = neutron.NewInventory(f.neutron, 0)
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
