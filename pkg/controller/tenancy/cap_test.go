package tenancy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	"github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

// at is a Network of team-a made minute minutes after a fixed start,
// with the controller's finalizer (at work) unless bare.
func at(name string, minute int, bare bool) *samplecrdv2.Network {
	n := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 25, 12, minute, 0, 0, time.UTC))},
		Spec: samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: "10.0.0.0/24"}}}}
	if !bare {
		n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	}
	return n
}

// deleting is n with a deletionTimestamp.
func deleted(n *samplecrdv2.Network) *samplecrdv2.Network {
	n = n.DeepCopy()
	n.DeletionTimestamp = &metav1.Time{Time: n.CreationTimestamp.Add(time.Hour)}
	return n
}

// provisioned is n, without the finalizer, with a Neutron network.
func provisioned(n *samplecrdv2.Network) *samplecrdv2.Network {
	n = n.DeepCopy()
	n.Finalizers = nil
	n.Status.NetworkID = "b1c2"
	return n
}

func capOf(team string, n int32) *samplecrdv1.TenantPolicy {
	tp := forTeam(team, samplecrdv1.TenantPolicySpec{MaxNetworks: ptr.To(n)})
	tp.Name = fmt.Sprintf("cap-%s-%d", team, n)
	return tp
}

// TestMaxNetworksKeepsTheOldestAtWork: a namespace capped at N keeps its
// N oldest Networks at work (by creation, then name) and refuses the
// newer ones, whatever order they are synced in; a deletion is never
// refused; of two caps, the smaller holds.
func TestMaxNetworksKeepsTheOldestAtWork(t *testing.T) {
	// Three Networks at work, made a minute apart.
	one, two, three := at("one", 1, false), at("two", 2, false), at("three", 3, false)
	for name, tc := range map[string]struct {
		policies []*samplecrdv1.TenantPolicy
		existing []*samplecrdv2.Network
		network  *samplecrdv2.Network
		// refused is a fragment of the refusal; "" when allowed.
		refused string
	}{
		"no cap: any number": {
			existing: []*samplecrdv2.Network{one, two, three},
			network:  at("four", 4, true),
		},
		"cap 2: the oldest is at work": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  one,
		},
		"cap 2: the second is at work": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  two,
		},
		"cap 2: the third is refused, though it has a finalizer": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  three,
			refused:  "maxNetworks: 2",
		},
		"cap 2: a new Network is refused": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{one, two},
			network:  at("new", 4, true),
			refused:  "namespace team-a already has 2 Networks at work",
		},
		"cap 2: a Network that is being deleted is never refused": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{one, two, deleted(three)},
			network:  deleted(three),
		},
		"cap 0: the namespace's only Network is refused": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 0)},
			network:  at("new", 4, true),
			refused:  "maxNetworks: 0",
		},
		"cap 0: its deletion is not": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 0)},
			existing: []*samplecrdv2.Network{deleted(one)},
			network:  deleted(one),
		},
		"cap 2: an older Network never made is not counted": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{at("refused", 0, true), one},
			network:  two,
		},
		"cap 2: an older Network with Neutron resources is counted": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{provisioned(one), two},
			network:  at("new", 4, true),
			refused:  "maxNetworks: 2",
		},
		"cap 2: a Network being deleted still holds its place": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2)},
			existing: []*samplecrdv2.Network{deleted(one), two},
			network:  at("new", 4, true),
			refused:  "maxNetworks: 2",
		},
		"cap 1: made in the same second, the name decides": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 1)},
			existing: []*samplecrdv2.Network{at("a", 1, false), at("b", 1, false)},
			network:  at("b", 1, false),
			refused:  "maxNetworks: 1",
		},
		"cap 1: made in the same second, the first name is at work": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 1)},
			existing: []*samplecrdv2.Network{at("a", 1, false), at("b", 1, false)},
			network:  at("a", 1, false),
		},
		"caps 3 and 2: the smaller holds": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 3), capOf("a", 2)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  three,
			refused:  "maxNetworks: 2",
		},
		"caps 2 and 3: the smaller holds, whichever is listed first": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 2), capOf("a", 3)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  three,
			refused:  "maxNetworks: 2",
		},
		"cap 3: the third is at work": {
			policies: []*samplecrdv1.TenantPolicy{capOf("a", 3)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  three,
		},
		"a cap on another namespace": {
			policies: []*samplecrdv1.TenantPolicy{capOf("b", 0)},
			existing: []*samplecrdv2.Network{one, two, three},
			network:  at("four", 4, true),
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := newPolicyWith(t, Defaults{}, tc.existing, tc.policies...).Check(tc.network)
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

// TestMayHaveRefused: once a deletion is gone from the cache, the cap
// may have refused one of the namespace's Networks, and the deletion
// queues them again, only when one is neither at work nor being deleted,
// or as many are at work as the cap allows or more (one past a lowered
// cap, or past the cap until the deletion).
func TestMayHaveRefused(t *testing.T) {
	one, two, three := at("one", 1, false), at("two", 2, false), at("three", 3, false)
	for _, tc := range []struct {
		name     string
		limit    int32
		networks []*samplecrdv2.Network
		want     bool
	}{
		{"under the cap, all at work", 5, []*samplecrdv2.Network{one, two}, false},
		{"no Network left", 1, nil, false},
		{"one never made", 5, []*samplecrdv2.Network{one, at("new", 4, true)}, true},
		{"one never made, being deleted", 5, []*samplecrdv2.Network{one, deleting(at("new", 4, true))}, false},
		{"at the cap: one was past it before the deletion", 2, []*samplecrdv2.Network{one, two}, true},
		{"past a lowered cap", 2, []*samplecrdv2.Network{one, two, three}, true},
		{"at work by its Neutron network alone, past the cap", 1, []*samplecrdv2.Network{provisioned(one)}, true},
		{"one at work being deleted holds its place", 2, []*samplecrdv2.Network{deleting(one), two}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayHaveRefused(tc.networks, tc.limit); got != tc.want {
				t.Errorf("mayHaveRefused = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestADeletionInACappedNamespaceRechecksIt: a Network deleted in a
// namespace with a cap calls changed with its namespace, so that the
// oldest refused Network is made at once, not at the next resync; in a
// namespace without a cap, a deletion changes nothing.
func TestADeletionInACappedNamespaceRechecksIt(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	kube := k8sfake.NewClientset(namespace("team-a", "a"), namespace("team-b", "b"))
	networks := fake.NewClientset(capOf("a", 1), at("one", 1, false), at("two", 2, true),
		&samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "other"}})
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	factory := externalversions.NewSharedInformerFactory(networks, 0)
	p := NewPolicy(factory.Samplecrd().V1().TenantPolicies(), kubeFactory.Core().V1().Namespaces(), factory.Samplecrd().V2().Networks(), Defaults{})
	changed := make(chan string, 10)
	if err := p.OnChange(func(ns string) { changed <- ns }); err != nil {
		t.Fatal(err)
	}
	kubeFactory.Start(ctx.Done())
	factory.Start(ctx.Done())
	defer kubeFactory.Shutdown()
	defer factory.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), p.HasSynced) {
		t.Fatal("the caches did not sync")
	}
	// The policy's Add.
	if got := <-changed; got != "" {
		t.Fatalf("changed(%q) for the policy's add, want changed(\"\")", got)
	}
	if err := p.Check(at("two", 2, true)); !reconcile.IsNotAllowed(err) {
		t.Fatalf("the second Network under a cap of 1: %v, want a refusal", err)
	}
	if err := networks.SamplecrdV2().Networks("team-b").Delete(ctx, "other", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := networks.SamplecrdV2().Networks("team-a").Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-changed:
		if got != "team-a" {
			t.Errorf("changed(%q), want changed(\"team-a\") only: team-b has no cap", got)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("changed(\"team-a\") was not called")
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return p.Check(at("two", 2, true)) == nil, nil
	}); err != nil {
		t.Errorf("the second Network is still refused once the first is gone: %v", p.Check(at("two", 2, true)))
	}
}
