package tenancy

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	"github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
	listersv2 "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v2"
)

// newPolicy is a Policy over caches holding the namespaces team-a
// (labelled team=a), team-b (team=b) and the policies.
func newPolicy(t *testing.T, defaults Defaults, policies ...*samplecrdv1.TenantPolicy) *Policy {
	t.Helper()
	return newPolicyWith(t, defaults, nil, policies...)
}

// newPolicyWith is newPolicy with the Networks in the cache.
func newPolicyWith(t *testing.T, defaults Defaults, networks []*samplecrdv2.Network, policies ...*samplecrdv1.TenantPolicy) *Policy {
	t.Helper()
	netIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, n := range networks {
		if err := netIndexer.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	nsIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, ns := range []*corev1.Namespace{namespace("team-a", "a"), namespace("team-b", "b")} {
		if err := nsIndexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	tpIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, tp := range policies {
		if err := tpIndexer.Add(tp); err != nil {
			t.Fatal(err)
		}
	}
	return NewPolicyFromListers(listers.NewTenantPolicyLister(tpIndexer), corelisters.NewNamespaceLister(nsIndexer), listersv2.NewNetworkLister(netIndexer), defaults)
}

func namespace(name, team string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"team": team, "kubernetes.io/metadata.name": name}}}
}

// forTeam is a policy that selects the namespaces labelled team=team.
func forTeam(team string, spec samplecrdv1.TenantPolicySpec) *samplecrdv1.TenantPolicy {
	spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"team": team}}
	return &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "team-" + team}, Spec: spec}
}

// network is a Network of namespace ns whose spec change sets.
func network(ns string, change func(*samplecrdv2.NetworkSpec)) *samplecrdv2.Network {
	n := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "net"}, Spec: samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: "10.0.0.0/24"}}}}
	change(&n.Spec)
	return n
}

func TestWhatANetworkMayNameOutsideItself(t *testing.T) {
	sharedRouter := forTeam("a", samplecrdv1.TenantPolicySpec{Routers: []string{"edge", "9d7b0a4e-0000-4000-8000-000000000001"},
		SubnetPools: []string{"pool-a"}, ExternalNetworks: []string{"public"}, Adoption: true})
	onlyOwn := forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsNamespace})
	onlyController := forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsController})
	everyNamespace := &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "all"},
		Spec: samplecrdv1.TenantPolicySpec{SubnetPools: []string{"shared-pool"}}}
	creds := &samplecrdv2.CloudCredentialsReference{SecretName: "openstack", CloudName: "team"}

	for name, tc := range map[string]struct {
		defaults Defaults
		policies []*samplecrdv1.TenantPolicy
		network  *samplecrdv2.Network
		// refused is a fragment of the refusal; "" when allowed.
		refused string
	}{
		"no policy: a Network of its own, in the controller's project": {
			network: network("team-b", func(*samplecrdv2.NetworkSpec) {}),
		},
		"no policy: credentials of its own namespace": {
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
		},
		"no policy: no existing router, by name": {
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{Name: "edge"} }),
			refused: `spec.router.name "edge" is not granted to namespace team-b`,
		},
		"no policy: no existing router, by ID": {
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) {
				s.Router = &samplecrdv2.RouterReference{ID: "9d7b0a4e-0000-4000-8000-000000000001"}
			}),
			refused: "spec.router.id",
		},
		"no policy: no adoption": {
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Adopt = &samplecrdv2.Adoption{NetworkID: "x"} }),
			refused: "adoption (spec.adopt) is not allowed in namespace team-b",
		},
		"no policy: no pool": {
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "pool-a", PrefixLength: ptr.To[int32](24)}}
			}),
			refused: `spec.subnets[0].subnetPool "pool-a"`,
		},
		"no policy: no router on an external network": {
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{ExternalNetwork: "public"} }),
			refused: "spec.router.externalNetwork",
		},
		"the flag's default grants adoption to the namespace it names": {
			defaults: Defaults{AdoptionNamespaces: []string{"team-b"}},
			network:  network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Adopt = &samplecrdv2.Adoption{NetworkID: "x"} }),
		},
		"the flag's default grants an external network to every namespace": {
			defaults: Defaults{ExternalNetworks: []string{"public"}},
			network:  network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{ExternalNetwork: "public"} }),
		},
		"a policy grants its namespace a router by name": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{Name: "edge"} }),
		},
		"a policy grants its namespace a router by ID": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter},
			network: network("team-a", func(s *samplecrdv2.NetworkSpec) {
				s.Router = &samplecrdv2.RouterReference{ID: "9d7b0a4e-0000-4000-8000-000000000001"}
			}),
		},
		"a policy grants nothing to a namespace it does not select": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter},
			network:  network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{Name: "edge"} }),
			refused:  "not granted to namespace team-b",
		},
		"a router the policy does not list": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{Name: "core"} }),
			refused:  `spec.router.name "core"`,
		},
		"a policy grants adoption, a pool and an external network": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter},
			network: network("team-a", func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "pool-a", PrefixLength: ptr.To[int32](24)}}
				s.Router = &samplecrdv2.RouterReference{ExternalNetwork: "public"}
			}),
		},
		"grants of two policies add up": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter, everyNamespace},
			network: network("team-a", func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "shared-pool", PrefixLength: ptr.To[int32](24)}}
				s.Router = &samplecrdv2.RouterReference{Name: "edge"}
			}),
		},
		"a policy with an empty selector selects every namespace": {
			policies: []*samplecrdv1.TenantPolicy{everyNamespace},
			network: network("team-b", func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "shared-pool", PrefixLength: ptr.To[int32](24)}}
			}),
		},
		"Namespace credentials: the controller's project is refused": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn},
			network:  network("team-a", func(*samplecrdv2.NetworkSpec) {}),
			refused:  "to name credentials of their own",
		},
		"Namespace credentials: a Secret of the namespace": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
		},
		"Controller credentials: a Secret of the namespace is refused": {
			policies: []*samplecrdv1.TenantPolicy{onlyController},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
			refused:  "to use the controller's cloud",
		},
		"the stricter credentials policy holds over Any": {
			policies: []*samplecrdv1.TenantPolicy{sharedRouter, onlyController},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
			refused:  "to use the controller's cloud",
		},
		"policies that require both credentials refuse every Network": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn, withName(onlyController, "other")},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
			refused:  "disagree",
		},
		"adoptNetworks grants adoption of the networks it names": {
			policies: []*samplecrdv1.TenantPolicy{forTeam("b", samplecrdv1.TenantPolicySpec{AdoptNetworks: []string{"net-x"}})},
			network:  network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Adopt = &samplecrdv2.Adoption{NetworkID: "net-x"} }),
		},
		"adoptNetworks grants no other network": {
			policies: []*samplecrdv1.TenantPolicy{forTeam("b", samplecrdv1.TenantPolicySpec{AdoptNetworks: []string{"net-x"}})},
			network:  network("team-b", func(s *samplecrdv2.NetworkSpec) { s.Adopt = &samplecrdv2.Adoption{NetworkID: "net-y"} }),
			refused:  "adoption (spec.adopt) is not allowed in namespace team-b",
		},
		// The controller's namespace holds its cloud's Secret and the kept
		// copies of every namespace's credentials (pkg/controller/tenancy/keeper.go).
		"in the controller's namespace, a kept copy of another namespace's credentials is refused": {
			defaults: Defaults{ControllerNamespace: "team-a"},
			network: network("team-a", func(s *samplecrdv2.NetworkSpec) {
				s.CloudCredentialsRef = &samplecrdv2.CloudCredentialsReference{SecretName: "network-controller-credentials-0123456789abcdef0123", CloudName: "team"}
			}),
			refused: "spec.cloudCredentialsRef is not allowed in namespace team-a, the controller's own",
		},
		"in the controller's namespace, the controller's cloud Secret is refused": {
			defaults: Defaults{ControllerNamespace: "team-a"},
			network: network("team-a", func(s *samplecrdv2.NetworkSpec) {
				s.CloudCredentialsRef = &samplecrdv2.CloudCredentialsReference{SecretName: "network-controller-cloud", CloudName: "openstack"}
			}),
			refused: "spec.cloudCredentialsRef is not allowed in namespace team-a, the controller's own",
		},
		"in the controller's namespace, even a policy's Any grants no Secret": {
			defaults: Defaults{ControllerNamespace: "team-a"},
			policies: []*samplecrdv1.TenantPolicy{forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsAny})},
			network:  network("team-a", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
			refused:  "the controller's own",
		},
		"in the controller's namespace, the controller's cloud itself": {
			defaults: Defaults{ControllerNamespace: "team-a"},
			network:  network("team-a", func(*samplecrdv2.NetworkSpec) {}),
		},
		"another namespace names credentials as before": {
			defaults: Defaults{ControllerNamespace: "team-a"},
			network:  network("team-b", func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }),
		},
		"a namespace not in the cache gets the defaults alone": {
			policies: []*samplecrdv1.TenantPolicy{everyNamespace},
			network: network("team-c", func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "shared-pool", PrefixLength: ptr.To[int32](24)}}
			}),
			refused: "spec.subnets[0].subnetPool",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := newPolicy(t, tc.defaults, tc.policies...).Check(tc.network)
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused == "":
			case !reconcile.IsNotAllowed(err):
				t.Fatalf("got %v, want a refusal that says %q", err, tc.refused)
			case !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "nothing was asked of Neutron"):
				t.Fatalf("refusal %q does not say %q and that nothing was asked of Neutron", err, tc.refused)
			}
		})
	}
}

// TestNamesForAdoption: only a network a policy that selects the namespace
// names by ID; adoption: true names none.
func TestNamesForAdoption(t *testing.T) {
	p := newPolicy(t, Defaults{AdoptionNamespaces: []string{"*"}},
		forTeam("a", samplecrdv1.TenantPolicySpec{Adoption: true, AdoptNetworks: []string{"net-x"}}),
		forTeam("b", samplecrdv1.TenantPolicySpec{Adoption: true}))
	for _, tc := range []struct {
		namespace, id string
		want          bool
	}{
		{"team-a", "net-x", true},
		{"team-a", "net-y", false},
		{"team-b", "net-x", false},
		{"team-c", "net-x", false},
	} {
		if got, err := p.NamesForAdoption(tc.namespace, tc.id); err != nil || got != tc.want {
			t.Errorf("NamesForAdoption(%s, %s) = %v, %v; want %v", tc.namespace, tc.id, got, err, tc.want)
		}
	}
}

func withName(tp *samplecrdv1.TenantPolicy, name string) *samplecrdv1.TenantPolicy {
	tp = tp.DeepCopy()
	tp.Name = name
	return tp
}

// TestAGrantTakesEffectAtOnce: a TenantPolicy made or deleted, and a
// namespace relabelled, each call changed, so the controller queues the
// Networks whose grants may have changed.
func TestAGrantTakesEffectAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	kube := k8sfake.NewClientset(namespace("team-a", "a"))
	networks := fake.NewClientset()
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	factory := externalversions.NewSharedInformerFactory(networks, 0)
	p := NewPolicy(factory.Samplecrd().V1().TenantPolicies(), kubeFactory.Core().V1().Namespaces(), factory.Samplecrd().V2().Networks(), Defaults{})
	changed := make(chan string, 10)
	if err := p.OnChange(func(ns string) { changed <- ns }); err != nil {
		t.Fatal(err)
	}
	kubeFactory.Start(ctx.Done())
	factory.Start(ctx.Done())
	// Shutdown waits for the informers, which stop when ctx ends: cancel
	// runs first.
	defer kubeFactory.Shutdown()
	defer factory.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), p.HasSynced) {
		t.Fatal("the caches did not sync")
	}
	next := func(want string) {
		t.Helper()
		select {
		case got := <-changed:
			if got != want {
				t.Errorf("changed(%q), want changed(%q)", got, want)
			}
		case <-time.After(wait.ForeverTestTimeout):
			t.Fatalf("changed(%q) was not called", want)
		}
	}
	if _, err := networks.SamplecrdV1().TenantPolicies().Create(ctx, forTeam("a", samplecrdv1.TenantPolicySpec{Routers: []string{"edge"}}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	next("")
	ns := namespace("team-a", "b")
	if _, err := kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	next("team-a")
	if err := networks.SamplecrdV1().TenantPolicies().Delete(ctx, "team-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next("")
}

// byDefault is a default policy: it applies to every namespace.
func byDefault(name string, spec samplecrdv1.TenantPolicySpec) *samplecrdv1.TenantPolicy {
	spec.Default = true
	return &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

// TestDefaultPolicies: a default policy's restriction binds every
// namespace, selected or not, in the cache or not, and its grants reach
// every namespace, added up with those of the policies that select it.
func TestDefaultPolicies(t *testing.T) {
	onlyOwn := byDefault("only-own", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsNamespace})
	sharedPool := byDefault("shared-pool", samplecrdv1.TenantPolicySpec{SubnetPools: []string{"shared-pool"}})
	routerForA := forTeam("a", samplecrdv1.TenantPolicySpec{Routers: []string{"edge"}})
	creds := &samplecrdv2.CloudCredentialsReference{SecretName: "openstack", CloudName: "team"}
	controllersCloud := func(*samplecrdv2.NetworkSpec) {}
	ownCredentials := func(s *samplecrdv2.NetworkSpec) { s.CloudCredentialsRef = creds }

	for name, tc := range map[string]struct {
		policies  []*samplecrdv1.TenantPolicy
		namespace string
		spec      func(*samplecrdv2.NetworkSpec)
		// refused is a fragment of the refusal; "" when allowed.
		refused string
	}{
		"a namespace no policy selects gets the default's restriction": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn, routerForA}, namespace: "team-b", spec: controllersCloud,
			refused: "to name credentials of their own",
		},
		"a namespace not in the cache gets the default's restriction": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn}, namespace: "team-c", spec: controllersCloud,
			refused: "to name credentials of their own",
		},
		"a namespace not in the cache meets it with credentials of its own": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn}, namespace: "team-c", spec: ownCredentials,
		},
		"a namespace another policy selects is bound by the default's restriction too": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn, routerForA}, namespace: "team-a",
			spec:    func(s *samplecrdv2.NetworkSpec) { s.Router = &samplecrdv2.RouterReference{Name: "edge"} },
			refused: "to name credentials of their own",
		},
		"a selected namespace gets its policy's grants beside the default's restriction": {
			policies: []*samplecrdv1.TenantPolicy{onlyOwn, routerForA}, namespace: "team-a",
			spec: func(s *samplecrdv2.NetworkSpec) {
				s.CloudCredentialsRef = creds
				s.Router = &samplecrdv2.RouterReference{Name: "edge"}
			},
		},
		"a selected namespace whose policy says Controller against a default's Namespace is refused": {
			policies:  []*samplecrdv1.TenantPolicy{onlyOwn, forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsController})},
			namespace: "team-a", spec: controllersCloud,
			refused: "disagree",
		},
		"a selected namespace whose policy says Any is still bound by the default": {
			policies:  []*samplecrdv1.TenantPolicy{onlyOwn, forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsAny})},
			namespace: "team-a", spec: controllersCloud,
			refused: "to name credentials of their own",
		},
		"a default's grant reaches a namespace no policy selects": {
			policies: []*samplecrdv1.TenantPolicy{sharedPool}, namespace: "team-b",
			spec: func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "shared-pool", PrefixLength: ptr.To[int32](24)}}
			},
		},
		"a default's grant reaches a namespace not in the cache": {
			policies: []*samplecrdv1.TenantPolicy{sharedPool}, namespace: "team-c",
			spec: func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "shared-pool", PrefixLength: ptr.To[int32](24)}}
			},
		},
		"a default's grant adds up with a selecting policy's": {
			policies: []*samplecrdv1.TenantPolicy{sharedPool, routerForA}, namespace: "team-a",
			spec: func(s *samplecrdv2.NetworkSpec) {
				s.Subnets = []samplecrdv2.SubnetSpec{{SubnetPool: "shared-pool", PrefixLength: ptr.To[int32](24)}}
				s.Router = &samplecrdv2.RouterReference{Name: "edge"}
			},
		},
		"a default's selector is not asked: it binds every namespace": {
			policies: []*samplecrdv1.TenantPolicy{func() *samplecrdv1.TenantPolicy {
				tp := withName(onlyOwn, "labelled")
				tp.Spec.NamespaceSelector = metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
				return tp
			}()},
			namespace: "team-b", spec: controllersCloud,
			refused: "to name credentials of their own",
		},
		"no default policy: an unselected namespace may use the controller's cloud, as before": {
			policies:  []*samplecrdv1.TenantPolicy{forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsNamespace})},
			namespace: "team-b", spec: controllersCloud,
		},
		"no default policy: a namespace not in the cache may use the controller's cloud, as before": {
			policies:  []*samplecrdv1.TenantPolicy{forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsNamespace})},
			namespace: "team-c", spec: controllersCloud,
		},
		"a policy that is not a default binds only what it selects": {
			policies:  []*samplecrdv1.TenantPolicy{forTeam("a", samplecrdv1.TenantPolicySpec{Credentials: samplecrdv1.CredentialsNamespace})},
			namespace: "team-a", spec: controllersCloud,
			refused: "to name credentials of their own",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := newPolicy(t, Defaults{}, tc.policies...).Check(network(tc.namespace, tc.spec))
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused == "":
			case !reconcile.IsNotAllowed(err):
				t.Fatalf("got %v, want a refusal that says %q", err, tc.refused)
			case !strings.Contains(err.Error(), tc.refused):
				t.Fatalf("refusal %q does not say %q", err, tc.refused)
			}
		})
	}
}

// TestADefaultPolicyNamesForAdoptionEverywhere: a default policy's
// adoptNetworks apply to every namespace, as its other grants do.
func TestADefaultPolicyNamesForAdoptionEverywhere(t *testing.T) {
	p := newPolicy(t, Defaults{}, byDefault("all", samplecrdv1.TenantPolicySpec{AdoptNetworks: []string{"net-x"}}))
	for _, ns := range []string{"team-a", "team-c"} {
		if got, err := p.NamesForAdoption(ns, "net-x"); err != nil || !got {
			t.Errorf("NamesForAdoption(%s, net-x) = %v, %v; want true", ns, got, err)
		}
	}
}
