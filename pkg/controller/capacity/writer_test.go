package capacity

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/tenancy"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/fake"
	"github.com/samplecrd/network-controller/pkg/generated/informers/externalversions"
)

func namespace(name, team string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": team}}}
}

// atWork is a Network of ns made minute minutes after a fixed start, with
// the controller's finalizer unless waiting.
func atWork(ns, name string, minute int, waiting bool) *samplecrdv2.Network {
	n := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 29, 12, minute, 0, 0, time.UTC))}}
	if !waiting {
		n.Finalizers = []string{samplecrdv1.NetworkFinalizer}
	}
	return n
}

// fixture is a Writer over fake clientsets whose caches have synced, and
// the clientset it writes through.
type fixture struct {
	w       *Writer
	client  *fake.Clientset
	factory externalversions.SharedInformerFactory
}

func newFixture(t *testing.T, objects ...*samplecrdv2.Network) *fixture {
	t.Helper()
	policy := &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "three-each", Generation: 2}, Spec: samplecrdv1.TenantPolicySpec{
		NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}},
		MaxNetworks: ptr.To[int32](3)}}
	kube := k8sfake.NewClientset(namespace("team-a", "a"), namespace("team-b", "b"), namespace("team-c", "c"))
	client := fake.NewClientset(policy)
	for _, n := range objects {
		if err := client.Tracker().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	factory := externalversions.NewSharedInformerFactory(client, 0)
	w, err := New(factory.Samplecrd().V1().TenantPolicies(), kubeFactory.Core().V1().Namespaces(), factory.Samplecrd().V2().Networks(), client, tenancy.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	kubeFactory.Start(t.Context().Done())
	factory.Start(t.Context().Done())
	t.Cleanup(kubeFactory.Shutdown)
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), w.synced) {
		t.Fatal("the caches did not sync")
	}
	return &fixture{w: w, client: client, factory: factory}
}

// statusWrites counts the writes of TenantPolicy status so far.
func (f *fixture) statusWrites() int {
	n := 0
	for _, a := range f.client.Actions() {
		if a.GetResource().Resource == "tenantpolicies" && a.GetSubresource() == "status" && a.GetVerb() != "get" {
			n++
		}
	}
	return n
}

// cached waits until the TenantPolicy in the cache satisfies ok.
func (f *fixture) cached(t *testing.T, ok func(samplecrdv1.TenantPolicyStatus) bool) samplecrdv1.TenantPolicyStatus {
	t.Helper()
	var last samplecrdv1.TenantPolicyStatus
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		tp, err := f.factory.Samplecrd().V1().TenantPolicies().Lister().Get("three-each")
		if err != nil {
			return false, err
		}
		last = tp.Status
		return ok(last), nil
	}); err != nil {
		t.Fatalf("the policy's status is %+v: %v", last, err)
	}
	return last
}

// TestTheStatusIsWrittenOnlyWhenItChanges: a sync writes the status once;
// a sync with nothing changed writes nothing; a deleted Network is one
// more write, whose counts move.
func TestTheStatusIsWrittenOnlyWhenItChanges(t *testing.T) {
	f := newFixture(t, atWork("team-a", "one", 1, false), atWork("team-a", "two", 2, false), atWork("team-a", "three", 3, false),
		atWork("team-a", "four", 4, true), atWork("team-b", "only", 1, false))
	if err := f.w.sync(t.Context(), "three-each"); err != nil {
		t.Fatal(err)
	}
	if got := f.statusWrites(); got != 1 {
		t.Fatalf("%d status writes, want 1", got)
	}
	st := f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return st.Namespaces == 2 })
	if st.NamespacesAtCap != 1 || st.NetworksWaiting != 1 || len(st.Usage) != 2 || st.Usage[0].WaitingNetworks[0] != "four" || st.ObservedGeneration != 2 {
		t.Errorf("status %+v, want team-a at 3/3 with four waiting, team-b at 1/3", st)
	}

	if err := f.w.sync(t.Context(), "three-each"); err != nil {
		t.Fatal(err)
	}
	if got := f.statusWrites(); got != 1 {
		t.Errorf("%d status writes after a sync with nothing changed, want still 1", got)
	}

	if err := f.client.SamplecrdV2().Networks("team-a").Delete(t.Context(), "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		_, err := f.factory.Samplecrd().V2().Networks().Lister().Networks("team-a").Get("one")
		return err != nil, nil
	}); err != nil {
		t.Fatal("the deletion did not reach the cache")
	}
	if err := f.w.sync(t.Context(), "three-each"); err != nil {
		t.Fatal(err)
	}
	st = f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return st.NetworksWaiting == 0 })
	if got := f.statusWrites(); got != 2 || st.NamespacesAtCap != 0 || st.Usage[0].AtWork != 2 {
		t.Errorf("%d writes, status %+v; want 2 writes, team-a at 2/3 and none waiting", got, st)
	}
}

// TestANetworkOfASelectedNamespaceMovesTheCounts: running, the Writer
// counts a Network made in a selected namespace, and a Network of a
// namespace the policy does not select changes nothing.
func TestANetworkOfASelectedNamespaceMovesTheCounts(t *testing.T) {
	f := newFixture(t, atWork("team-a", "one", 1, false))
	go f.w.Run(t.Context())
	f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return len(st.Usage) == 1 && st.Usage[0].AtWork == 1 })
	writes := f.statusWrites()

	if _, err := f.client.SamplecrdV2().Networks("team-c").Create(t.Context(), atWork("team-c", "elsewhere", 1, false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.SamplecrdV2().Networks("team-b").Create(t.Context(), atWork("team-b", "new", 2, false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return len(st.Usage) == 2 })
	if st.Usage[1].Namespace != "team-b" || st.Usage[1].AtWork != 1 {
		t.Errorf("status %+v, want team-b's new Network counted", st)
	}
	if got := f.statusWrites() - writes; got != 1 {
		t.Errorf("%d writes for two Networks made within a second, want 1 (team-c's is not the policy's)", got)
	}
}

// capForB is a policy that caps team-b alone at n.
func capForB(n int32) *samplecrdv1.TenantPolicy {
	return &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "one-for-b", Generation: 1}, Spec: samplecrdv1.TenantPolicySpec{
		NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "b"}}, MaxNetworks: ptr.To(n)}}
}

// teamBCap is the cap three-each's status names for team-b, 0 for none.
func teamBCap(st samplecrdv1.TenantPolicyStatus) int32 {
	for _, u := range st.Usage {
		if u.Namespace == "team-b" && u.MaxNetworks != nil {
			return *u.MaxNetworks
		}
	}
	return 0
}

// TestAnotherPolicysCapIsCountedWhenItComesAndGoes: a policy made with a
// smaller cap for team-b binds it in every status that names team-b, and
// once deleted, no longer (its events queue every policy, not only
// itself).
func TestAnotherPolicysCapIsCountedWhenItComesAndGoes(t *testing.T) {
	f := newFixture(t, atWork("team-b", "only", 1, false))
	go f.w.Run(t.Context())
	f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return teamBCap(st) == 3 })

	if _, err := f.client.SamplecrdV1().TenantPolicies().Create(t.Context(), capForB(1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return teamBCap(st) == 1 && st.NamespacesAtCap == 1 })

	if err := f.client.SamplecrdV1().TenantPolicies().Delete(t.Context(), "one-for-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.cached(t, func(st samplecrdv1.TenantPolicyStatus) bool { return teamBCap(st) == 3 && st.NamespacesAtCap == 0 })
}

// TestAnEntryAnotherManagerSetIsNotFoughtOver: the status is compared
// with what the Writer's field manager applied, as the API server records
// it for the status subresource, so that an entry an operator added by
// hand (another manager's, which an apply does not remove) does not make
// every sync write. client-go's fake records no subresource in
// managedFields; here they are as kube-apiserver writes them.
func TestAnEntryAnotherManagerSetIsNotFoughtOver(t *testing.T) {
	f := newFixture(t, atWork("team-a", "one", 1, false))
	tp, err := f.factory.Samplecrd().V1().TenantPolicies().Lister().Get("three-each")
	if err != nil {
		t.Fatal(err)
	}
	status, err := f.w.policy.Usage(tp)
	if err != nil {
		t.Fatal(err)
	}
	tp = tp.DeepCopy()
	tp.Status = status
	tp.Status.Usage = append(tp.Status.Usage, samplecrdv1.NamespaceUsage{Namespace: "zz-by-hand", AtWork: 9})
	ours := `{"f:status":{"f:namespaces":{},"f:observedGeneration":{},"f:usage":{` +
		`"k:{\"namespace\":\"team-a\"}":{".":{},"f:atWork":{},"f:maxNetworks":{},"f:namespace":{}},` +
		`"k:{\"namespace\":\"team-b\"}":{".":{},"f:atWork":{},"f:maxNetworks":{},"f:namespace":{}}}}}`
	theirs := `{"f:status":{"f:usage":{"k:{\"namespace\":\"zz-by-hand\"}":{".":{},"f:atWork":{},"f:namespace":{}}}}}`
	tp.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "samplecrd.k8s.io/v1", Subresource: "status",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(ours)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "samplecrd.k8s.io/v1", Subresource: "status",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(theirs)},
	}
	same, err := alreadyApplied(tp, status, statusApply(tp.Name, status))
	if err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Error("a status that holds what the Writer applied, and an entry of another manager, counts as different: every sync would write")
	}
	status.Usage[0].AtWork++
	if same, _ := alreadyApplied(tp, status, statusApply(tp.Name, status)); same {
		t.Error("a count that changed counts as applied: the status would never move")
	}
}
