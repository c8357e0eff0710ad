package tenancy

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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

// listedProject is one OpenStack project of a fake Neutron, reached by
// every credential connected to it, that counts its network lists.
type listedProject struct {
	*neutronfake.Neutron
	lists *atomic.Int64
}

func (p listedProject) Place(context.Context) (neutron.Place, error) { return projectA, nil }

func (p listedProject) ListNetworks(ctx context.Context, description string, visit func([]neutron.Network) error) error {
	p.lists.Add(1)
	return p.Neutron.ListNetworks(ctx, description, visit)
}

// TestACredentialBuiltAgainKeepsItsNamespacesPartOfTheProject: team-a and
// team-b each name a credential of one project, so each namespace's part
// is one list per 2 × MinListGap. Team-a, hostile, has its credential
// built again and again without waiting: by deleting its last Network and
// making one again (Release, then For), or by naming two Secrets of the
// project with a per-namespace bound of one, so that each pushes the
// other out. Each build is a new Inventory, but on its namespace's pace
// at the project (paces.go), so its first list waits for team-a's part
// like any other: none within the gap, then one.
//
// The Registry is built as Build builds it (an Inventory per credential,
// on the registry's pace, Options.Share its share), and each project is
// started by Set.start: a list when due, then the Run loop.
func TestACredentialBuiltAgainKeepsItsNamespacesPartOfTheProject(t *testing.T) {
	const rounds = 10
	for _, tc := range []struct {
		name         string
		perNamespace int
		secrets      []string
		// again has team-a's credential built anew, round i.
		again func(t *testing.T, r *Registry, i int)
	}{
		{"deleted and made again", 0, []string{"s1"}, func(t *testing.T, r *Registry, _ int) {
			if err := r.Release(t.Context(), Key{"team-a", "s1", "team"}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.For(t.Context(), naming("team-a", "s1")); err != nil {
				t.Fatal(err)
			}
		}},
		{"pushed out by its own namespace's other credential", 1, []string{"s1", "s2"}, func(t *testing.T, r *Registry, i int) {
			if _, err := r.For(t.Context(), naming("team-a", fmt.Sprintf("s%d", 1+(i+1)%2))); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			secrets := []*corev1.Secret{secret("team-b", "s1", keystone)}
			for _, s := range tc.secrets {
				secrets = append(secrets, secret("team-a", s, keystone))
			}
			kube := fake.NewClientset(objects(secrets)...)
			clk := testingclock.NewFakeClock(time.Unix(1e9, 0))
			project := listedProject{Neutron: neutronfake.New(), lists: &atomic.Int64{}}
			var r *Registry
			r = NewRegistry(&Project{}, RegistryOptions{
				Secrets: kube.CoreV1(),
				Own:     ownCloud(t),
				Connect: func(*neutron.Cloud) neutron.Interface { return project },
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
			lists := func(want int64) func(context.Context) (bool, error) {
				return func(context.Context) (bool, error) { return project.lists.Load() >= want, nil }
			}
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, lists(2)); err != nil {
				t.Fatalf("the first lists of team-a and team-b: %d, want 2", project.lists.Load())
			}
			for i := range rounds {
				tc.again(t, r, i)
			}
			// Within team-a's gap, moved a step at a time, no list comes
			// (on the goroutines of its builds) however long it is given.
			gap := 2 * inventory.MinListGap
			for step := 100 * time.Millisecond; clk.Since(time.Unix(1e9, 0))+step < gap; clk.Step(step) {
				if wait.PollUntilContextTimeout(ctx, time.Millisecond, 2*time.Millisecond, true, lists(3)) == nil {
					t.Fatalf("team-a listed the shared project %d more times within %v, its part of it: one list per %v",
						project.lists.Load()-2, clk.Since(time.Unix(1e9, 0)), gap)
				}
			}
			// Then one, the latest credential's first: nothing was lost.
			clk.Step(gap)
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, lists(3)); err != nil {
				t.Fatalf("team-a's latest credential never listed once its pace allowed")
			}
		})
	}
}

// objects are secrets as the fake clientset takes them.
func objects(secrets []*corev1.Secret) []runtime.Object {
	objs := make([]runtime.Object, len(secrets))
	for i, s := range secrets {
		objs[i] = s
	}
	return objs
}
