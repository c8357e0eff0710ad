package tenancy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/collector"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	versionedfake "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	informers "github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

// placedLister is a fake Neutron reached at place, holding nothing marked,
// which counts the network lists made of projectA.
type placedLister struct {
	*neutronfake.Neutron
	place neutron.Place
	lists *atomic.Int64
}

func (p placedLister) Place(context.Context) (neutron.Place, error) { return p.place, nil }

func (p placedLister) ListNetworks(context.Context, string, func([]neutron.Network) error) error {
	if p.place.ProjectID == projectA.ProjectID {
		p.lists.Add(1)
	}
	return nil
}

func (placedLister) ListSubnets(context.Context, string, func([]neutron.Subnet) error) error {
	return nil
}

func (placedLister) ListRouters(context.Context, string, func([]neutron.Router) error) error {
	return nil
}

func (placedLister) ListIPAvailabilities(context.Context, func([]neutron.NetworkIPs) error) error {
	return nil
}

// TestACredentialBuiltAgainListsOnItsNamespacesPace: team-a and team-b
// each name a credential of projectA, so team-a's part is one list per
// 2 × MinListGap. Team-a, hostile, has its credential of projectA built
// again: by deleting its last Network and naming it again (Release, For),
// by naming two Secrets of the project with a per-namespace bound of one
// so that each pushes the other out, or by letting it go until a build of
// another project has pruned the paces. It does so ten times at once, or
// once, a one-namespace gap after its last list, when its pace, asked
// whether it is idle without team-a counted, would say yes. Each build is
// a new Inventory, but on team-a's pace at projectA (paces.go), kept until
// idle at the share team-a has when it comes back: no list within team-a's
// gap, then one, the latest credential's first, so nothing is lost.
//
// The Registry is built as Build builds it (an Inventory per credential,
// on the registry's pace, Options.Share its share), and each project is
// started by Set.start: a list when due, then the Run loop.
func TestACredentialBuiltAgainListsOnItsNamespacesPace(t *testing.T) {
	release := func(t *testing.T, r *Registry) {
		if err := r.Release(t.Context(), Key{"team-a", "s1", "team"}); err != nil {
			t.Fatal(err)
		}
	}
	name := func(t *testing.T, r *Registry, secret string) {
		if _, err := r.For(t.Context(), naming("team-a", secret)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name         string
		perNamespace int
		// secrets are team-a's, each with the place it reaches.
		secrets map[string]neutron.Place
		// after is how long after the first lists team-a comes back,
		// rounds how many times.
		after  time.Duration
		rounds int
		// again has team-a's credential of projectA built anew, round i;
		// place sets where a credential connected next reaches.
		again func(t *testing.T, r *Registry, place func(neutron.Place), i int)
	}{
		{"deleted and named again, ten times at once", 0, map[string]neutron.Place{"s1": projectA}, 0, 10,
			func(t *testing.T, r *Registry, _ func(neutron.Place), _ int) { release(t, r); name(t, r, "s1") }},
		{"pushed out by its namespace's other credential, ten times at once", 1, map[string]neutron.Place{"s1": projectA, "s2": projectA}, 0, 10,
			func(t *testing.T, r *Registry, _ func(neutron.Place), i int) {
				name(t, r, fmt.Sprintf("s%d", 1+(i+1)%2))
			}},
		{"deleted and named again, a one-namespace gap later", 0, map[string]neutron.Place{"s1": projectA}, inventory.MinListGap + 100*time.Millisecond, 1,
			func(t *testing.T, r *Registry, _ func(neutron.Place), _ int) { release(t, r); name(t, r, "s1") }},
		{"pushed out by its namespace's other credential, a one-namespace gap later", 1, map[string]neutron.Place{"s1": projectA, "s2": projectA}, inventory.MinListGap + 100*time.Millisecond, 1,
			func(t *testing.T, r *Registry, _ func(neutron.Place), _ int) { name(t, r, "s2") }},
		{"let go, forgotten by a build of another project, named again", 0, map[string]neutron.Place{"s1": projectA, "s2": projectB}, inventory.MinListGap + 100*time.Millisecond, 1,
			func(t *testing.T, r *Registry, place func(neutron.Place), _ int) {
				release(t, r)
				place(projectB)
				name(t, r, "s2")
				place(projectA)
				name(t, r, "s1")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			secrets := []runtime.Object{secret("team-b", "s1", keystone)}
			for s := range tc.secrets {
				secrets = append(secrets, secret("team-a", s, keystone))
			}
			kube := fake.NewClientset(secrets...)
			start := time.Unix(1e9, 0)
			clk := testingclock.NewFakeClock(start)
			shared, lists := neutronfake.New(), &atomic.Int64{}
			var mu sync.Mutex
			at := projectA
			place := func(p neutron.Place) { mu.Lock(); at = p; mu.Unlock() }
			var r *Registry
			r = NewRegistry(&Project{}, RegistryOptions{
				Secrets: kube.CoreV1(),
				Own:     ownCloud(t),
				Connect: func(*neutron.Cloud) neutron.Interface {
					mu.Lock()
					defer mu.Unlock()
					return placedLister{Neutron: shared, place: at, lists: lists}
				},
				Build: func(key Key, client neutron.Interface, pace *inventory.Pace) *Project {
					inv := inventory.New(client, ours, inventory.Options{
						ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: clk,
						Pace: pace, Share: func() int { return r.Share(key) },
					})
					return &Project{Key: key, Inventory: inv, Orphans: collector.NewOrphans(inv, collector.Config{Mark: ours, MaxPerList: 1})}
				},
				Keeper:          SecretKeeper{Secrets: kube.CoreV1(), Namespace: controllerNamespace},
				Max:             10,
				MaxPerNamespace: tc.perNamespace,
				RereadAfter:     time.Hour,
				Clock:           clk,
			})
			// Each project is started by the Set's own start, as Set.Start
			// does, but for the own project, which has no inventory here.
			set, err := newSet(informers.NewSharedInformerFactory(versionedfake.NewClientset(), 0).Samplecrd().V2().Networks(),
				r, nil, setOptions{Recorder: record.NewFakeRecorder(10), MaxRetryDelay: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			set.enqueue = func(any) {}
			r.Start(ctx, func(ctx context.Context, key Key, p *Project) {
				if key != (Key{}) {
					set.start(ctx, key, p)
				}
			})
			for _, ns := range []string{"team-b", "team-a"} {
				if _, err := r.For(ctx, naming(ns, "s1")); err != nil {
					t.Fatal(err)
				}
			}
			listed := func(want int64) func(context.Context) (bool, error) {
				return func(context.Context) (bool, error) { return lists.Load() >= want, nil }
			}
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, listed(2)); err != nil {
				t.Fatalf("the first lists of team-a and team-b: %d, want 2", lists.Load())
			}
			clk.Step(tc.after)
			for i := range tc.rounds {
				tc.again(t, r, place, i)
			}
			// Within team-a's gap, moved a step at a time, no list comes
			// (on the goroutines of its builds) however long it is given.
			gap := 2 * inventory.MinListGap
			for step := 100 * time.Millisecond; clk.Since(start)+step < gap; clk.Step(step) {
				if wait.PollUntilContextTimeout(ctx, time.Millisecond, 2*time.Millisecond, true, listed(3)) == nil {
					t.Fatalf("team-a listed projectA again %v after its last list, its part being one list per %v",
						clk.Since(start), gap)
				}
			}
			clk.Step(gap)
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, listed(3)); err != nil {
				t.Fatal("team-a's credential built again never listed once its pace allowed")
			}
		})
	}
}
