package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
	"example.com/greeting/generated/clientset/versioned/fake"
	informers "example.com/greeting/generated/informers/externalversions"
)

// fixture is a controller on fake clientsets whose caches hold exactly
// the objects a test gives it: the sync reads the caches, writes to the
// fakes, and the test reads the writes back as actions.
type fixture struct {
	controller *Controller
	kube       *k8sfake.Clientset
	greetings  *fake.Clientset
	farewells  int
	writes     []string // "verb resource[/subresource]", in order
}

// newFixture makes a fixture whose caches and fakes hold objects; farewell
// fails with farewellErr.
func newFixture(t *testing.T, farewellErr error, objects ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{kube: k8sfake.NewSimpleClientset(), greetings: fake.NewSimpleClientset()}
	kubeInformers := kubeinformers.NewSharedInformerFactory(f.kube, 0)
	greetingInformers := informers.NewSharedInformerFactory(f.greetings, 0)
	var err error
	f.controller, err = NewController(f.kube, f.greetings,
		greetingInformers.Tutorial().V1().Greetings(), kubeInformers.Core().V1().ConfigMaps(),
		func(context.Context, *tutorialv1.Greeting) error { f.farewells++; return farewellErr })
	must(t, err)
	// Both fakes note each write, in order, and go on to do it.
	f.kube.PrependReactor("*", "*", f.note)
	f.greetings.PrependReactor("*", "*", f.note)
	for _, obj := range objects {
		// Into the cache directly (no informer runs) and into the fake.
		switch o := obj.(type) {
		case *tutorialv1.Greeting:
			must(t, greetingInformers.Tutorial().V1().Greetings().Informer().GetIndexer().Add(o))
			must(t, f.greetings.Tracker().Add(o))
		case *corev1.ConfigMap:
			must(t, kubeInformers.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o))
			must(t, f.kube.Tracker().Add(o))
		}
	}
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// note records a write; handled=false lets the fake go on to do it.
func (f *fixture) note(a core.Action) (handled bool, _ runtime.Object, _ error) {
	if a.GetVerb() != "list" && a.GetVerb() != "watch" && a.GetVerb() != "get" {
		w := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			w += "/" + a.GetSubresource()
		}
		f.writes = append(f.writes, w)
	}
	return false, nil, nil
}

// greeting is the Greeting "hello" of generation 2 with message msg.
func greeting(msg string, edits ...func(*tutorialv1.Greeting)) *tutorialv1.Greeting {
	g := &tutorialv1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", UID: "uid-1", Generation: 2},
		Spec:       tutorialv1.GreetingSpec{Message: msg},
	}
	for _, e := range edits {
		e(g)
	}
	return g
}

func withFinalizer(g *tutorialv1.Greeting) { g.Finalizers = []string{tutorialv1.Finalizer} }
func deleting(g *tutorialv1.Greeting)      { g.DeletionTimestamp = &metav1.Time{Time: time.Now()} }
func readyNow(g *tutorialv1.Greeting) {
	g.Status.ObservedGeneration = g.Generation
	g.Status.Conditions = []metav1.Condition{{Type: tutorialv1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: "Published", Message: "ConfigMap hello holds the message", ObservedGeneration: g.Generation}}
}

// ownedConfigMap is hello's ConfigMap holding msg.
func ownedConfigMap(msg string) *corev1.ConfigMap { return newConfigMap(greeting(msg)) }

// TestSync is the controller's specification: for each state of the
// world, what one sync writes, in order, and how it ends.
func TestSync(t *testing.T) {
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}}
	for _, tc := range []struct {
		name          string
		objects       []runtime.Object
		farewellErr   error
		wantActions   []string
		wantReady     metav1.ConditionStatus // "" when status is not written
		wantFarewells int
		wantErr       bool
		wantAfter     time.Duration
	}{{
		name:        "a new Greeting gets the finalizer first, then its ConfigMap, then Ready",
		objects:     []runtime.Object{greeting("hi")},
		wantActions: []string{"update greetings", "create configmaps", "update greetings/status"},
		wantReady:   metav1.ConditionTrue,
	}, {
		name:    "a Greeting in order costs nothing: no write at all",
		objects: []runtime.Object{greeting("hi", withFinalizer, readyNow), ownedConfigMap("hi")},
	}, {
		name:        "a changed message is published",
		objects:     []runtime.Object{greeting("bye", withFinalizer, readyNow), ownedConfigMap("hi")},
		wantActions: []string{"update configmaps"},
	}, {
		name:        "a ConfigMap of that name that someone else owns is left alone",
		objects:     []runtime.Object{greeting("hi", withFinalizer), foreign},
		wantActions: []string{"update greetings/status"},
		wantReady:   metav1.ConditionFalse,
		wantAfter:   notOwnedRetry,
	}, {
		name:          "a deleted Greeting says farewell, then releases the finalizer",
		objects:       []runtime.Object{greeting("hi", withFinalizer, deleting), ownedConfigMap("hi")},
		wantActions:   []string{"update greetings"},
		wantFarewells: 1,
	}, {
		name:          "a failed farewell keeps the finalizer, and is retried",
		objects:       []runtime.Object{greeting("hi", withFinalizer, deleting)},
		farewellErr:   errors.New("unreachable"),
		wantFarewells: 1,
		wantErr:       true,
	}, {
		name:    "a deleted Greeting without the finalizer is none of our business",
		objects: []runtime.Object{greeting("hi", deleting)},
	}, {
		name: "a Greeting gone from the cache needs nothing",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.farewellErr, tc.objects...)
			res := f.controller.syncHandler(t.Context(), cache.ObjectName{Namespace: "default", Name: "hello"})
			if (res.err != nil) != tc.wantErr || res.after != tc.wantAfter {
				t.Errorf("sync ended with %+v, want error %t, after %s", res, tc.wantErr, tc.wantAfter)
			}
			if got := f.writes; fmt.Sprint(got) != fmt.Sprint(tc.wantActions) {
				t.Errorf("writes %q, want %q", got, tc.wantActions)
			}
			if f.farewells != tc.wantFarewells {
				t.Errorf("%d farewells, want %d", f.farewells, tc.wantFarewells)
			}
			if tc.wantReady != "" {
				g, err := f.greetings.TutorialV1().Greetings("default").Get(t.Context(), "hello", metav1.GetOptions{})
				must(t, err)
				ready := meta.FindStatusCondition(g.Status.Conditions, tutorialv1.ConditionReady)
				if ready == nil || ready.Status != tc.wantReady || g.Status.ObservedGeneration != g.Generation {
					t.Errorf("status %+v, want Ready %s at generation %d", g.Status, tc.wantReady, g.Generation)
				}
			}
		})
	}
}

// TestThePublishedConfigMapIsOwned: the ConfigMap names the Greeting as
// its controller, so the garbage collector deletes it with the Greeting
// and handleObject finds its way back.
func TestThePublishedConfigMapIsOwned(t *testing.T) {
	f := newFixture(t, nil, greeting("hi", withFinalizer))
	if res := f.controller.syncHandler(t.Context(), cache.ObjectName{Namespace: "default", Name: "hello"}); res.err != nil {
		t.Fatal(res.err)
	}
	cm, err := f.kube.CoreV1().ConfigMaps("default").Get(t.Context(), "hello", metav1.GetOptions{})
	must(t, err)
	if cm.Data["message"] != "hi" || !metav1.IsControlledBy(cm, greeting("hi")) {
		t.Errorf("ConfigMap %+v, want message hi, controlled by Greeting hello", cm)
	}
}

// TestHandleObjectQueuesOnlyTheOwner: an edit of a Greeting's ConfigMap
// queues the Greeting; a ConfigMap nobody owns, or whose owner is gone,
// queues nothing.
func TestHandleObjectQueuesOnlyTheOwner(t *testing.T) {
	orphan := ownedConfigMap("hi")
	orphan.OwnerReferences[0].UID = "uid-of-a-gone-greeting"
	for _, tc := range []struct {
		name string
		cm   *corev1.ConfigMap
		want int
	}{
		{"owned by a Greeting in the cache", ownedConfigMap("hi"), 1},
		{"owned by nobody", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}}, 0},
		{"owned by a Greeting that is gone", orphan, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, greeting("hi"))
			f.controller.handleObject(tc.cm)
			if got := f.controller.workqueue.Len(); got != tc.want {
				t.Errorf("%d keys queued, want %d", got, tc.want)
			}
		})
	}
}
