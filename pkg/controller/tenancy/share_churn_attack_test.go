package tenancy

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
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
// other out. Each build is a new Inventory whose pace has seen no list,
// and Set.start lists its project at once; so team-a lists the shared
// project as often as it can make its Networks sync, not its part. Within
// one gap of fake time the project may be listed by team-a at most once
// more than before the churn began (the first build's list).
//
// The Registry is built as Build builds it (an Inventory per credential,
// Options.Share its share), and each project started as Set.start starts
// it: a list, then the Run loop.
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
				Build: func(key Key, client neutron.Interface) *Project {
					return &Project{Key: key, Inventory: inventory.New(client, ours, inventory.Options{
						ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour, Clock: clk,
						Share: func() int { return r.Share(key) },
					})}
				},
				Keeper:          SecretKeeper{Secrets: kube.CoreV1(), Namespace: controllerNamespace},
				Max:             10,
				MaxPerNamespace: tc.perNamespace,
				RereadAfter:     time.Hour,
				Clock:           clk,
			})
			r.Start(ctx, func(ctx context.Context, key Key, p *Project) {
				if key == (Key{}) {
					return
				}
				// Set.start, with its first list made before For returns,
				// so that the count below needs no wait.
				_, _ = p.Inventory.Refresh(ctx)
				go p.Inventory.Run(ctx, func(context.Context, inventory.Listed) {})
			})
			for _, ns := range []string{"team-b", "team-a"} {
				if _, err := r.For(ctx, naming(ns, "s1")); err != nil {
					t.Fatal(err)
				}
			}
			before := project.lists.Load()
			for i := range rounds {
				tc.again(t, r, i)
			}
			// Team-a listed the project when its credential was first
			// built, just before the count, at this very instant: its part
			// allows no other list within the gap. One is tolerated.
			if got := project.lists.Load() - before; got > 1 {
				t.Errorf("team-a listed the shared project %d times within no time at all, want at most 1: its part is one list per %v",
					got, 2*inventory.MinListGap)
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
