package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/metrics"
	"github.com/samplecrd/network-controller/pkg/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/neutron/fake"
)

// The tests of this file are the specification of "never touch what you
// cannot prove is yours" (issue 22): each guard, and what happens without
// it.

var gone = neutron.Owner{Namespace: "default", Name: "gone", UID: otherUID}

// orphanKey is the queue key of gone's resources.
var orphanKey = queueKey{OrphanUID: otherUID}

// heldBack reads orphans_held_back_total{reason}.
func heldBack(t *testing.T, reason string) float64 {
	t.Helper()
	metrics.RegisterController()
	v, err := testutil.GetCounterMetricValue(metrics.OrphansHeldBack.WithLabelValues(reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOrphanCollectionDeletesOnlyWhatIsProvablyThisClustersAndGone: a
// resource whose Network is not in the cache is deleted only when every
// guard holds; each row takes one guard away.
func TestOrphanCollectionDeletesOnlyWhatIsProvablyThisClustersAndGone(t *testing.T) {
	tests := []struct {
		name string
		// seed stores gone's network (and subnet).
		seed func(f *neutronfake.Neutron)
		// opts changes the fixture's options.
		opts func(o *Options)
		// alive is a Network of gone's UID in the API server but not in
		// the informer's cache (a watch behind, a stale leader).
		alive       bool
		wantDeleted bool
		// wantHeld is the reason counted when nothing is deleted.
		wantHeld string
	}{
		{
			name:        "this cluster's, seen orphaned, and the API server confirms the Network is gone: deleted",
			seed:        func(f *neutronfake.Neutron) { seedOwned(f, ours, gone, "10.1.0.0/24", "10.1.0.1") },
			wantDeleted: true,
		},
		{
			name:     "another cluster given the same --cluster-name made it: held back",
			seed:     func(f *neutronfake.Neutron) { seedOwned(f, sameName, gone, "10.1.0.0/24", "10.1.0.1") },
			wantHeld: heldNotThisCluster,
		},
		{
			name: "its name records no cluster (made before names recorded it): held back",
			seed: func(f *neutronfake.Neutron) {
				f.AddNetwork(fmt.Sprintf("%s/%s/%s", gone.Namespace, gone.Name, gone.UID), ours.Description())
			},
			wantHeld: heldNotThisCluster,
		},
		{
			name:     "the cache lacks the Network but the API server has it: held back",
			seed:     func(f *neutronfake.Neutron) { seedOwned(f, ours, gone, "10.1.0.0/24", "10.1.0.1") },
			alive:    true,
			wantHeld: heldOwnerAlive,
		},
		{
			name:     "collection turned off: held back",
			seed:     func(f *neutronfake.Neutron) { seedOwned(f, ours, gone, "10.1.0.0/24", "10.1.0.1") },
			opts:     func(o *Options) { o.CollectOrphans = false },
			wantHeld: heldDisabled,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := defaultOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			f := newFixtureWith(t, opts, nil, tc.seed)
			if tc.alive {
				live := newNetwork("10.1.0.0/24", "10.1.0.1")
				live.Name, live.UID = gone.Name, gone.UID
				if err := f.client.Tracker().Add(live); err != nil {
					t.Fatal(err)
				}
			}
			before := map[string]float64{}
			for _, r := range []string{heldDisabled, heldNotThisCluster, heldOwnerAlive, heldCap} {
				before[r] = heldBack(t, r)
			}

			if err := f.syncKey(orphanKey); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if deleted := len(f.neutron.Networks()) == 0; deleted != tc.wantDeleted {
				t.Errorf("deleted = %v, want %v (Neutron requests %q)", deleted, tc.wantDeleted, f.neutron.Requests())
			}
			for r, b := range before {
				want := b
				if r == tc.wantHeld {
					want++
				}
				if got := heldBack(t, r); got != want {
					t.Errorf("orphans_held_back_total{reason=%q} = %v, want %v", r, got, want)
				}
			}
		})
	}
}

// TestAnOrphanWaitsForASecondSightingAGracePeriodLater: the first list that
// finds resources without their Network deletes nothing; a list begun the
// grace period later that finds them still orphaned lets them go.
func TestAnOrphanWaitsForASecondSightingAGracePeriodLater(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	opts := defaultOptions()
	opts.OrphanGracePeriod, opts.Clock = time.Minute, clk
	f := newFixtureWith(t, opts, nil, func(f *neutronfake.Neutron) { seedOwned(f, ours, gone, "10.1.0.0/24", "10.1.0.1") })
	_, ctx := ktesting.NewTestContext(t)

	sync := func() {
		t.Helper()
		if err := f.syncKey(orphanKey); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	clk.Step(59 * time.Second)
	f.controller.refreshNeutron(ctx)
	sync()
	if len(f.neutron.Networks()) != 1 {
		t.Fatal("collected before the grace period passed")
	}
	clk.Step(time.Second)
	f.controller.refreshNeutron(ctx)
	sync()
	if len(f.neutron.Networks()) != 0 {
		t.Error("not collected after a second sighting the grace period later")
	}
}

// TestTheCapHoldsBackTheRestAndWarnsOnce: a list allows at most
// MaxOrphansPerList collections; the rest wait for the next list, and one
// Warning on the namespace says so.
func TestTheCapHoldsBackTheRestAndWarnsOnce(t *testing.T) {
	opts := defaultOptions()
	opts.MaxOrphansPerList = 1
	var uids []types.UID
	f := newFixtureWith(t, opts, nil, func(f *neutronfake.Neutron) {
		for i := range 3 {
			uid := types.UID(fmt.Sprintf("9e9e9e9e-0000-4000-8000-00000000000%d", i))
			uids = append(uids, uid)
			seedOwned(f, ours, neutron.Owner{Namespace: "default", Name: fmt.Sprintf("gone-%d", i), UID: uid}, fmt.Sprintf("10.%d.0.0/24", i), "")
		}
	})
	for _, uid := range uids {
		if err := f.syncKey(queueKey{OrphanUID: uid}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(f.neutron.Networks()); got != 2 {
		t.Errorf("%d of 3 orphaned networks left after one list's collections, want 2", got)
	}
	events := f.events()
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning OrphanCollectionCapped") {
		t.Errorf("events = %q, want one OrphanCollectionCapped Warning", events)
	}
}

// TestWhileNeutronIsUnknownReadyNetworksAreNotWritten: before the first
// successful list (a restart or a new leader during an outage), a Network
// Ready for its generation is left as it is; one with no condition says why
// it waits, with one Warning, and the reason says when the credentials
// were refused.
func TestWhileNeutronIsUnknownReadyNetworksAreNotWritten(t *testing.T) {
	tests := []struct {
		name       string
		network    *samplecrdv1.Network
		listErr    error
		wantWrites []string
		wantReason string
	}{
		{
			name:    "a Ready Network: no write",
			network: provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet),
			listErr: errUnavailable,
		},
		{
			name:       "a new Network: NeutronUnavailable, once",
			network:    newNetwork("192.168.0.0/16", "192.168.0.1"),
			listErr:    errUnavailable,
			wantWrites: []string{"apply networks/status"},
			wantReason: samplecrdv1.ReasonNeutronUnavailable,
		},
		{
			name:       "a new Network, credentials refused: AuthenticationFailed, once",
			network:    newNetwork("192.168.0.0/16", "192.168.0.1"),
			listErr:    &neutron.AuthError{Op: "connecting to the cloud", Err: errors.New("401")},
			wantWrites: []string{"apply networks/status"},
			wantReason: samplecrdv1.ReasonAuthenticationFailed,
		},
		{
			name: "a Network Ready for an older generation: says why it waits",
			network: func() *samplecrdv1.Network {
				n := provisioned(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet, seededSubnet)
				n.Generation = 2
				return n
			}(),
			listErr:    errUnavailable,
			wantWrites: []string{"apply networks/status"},
			wantReason: samplecrdv1.ReasonNeutronUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.network, nil)
			f.neutron.FailOn(neutronfake.ListNetworks, tc.listErr)
			f.controller.inventory = neutron.NewInventory(f.neutron, ours)
			_, ctx := ktesting.NewTestContext(t)
			f.controller.refreshNeutron(ctx)

			for range 3 {
				if err := f.sync("net"); !errors.Is(err, neutron.ErrNotSynced) {
					t.Fatalf("sync returned %v, want ErrNotSynced", err)
				}
				// The informer brings the controller's own write back.
				if err := f.controller.networksByUID.Update(f.network("net")); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.writes(); fmt.Sprint(got) != fmt.Sprint(tc.wantWrites) {
				t.Errorf("API writes = %q, want %q", got, tc.wantWrites)
			}
			events := f.events()
			if tc.wantReason == "" {
				if len(events) != 0 {
					t.Errorf("events = %q, want none", events)
				}
				return
			}
			cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != tc.wantReason {
				t.Errorf("Ready = %+v, want False/%s", cond, tc.wantReason)
			}
			if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+tc.wantReason) {
				t.Errorf("events = %q, want one Warning %s", events, tc.wantReason)
			}
		})
	}
}

// TestMessagesAreBounded: whatever Neutron answers, a condition message
// stays within maxMessageLength and says how much it left out; a list of
// ports names the first ten and counts the rest.
func TestMessagesAreBounded(t *testing.T) {
	long := notReady(samplecrdv1.ReasonNeutronUnavailable, "body: "+strings.Repeat("é", 40000))
	if len(long.Message) > maxMessageLength || !strings.Contains(long.Message, "more characters") {
		t.Errorf("a %d-byte message became %d bytes ending %q", 6+80000, len(long.Message), long.Message[len(long.Message)-40:])
	}
	if !strings.HasPrefix(long.Message, "body: é") || !utf8Valid(long.Message) {
		t.Error("the cut message does not keep its beginning as valid text")
	}
	var ports []string
	for i := range 25 {
		ports = append(ports, fmt.Sprintf("port-%d", i))
	}
	if got := boundList(ports); !strings.HasSuffix(got, "port-9 and 15 more") || strings.Contains(got, "port-10") {
		t.Errorf("boundList = %q", got)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

// TestAHalfDoneAdoptionKeepsItsRecord: the subnet is marked, the network's
// mark fails (a 500); the status written for that failure keeps the record
// of the names, and the next sync, with the record in the cache, finishes
// the adoption.
func TestAHalfDoneAdoptionKeepsItsRecord(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade-subnet", "by hand", "192.168.0.0/16", "192.168.0.1")
	})
	f.neutron.FailOn(neutronfake.UpdateNetwork, neutron.ErrorForResponse("updating network", 500, "", "boom"))
	if err := f.sync("net"); err == nil {
		t.Fatal("the sync whose network update failed succeeded")
	}
	want := &samplecrdv1.AdoptedResources{NetworkID: seededNet, NetworkName: "handmade", NetworkDescription: "made by a person",
		SubnetID: seededSubnet, SubnetName: "handmade-subnet", SubnetDescription: "by hand"}
	st := f.network("net").Status
	if st.Adopted == nil || *st.Adopted != *want {
		t.Fatalf("status.adopted after the failure = %+v, want %+v", st.Adopted, want)
	}

	f.neutron.FailOn(neutronfake.UpdateNetwork, nil)
	f.controller.neutronUp = breaker{clock: f.controller.clock}
	if err := f.controller.networksByUID.Update(f.network("net")); err != nil {
		t.Fatal(err)
	}
	if err := f.sync("net"); err != nil {
		t.Fatalf("the second sync: %v", err)
	}
	n := f.network("net")
	if cond := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v after the second sync", cond)
	}
	if n.Status.Adopted == nil || *n.Status.Adopted != *want {
		t.Errorf("status.adopted = %+v, want the record kept", n.Status.Adopted)
	}
}

// TestAnOrphanWithinItsGracePeriodCostsNoList: an orphan sighted once asks
// for one list, a grace period later; syncing its key again meanwhile asks
// for nothing more (each extra request would be a list of all Neutron).
func TestAnOrphanWithinItsGracePeriodCostsNoList(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	opts := defaultOptions()
	opts.OrphanGracePeriod, opts.Clock = time.Minute, clk
	opts.LateCompletionGrace = time.Hour
	f := newFixtureWith(t, opts, nil, func(f *neutronfake.Neutron) { seedOwned(f, ours, gone, "10.1.0.0/24", "10.1.0.1") })
	// The fixture's list sighted the orphan and asked for the second list.
	if n := clk.Waiters(); n != 1 {
		t.Fatalf("%d refreshes pending after the first sighting, want 1", n)
	}
	for range 5 {
		if err := f.syncKey(orphanKey); err != nil {
			t.Fatal(err)
		}
	}
	if n := clk.Waiters(); n != 1 {
		t.Errorf("%d refreshes pending after syncing the orphan within its grace period, want still 1", n)
	}
}

// TestAnAdoptionWhoseRecordIsNotCachedYetWaits: the subnet already carries
// this Network's mark (an earlier attempt marked it) but the cache has not
// yet brought the record of its names back. Nothing is recorded from the
// marked subnet, whose names are ours now, not its own: the sync waits,
// Provisioning, and writes nothing to Neutron.
func TestAnAdoptionWhoseRecordIsNotCachedYetWaits(t *testing.T) {
	f := newFixture(t, adopting(newNetwork("192.168.0.0/16", "192.168.0.1"), seededNet), func(f *neutronfake.Neutron) {
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, ours.ResourceName(owner), ours.Description(), "192.168.0.0/16", "192.168.0.1")
	})
	if err := f.sync("net"); !errors.Is(err, errAdoptionRecordPending) {
		t.Fatalf("sync returned %v, want errAdoptionRecordPending", err)
	}
	for _, r := range f.neutron.Requests() {
		if r == neutronfake.UpdateNetwork || r == neutronfake.UpdateSubnet {
			t.Errorf("Neutron request %s while the record is pending", r)
		}
	}
	cond := meta.FindStatusCondition(f.network("net").Status.Conditions, samplecrdv1.ConditionReady)
	if cond == nil || cond.Reason != samplecrdv1.ReasonProvisioning || f.network("net").Status.Adopted != nil {
		t.Errorf("Ready = %+v, adopted = %+v; want Provisioning and no record taken from a marked subnet", cond, f.network("net").Status.Adopted)
	}
}

// TestAnInvalidSpecIsCountedAsInvalidAndNotRetried: a spec Neutron would
// refuse ends its sync without a retry and is counted as
// syncs_total{result="invalid"}, not as a success.
func TestAnInvalidSpecIsCountedAsInvalidAndNotRetried(t *testing.T) {
	metrics.RegisterController()
	count := func(result string) float64 {
		v, err := testutil.GetCounterMetricValue(metrics.SyncsTotal.WithLabelValues(result))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	f := newFixture(t, withSpec(newNetwork("10.0.0.0/24", ""), func(s *samplecrdv1.NetworkSpec) {
		s.AllocationPools = []samplecrdv1.AllocationPool{{Start: "10.0.0.10", End: "10.0.0.20"}, {Start: "10.0.0.20", End: "10.0.0.30"}}
	}), nil)
	invalid, success := count(metrics.ResultInvalid), count(metrics.ResultSuccess)
	key := queueKey{ObjectName: cache.ObjectName{Namespace: "default", Name: "net"}}
	_, ctx := ktesting.NewTestContext(t)
	f.controller.workqueue.Add(key)
	f.controller.processNextWorkItem(ctx)
	if got := count(metrics.ResultInvalid) - invalid; got != 1 {
		t.Errorf("syncs_total{result=invalid} rose by %v, want 1", got)
	}
	if got := count(metrics.ResultSuccess) - success; got != 0 {
		t.Errorf("syncs_total{result=success} rose by %v, want 0", got)
	}
	if f.controller.workqueue.Len() != 0 || f.controller.workqueue.NumRequeues(key) != 0 {
		t.Error("the key of an invalid spec was queued again")
	}
}
