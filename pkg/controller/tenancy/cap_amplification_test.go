package tenancy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	"github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

// TestADeletionRequeuesACappedNamespaceOnlyWhenTheCapRefusedOne: a
// Network deleted in a namespace with a cap once called changed(namespace)
// every time, and the controller queued every Network of that namespace
// again; each of those syncs lists the namespace's Networks for the cap
// (olderAtWork, O(n)). A namespace with a cap and n Networks, none of
// them refused, made the controller do n syncs and O(n^2) work per
// Network it deleted (one API call): a create-and-delete loop kept n of
// its keys in the queue, however generous its cap. Only a Network the
// cap refused can be made once another goes.
//
// The guarantee: a deletion queues the namespace's Networks again only
// when the cap may have refused one of them (capMayHaveRefused), so that
// a deletion in a namespace under its cap costs nothing beyond itself,
// and one in a namespace with a refused Network still makes it at once.
func TestADeletionRequeuesACappedNamespaceOnlyWhenTheCapRefusedOne(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	inC := func(name string, minute int, bare bool) *samplecrdv2.Network {
		n := at(name, minute, bare)
		n.Namespace = "team-c"
		return n
	}
	kube := k8sfake.NewClientset(namespace("team-a", "a"), namespace("team-c", "c"))
	networks := fake.NewClientset(capOf("a", 5), capOf("c", 1),
		at("one", 1, false), at("two", 2, false), // team-a: under its cap of 5, nothing refused
		inC("c1", 1, false), inC("c2", 2, true)) // team-c: c2 refused by its cap of 1
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	factory := externalversions.NewSharedInformerFactory(networks, 0)
	p := NewPolicy(factory.Samplecrd().V1().TenantPolicies(), kubeFactory.Core().V1().Namespaces(), factory.Samplecrd().V2().Networks(), Defaults{})
	changed := make(chan string, 100)
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
	if err := p.Check(inC("c2", 2, true)); !reconcile.IsNotAllowed(err) {
		t.Fatalf("c2 under team-c's cap of 1: %v, want a refusal", err)
	}
	// One informer delivers both deletions in order: team-a's first.
	if err := networks.SamplecrdV2().Networks("team-a").Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := networks.SamplecrdV2().Networks("team-c").Delete(ctx, "c1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(wait.ForeverTestTimeout)
	for {
		select {
		case ns := <-changed:
			switch ns {
			case "team-a":
				t.Error("a deletion in team-a, which its cap refused nothing, queued all of team-a's Networks again")
			case "team-c":
				return
			}
		case <-deadline:
			t.Fatal("changed(\"team-c\") was not called: its refused Network would wait for the resync")
		}
	}
}
