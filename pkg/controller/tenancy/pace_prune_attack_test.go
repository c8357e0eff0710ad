package tenancy

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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

func (p placedLister) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
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

// TestAPaceIsNotForgottenWithinTheGapItsNamespaceWouldHaveBack: team-a and
// team-b each name a credential of projectA, so team-a's part is one list
// per 2 × MinListGap. Team-a lets its credential go right after a list
// and, one MinListGap later, has one of projectA built again. While
// team-a holds no credential there, projectA has one namespace, so a
// pace asked whether it is idle at that share says yes after a single
// gap, and is forgotten by whatever build comes next (team-a's own, or
// one of its credentials of another project): the credential built again
// starts on a new pace and lists at once, at twice team-a's part, and the
// two namespaces together list projectA half again as often as one would.
// The gap that matters is the one team-a has when it comes back, its
// namespace counted.
func TestAPaceIsNotForgottenWithinTheGapItsNamespaceWouldHaveBack(t *testing.T) {
	for _, tc := range []struct {
		name         string
		perNamespace int
		// secrets are team-a's, each with the place it reaches.
		secrets map[string]neutron.Place
		// again has team-a's credential of projectA built anew.
		again func(t *testing.T, r *Registry, place func(neutron.Place))
	}{
		{"deleted and named again", 0, map[string]neutron.Place{"s1": projectA},
			func(t *testing.T, r *Registry, _ func(neutron.Place)) {
				if err := r.Release(t.Context(), Key{"team-a", "s1", "team"}); err != nil {
					t.Fatal(err)
				}
				if _, err := r.For(t.Context(), naming("team-a", "s1")); err != nil {
					t.Fatal(err)
				}
			}},
		{"pushed out by its namespace's other credential of the project", 1, map[string]neutron.Place{"s1": projectA, "s2": projectA},
			func(t *testing.T, r *Registry, _ func(neutron.Place)) {
				if _, err := r.For(t.Context(), naming("team-a", "s2")); err != nil {
					t.Fatal(err)
				}
			}},
		{"let go, forgotten by a build of another project, named again", 0, map[string]neutron.Place{"s1": projectA, "s2": projectB},
			func(t *testing.T, r *Registry, place func(neutron.Place)) {
				if err := r.Release(t.Context(), Key{"team-a", "s1", "team"}); err != nil {
					t.Fatal(err)
				}
				place(projectB)
				if _, err := r.For(t.Context(), naming("team-a", "s2")); err != nil {
					t.Fatal(err)
				}
				place(projectA)
				if _, err := r.For(t.Context(), naming("team-a", "s1")); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			secrets := []*corev1.Secret{secret("team-b", "s1", keystone)}
			for s := range tc.secrets {
				secrets = append(secrets, secret("team-a", s, keystone))
			}
			kube := fake.NewClientset(objects(secrets)...)
			start := time.Unix(1e9, 0)
			clk := testingclock.NewFakeClock(start)
			shared := neutronfake.New()
			lists := &atomic.Int64{}
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
			// One namespace's gap later, team-a comes back to projectA.
			clk.Step(inventory.MinListGap + 100*time.Millisecond)
			tc.again(t, r, place)
			gap := 2 * inventory.MinListGap
			for step := 100 * time.Millisecond; clk.Since(start)+step < gap; clk.Step(step) {
				if wait.PollUntilContextTimeout(ctx, time.Millisecond, 2*time.Millisecond, true, listed(3)) == nil {
					t.Fatalf("team-a listed projectA again %v after its last list, its part being one list per %v",
						clk.Since(start), gap)
				}
			}
			clk.Step(gap)
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, listed(3)); err != nil {
				t.Fatalf("team-a's credential built again never listed once its pace allowed")
			}
		})
	}
}
