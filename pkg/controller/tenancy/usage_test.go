package tenancy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	corelisters "k8s.io/client-go/listers/core/v1"

	listers "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v1"
	listersv2 "github.com/samplecrd/network-controller/pkg/generated/listers/samplecrd/v2"
)

// in moves n into namespace ns.
func in(ns string, n *samplecrdv2.Network) *samplecrdv2.Network {
	n = n.DeepCopy()
	n.Namespace = ns
	return n
}

// TestUsageSaysHowFullEachNamespaceIs is issue 54's example: a policy
// with maxNetworks 3 selects team-a, with four Networks (the newest
// waits), and team-b, with one; a namespace it does not select is not
// counted, and a smaller cap of another policy binds where it applies.
func TestUsageSaysHowFullEachNamespaceIs(t *testing.T) {
	teamA := []*samplecrdv2.Network{at("first", 1, false), at("second", 2, false), at("third", 3, false), at("fourth", 4, true)}
	teamB := []*samplecrdv2.Network{in("team-b", at("only", 1, false))}
	both := forTeam("a", samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To[int32](3)})
	both.Name, both.Generation = "three-each", 7
	both.Spec.NamespaceSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}

	tests := []struct {
		name     string
		networks []*samplecrdv2.Network
		policies []*samplecrdv1.TenantPolicy
		want     samplecrdv1.TenantPolicyStatus
	}{{
		name:     "3/3 with the fourth waiting, and 1/3",
		networks: slices.Concat(teamA, teamB),
		policies: []*samplecrdv1.TenantPolicy{both},
		want: samplecrdv1.TenantPolicyStatus{ObservedGeneration: 7, Namespaces: 2, NamespacesAtCap: 1, NetworksWaiting: 1,
			Usage: []samplecrdv1.NamespaceUsage{
				{Namespace: "team-a", AtWork: 3, MaxNetworks: ptr.To[int32](3), Waiting: 1, WaitingNetworks: []string{"fourth"}},
				{Namespace: "team-b", AtWork: 1, MaxNetworks: ptr.To[int32](3)},
			}},
	}, {
		name:     "one deleted: the fourth is made, none waits",
		networks: slices.Concat([]*samplecrdv2.Network{deleted(at("first", 1, true)), at("second", 2, false), at("third", 3, false), at("fourth", 4, true)}, teamB),
		policies: []*samplecrdv1.TenantPolicy{both},
		want: samplecrdv1.TenantPolicyStatus{ObservedGeneration: 7, Namespaces: 2,
			Usage: []samplecrdv1.NamespaceUsage{
				{Namespace: "team-a", AtWork: 2, MaxNetworks: ptr.To[int32](3)},
				{Namespace: "team-b", AtWork: 1, MaxNetworks: ptr.To[int32](3)},
			}},
	}, {
		name:     "another policy's smaller cap binds team-b",
		networks: slices.Concat(teamA, teamB),
		policies: []*samplecrdv1.TenantPolicy{both, capOf("b", 1)},
		want: samplecrdv1.TenantPolicyStatus{ObservedGeneration: 7, Namespaces: 2, NamespacesAtCap: 2, NetworksWaiting: 1,
			Usage: []samplecrdv1.NamespaceUsage{
				{Namespace: "team-a", AtWork: 3, MaxNetworks: ptr.To[int32](3), Waiting: 1, WaitingNetworks: []string{"fourth"}},
				{Namespace: "team-b", AtWork: 1, MaxNetworks: ptr.To[int32](1)},
			}},
	}, {
		name:     "no cap anywhere: counts at work, none waits",
		networks: slices.Concat(teamA, teamB),
		policies: []*samplecrdv1.TenantPolicy{withName(forTeam("a", samplecrdv1.TenantPolicySpec{Adoption: true}), "adoption")},
		want: samplecrdv1.TenantPolicyStatus{Namespaces: 1,
			Usage: []samplecrdv1.NamespaceUsage{{Namespace: "team-a", AtWork: 3}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPolicyWith(t, Defaults{}, tt.networks, tt.policies...)
			got, err := p.Usage(tt.policies[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWaitingForCapIsCheckRule holds waitingForCap, the status's one pass,
// to olderAtWork, the rule Check refuses by: for random namespaces, a
// Network waits exactly when Check's rule refuses it for the cap.
func TestWaitingForCapIsCheckRule(t *testing.T) {
	r := rand.New(rand.NewPCG(54, 1))
	for range 500 {
		var networks []*samplecrdv2.Network
		for i := range r.IntN(12) {
			// Several share a minute: the name decides within it.
			n := at(fmt.Sprintf("n%02d", r.IntN(100)*100+i), r.IntN(5), r.IntN(3) == 0)
			if r.IntN(5) == 0 {
				n = deleted(n)
			}
			if r.IntN(6) == 0 {
				n = provisioned(n)
			}
			networks = append(networks, n)
		}
		limit := int32(r.IntN(6))
		var want []string
		for _, n := range networks {
			if n.DeletionTimestamp == nil && olderAtWork(networks, n) >= int(limit) {
				want = append(want, n.Name)
			}
		}
		var got []string
		for _, n := range waitingForCap(networks, limit) {
			got = append(got, n.Name)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Fatalf("cap %d over %d Networks: waitingForCap %v, Check's rule %v", limit, len(networks), got, want)
		}
	}
}

// TestUsageIsBoundedHoweverManyNamespaces: a default policy over 10,000
// namespaces, each with Networks, counts them all and names the 100
// fullest, those with Networks waiting first; each names at most 10 of
// its waiting Networks, the oldest first.
func TestUsageIsBoundedHoweverManyNamespaces(t *testing.T) {
	const namespaces = 10_000
	nsIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	netIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range namespaces {
		name := fmt.Sprintf("ns-%05d", i)
		if err := nsIndexer.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
		// Namespace i has i%4 Networks, of which the first two at work
		// (a third waits); every 50th has two at work and 20 waiting.
		count := i % 4
		if i%50 == 0 {
			count = 2 + 20
		}
		for j := range count {
			n := in(name, at(fmt.Sprintf("net-%02d", j), j, j >= 2))
			if err := netIndexer.Add(n); err != nil {
				t.Fatal(err)
			}
		}
	}
	everyone := byDefault("everyone", samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To[int32](2)})
	tpIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := tpIndexer.Add(everyone); err != nil {
		t.Fatal(err)
	}
	p := NewPolicyFromListers(listers.NewTenantPolicyLister(tpIndexer), corelisters.NewNamespaceLister(nsIndexer), listersv2.NewNetworkLister(netIndexer), Defaults{})

	start := time.Now()
	got, err := p.Usage(everyone)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counted %d namespaces in %s", got.Namespaces, time.Since(start))
	if got.Namespaces != namespaces {
		t.Errorf("namespaces: %d, want %d", got.Namespaces, namespaces)
	}
	// At cap: i%4 >= 2 (two of every four), and every 50th.
	atCap := 0
	for i := range namespaces {
		if i%4 >= 2 || i%50 == 0 {
			atCap++
		}
	}
	waiting := int32(namespaces/4 + namespaces/50*20) // one in each i%4 == 3, 20 in each 50th
	if int(got.NamespacesAtCap) != atCap || got.NetworksWaiting != waiting {
		t.Errorf("at cap %d, waiting %d; want %d and %d", got.NamespacesAtCap, got.NetworksWaiting, atCap, waiting)
	}
	if len(got.Usage) != samplecrdv1.MaxNamespacesInStatus {
		t.Fatalf("%d namespaces in status, want %d", len(got.Usage), samplecrdv1.MaxNamespacesInStatus)
	}
	for i, u := range got.Usage {
		waits := i < namespaces/50
		if waits != (u.Waiting == 20) || len(u.WaitingNetworks) > samplecrdv1.MaxWaitingInStatus {
			t.Fatalf("status namespace %d: %+v; want the %d with Networks waiting first, each naming at most %d", i, u, namespaces/50, samplecrdv1.MaxWaitingInStatus)
		}
		if waits && (u.WaitingNetworks[0] != "net-02" || len(u.WaitingNetworks) != samplecrdv1.MaxWaitingInStatus) {
			t.Fatalf("status namespace %s names %v, want the 10 oldest waiting from net-02", u.Namespace, u.WaitingNetworks)
		}
	}
}

// TestOnlyNetworksTheCapRefusesWait: a Network that Check refuses for
// something else (here a router no policy grants) does not wait for the
// cap: it is not made when an older one goes, and the status does not
// name it as the next.
func TestOnlyNetworksTheCapRefusesWait(t *testing.T) {
	withRouter := at("two", 2, true)
	withRouter.Spec.Router = &samplecrdv2.RouterReference{Name: "edge"}
	networks := []*samplecrdv2.Network{at("one", 1, false), withRouter, at("three", 3, true)}
	capA := capOf("a", 1)
	p := newPolicyWith(t, Defaults{}, networks, capA)
	st, err := p.Usage(capA)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Usage[0]; got.Waiting != 1 || !slices.Equal(got.WaitingNetworks, []string{"three"}) {
		t.Errorf("team-a: %d waiting, %v; want 1, [three] (two names a router no policy grants)", got.Waiting, got.WaitingNetworks)
	}
}

// TestANamespaceAtItsCapRanksBeforeOneBelowIt: the status's order keeps
// every namespace at its cap ahead of those below it, a cap of 0 with
// nothing at work included, so that the 100 it names are the fullest.
func TestANamespaceAtItsCapRanksBeforeOneBelowIt(t *testing.T) {
	zero := samplecrdv1.NamespaceUsage{Namespace: "a-zero", MaxNetworks: ptr.To[int32](0)}
	third := samplecrdv1.NamespaceUsage{Namespace: "b-third", AtWork: 1, MaxNetworks: ptr.To[int32](3)}
	uncapped := samplecrdv1.NamespaceUsage{Namespace: "c-many", AtWork: 50}
	for _, tt := range []struct{ first, second samplecrdv1.NamespaceUsage }{{zero, third}, {third, uncapped}, {zero, uncapped}} {
		if fuller(tt.first, tt.second) >= 0 || fuller(tt.second, tt.first) <= 0 {
			t.Errorf("%s does not rank before %s", tt.first.Namespace, tt.second.Namespace)
		}
	}
}

// BenchmarkUsageOfTheDefaultPolicy counts a default policy over 10,000
// namespaces, two Networks each, beside 99 other policies: each count
// parses every selector once, not once per namespace.
func BenchmarkUsageOfTheDefaultPolicy(b *testing.B) {
	nsIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	netIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range 10_000 {
		name := fmt.Sprintf("ns-%05d", i)
		_ = nsIndexer.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": fmt.Sprintf("t%03d", i%100)}}})
		for j := range 2 {
			_ = netIndexer.Add(in(name, at(fmt.Sprintf("net-%02d", j), j, false)))
		}
	}
	tpIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	everyone := byDefault("everyone", samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To[int32](5)})
	_ = tpIndexer.Add(everyone)
	for i := range 99 {
		_ = tpIndexer.Add(withName(forTeam(fmt.Sprintf("t%03d", i), samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To[int32](3)}), fmt.Sprintf("team-%03d", i)))
	}
	p := NewPolicyFromListers(listers.NewTenantPolicyLister(tpIndexer), corelisters.NewNamespaceLister(nsIndexer), listersv2.NewNetworkLister(netIndexer), Defaults{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Usage(everyone); err != nil {
			b.Fatal(err)
		}
	}
}
