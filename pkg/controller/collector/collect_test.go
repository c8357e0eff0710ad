package collector

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// The tests of this file are the specification of "never touch what you
// cannot prove is yours" for what deleted Networks leave behind: each
// guard, and what happens without it.

var gone = neutron.Owner{Namespace: "default", Name: "gone", UID: otherUID}

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
		// cfg changes the fixture's Config.
		cfg func(c *Config)
		// alive is a Network of gone's UID in the API server but not in
		// the informer's cache (a watch behind, a stale leader).
		alive       bool
		wantDeleted bool
		// wantHeld is the reason counted when nothing is deleted.
		wantHeld string
	}{
		{
			name:        "this cluster's, seen orphaned, and the API server confirms the Network is gone: deleted",
			seed:        func(f *neutronfake.Neutron) { f.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1") },
			wantDeleted: true,
		},
		{
			name:     "another cluster given the same --cluster-name made it: held back",
			seed:     func(f *neutronfake.Neutron) { f.SeedOwned(sameName, gone, "10.1.0.0/24", "10.1.0.1") },
			wantHeld: metrics.HeldNotThisCluster,
		},
		{
			name: "its name records no cluster (made before names recorded it): held back",
			seed: func(f *neutronfake.Neutron) {
				f.AddNetwork(fmt.Sprintf("%s/%s/%s", gone.Namespace, gone.Name, gone.UID), ours.Description())
			},
			wantHeld: metrics.HeldNotThisCluster,
		},
		{
			name:     "the cache lacks the Network but the API server has it: held back",
			seed:     func(f *neutronfake.Neutron) { f.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1") },
			alive:    true,
			wantHeld: metrics.HeldOwnerAlive,
		},
		{
			name:     "collection turned off: held back",
			seed:     func(f *neutronfake.Neutron) { f.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1") },
			cfg:      func(c *Config) { c.Enabled = false },
			wantHeld: metrics.HeldDisabled,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			f := newFixtureWith(t, cfg, nil, nil, tc.seed)
			if tc.alive {
				live := newNetwork("10.1.0.0/24", "10.1.0.1")
				live.Name, live.UID = gone.Name, gone.UID
				if err := f.client.Tracker().Add(live); err != nil {
					t.Fatal(err)
				}
				f.uncached = map[types.UID]bool{gone.UID: true}
			}
			before := map[string]float64{}
			for _, r := range []string{metrics.HeldDisabled, metrics.HeldNotThisCluster, metrics.HeldOwnerAlive, metrics.HeldCap} {
				before[r] = heldBack(t, r)
			}

			if out := f.collect(gone.UID); out.Err != nil {
				t.Fatalf("collect: %v", out.Err)
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
	cfg := defaultConfig()
	cfg.GracePeriod = time.Minute
	f := newFixtureWith(t, cfg, clk, nil, func(f *neutronfake.Neutron) { f.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1") })

	sync := func() {
		t.Helper()
		if out := f.collect(gone.UID); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	sync()
	clk.Step(59 * time.Second)
	f.list()
	sync()
	if len(f.neutron.Networks()) != 1 {
		t.Fatal("collected before the grace period passed")
	}
	clk.Step(time.Second)
	f.list()
	sync()
	if len(f.neutron.Networks()) != 0 {
		t.Error("not collected after a second sighting the grace period later")
	}
}

// TestTheCapHoldsBackTheRestAndWarnsOnce: a list allows at most
// MaxOrphansPerList collections; the rest wait for the next list, and one
// Warning on the namespace says so.
func TestTheCapHoldsBackTheRestAndWarnsOnce(t *testing.T) {
	cfg := defaultConfig()
	cfg.MaxPerList = 1
	var uids []types.UID
	f := newFixtureWith(t, cfg, nil, nil, func(f *neutronfake.Neutron) {
		for i := range 3 {
			uid := types.UID(fmt.Sprintf("9e9e9e9e-0000-4000-8000-00000000000%d", i))
			uids = append(uids, uid)
			f.SeedOwned(ours, neutron.Owner{Namespace: "default", Name: fmt.Sprintf("gone-%d", i), UID: uid}, fmt.Sprintf("10.%d.0.0/24", i), "")
		}
	})
	for _, uid := range uids {
		if out := f.collect(uid); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	if got := len(f.neutron.Networks()); got != 2 {
		t.Errorf("%d of 3 orphaned networks left after one list's collections, want 2", got)
	}
	events := f.takeEvents()
	if len(events) != 1 || events[0] != "Warning OrphanCollectionCapped" {
		t.Errorf("events = %q, want one OrphanCollectionCapped Warning", events)
	}
}

// TestAnOrphanWithinItsGracePeriodCostsNoList: an orphan sighted once asks
// for one list, a grace period later; syncing its key again meanwhile asks
// for nothing more (each extra request would be a list of all Neutron).
func TestAnOrphanWithinItsGracePeriodCostsNoList(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	cfg := defaultConfig()
	cfg.GracePeriod = time.Minute
	f := newFixtureWith(t, cfg, clk, nil, func(f *neutronfake.Neutron) { f.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1") })
	// The fixture's list sighted the orphan and asked for the second list,
	// due a grace period later, not now.
	if f.inv.ListDue() {
		t.Fatal("a list is due at once after the first sighting")
	}
	for range 5 {
		if out := f.collect(gone.UID); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	if f.inv.ListDue() {
		t.Error("collecting the orphan within its grace period asked for a list now")
	}
	clk.Step(time.Minute)
	// The refresh queue moves a due request on its own goroutine.
	if err := wait.PollUntilContextTimeout(f.ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return f.inv.ListDue(), nil
	}); err != nil {
		t.Error("no list is due a grace period after the first sighting")
	}
}

// TestOrphansOfOtherNamespacesAreNotSighted: a controller limited to one
// namespace (--namespace) cannot see the Networks of others, so their
// resources are never queued as orphans, nor is anything foreign.
func TestOrphansOfOtherNamespacesAreNotSighted(t *testing.T) {
	elsewhere := neutron.Owner{Namespace: "elsewhere", Name: "x", UID: "5e5e5e5e-0000-4000-8000-000000000005"}
	cfg := defaultConfig()
	cfg.Namespace = "default"
	f := newFixtureWith(t, cfg, nil, nil, func(n *neutronfake.Neutron) {
		n.SeedOwned(ours, gone, "10.1.0.0/24", "10.1.0.1")
		n.SeedOwned(ours, elsewhere, "10.2.0.0/24", "10.2.0.1")
		seedForeign(n)
	})
	got := f.o.Sight(time.Now(), f.inv.UIDs())
	if len(got) != 1 || got[0] != gone.UID {
		t.Errorf("Sight = %v, want only %s", got, gone.UID)
	}
	if out := f.collect(elsewhere.UID); out.Err != nil || len(f.neutron.Requests()) != 0 {
		t.Errorf("collecting another namespace's resources: %v, requests %q", out.Err, f.neutron.Requests())
	}
	untouched(t, f)
}

// TestCollectOrphansByUID is the table of collections of what a Network
// that is gone left behind: what each asks of Neutron.
func TestCollectOrphansByUID(t *testing.T) {
	for _, tc := range []struct {
		name string
		// network, when set, is in the API server and the cache.
		network *samplecrdv2.Network
		seed    func(*neutronfake.Neutron)
		// afterList changes Neutron after the fixture's first list,
		// before the collection: what changes between the inventory's
		// lists.
		afterList   func(*neutronfake.Neutron)
		orphan      types.UID
		wantRequeue reconcile.Requeue
		wantNeutron []string
		check       func(t *testing.T, f *fixture)
	}{
		{
			name:        "what Neutron holds for a Network that is gone is collected, by its UID",
			seed:        inSync("192.168.0.0/16", "192.168.0.1"),
			orphan:      testUID,
			wantNeutron: []string{neutronfake.DeleteNetwork},
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks())+len(f.neutron.Subnets()) != 0 {
					t.Errorf("orphans left: %v %v", f.neutron.Networks(), f.neutron.Subnets())
				}
			},
		},
		{
			name:   "a gone Network's router of its own goes with its network, its interface first; another's router stays",
			seed:   func(f *neutronfake.Neutron) { seedOwnRouter(f); f.AddRouter("edge") },
			orphan: testUID,
			wantNeutron: []string{neutronfake.DeleteNetwork, neutronfake.PortsOf, neutronfake.RemoveRouterInterface,
				neutronfake.DeleteNetwork, neutronfake.FindRouter, neutronfake.DeleteRouter},
			check: func(t *testing.T, f *fixture) {
				if rs := f.neutron.Routers(); len(rs) != 1 || rs[0].Name != "edge" {
					t.Errorf("routers left: %+v, want only edge", rs)
				}
			},
		},
		{
			name:    "nothing is collected for a UID whose Network exists",
			network: newNetwork("192.168.0.0/16", "192.168.0.1"),
			seed:    inSync("192.168.0.0/16", "192.168.0.1"),
			orphan:  testUID,
		},
		{
			name:   "another cluster's resources of a UID with no Network here are not orphans of ours",
			seed:   seedForeign,
			orphan: otherUID,
			check:  untouched,
		},
		{
			name:        "the controller's clouds.yaml swapped to B after A was listed: an orphan of A is not collected through B",
			seed:        func(f *neutronfake.Neutron) { f.SetProject("project-a"); inSync("192.168.0.0/16", "192.168.0.1")(f) },
			afterList:   func(f *neutronfake.Neutron) { f.SetProject("project-b") },
			orphan:      testUID,
			wantRequeue: reconcile.AddRateLimited,
			check: func(t *testing.T, f *fixture) {
				if len(f.neutron.Networks()) != 1 {
					t.Errorf("project A's orphan was deleted through B's credentials: %+v", f.neutron.Networks())
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var networks []*samplecrdv2.Network
			if tc.network != nil {
				networks = append(networks, tc.network)
			}
			f := newFixtureWith(t, defaultConfig(), nil, networks, tc.seed)
			if tc.afterList != nil {
				tc.afterList(f.neutron)
			}
			out := f.collect(tc.orphan)
			if out.Requeue != tc.wantRequeue {
				t.Fatalf("requeue = %v (%v), want %v", out.Requeue, out.Err, tc.wantRequeue)
			}
			if got := f.neutron.Requests(); !slices.Equal(got, tc.wantNeutron) {
				t.Errorf("Neutron requests = %q, want %q", got, tc.wantNeutron)
			}
			if got := f.takeEvents(); len(got) != 0 {
				t.Errorf("events = %q, want none", got)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}
