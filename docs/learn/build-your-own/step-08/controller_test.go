package main

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
	"example.com/greeting/generated/clientset/versioned/fake"
	informers "example.com/greeting/generated/informers/externalversions"
)

// newTestController is a Controller on fake clientsets whose caches and
// fakes hold objects (put straight into the informers' indexers: no
// informer runs), and whose farewell returns farewellErr and counts calls.
func newTestController(t *testing.T, farewellErr error, objects ...runtime.Object) (*Controller, *k8sfake.Clientset, *fake.Clientset, *int) {
	t.Helper()
	kube, greetings := k8sfake.NewSimpleClientset(), fake.NewSimpleClientset()
	kubeInformers := kubeinformers.NewSharedInformerFactory(kube, 0)
	greetingInformers := informers.NewSharedInformerFactory(greetings, 0)
	farewells := 0
	c, err := NewController(kube, greetings, greetingInformers.Tutorial().V1().Greetings(), kubeInformers.Core().V1().ConfigMaps(),
		func(context.Context, *tutorialv1.Greeting) error { farewells++; return farewellErr })
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		switch o := obj.(type) {
		case *tutorialv1.Greeting:
			err = errors.Join(greetingInformers.Tutorial().V1().Greetings().Informer().GetIndexer().Add(o), greetings.Tracker().Add(o))
		case *corev1.ConfigMap:
			err = errors.Join(kubeInformers.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o), kube.Tracker().Add(o))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, kube, greetings, &farewells
}

var hello = cache.ObjectName{Namespace: "default", Name: "hello"}

func greeting(msg string, finalizers ...string) *tutorialv1.Greeting {
	return &tutorialv1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", UID: "uid-1", Generation: 2, Finalizers: finalizers},
		Spec:       tutorialv1.GreetingSpec{Message: msg},
	}
}

func deleting(g *tutorialv1.Greeting) *tutorialv1.Greeting {
	g.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	return g
}

// TestANewGreetingGetsTheFinalizerFirst: the finalizer is on before the
// ConfigMap is made, so that nothing the finalizer guards exists without it.
func TestANewGreetingGetsTheFinalizerFirst(t *testing.T) {
	c, kube, greetings, _ := newTestController(t, nil, greeting("hi"))
	if res := c.syncHandler(t.Context(), hello); res.err != nil {
		t.Fatal(res.err)
	}
	g, err := greetings.TutorialV1().Greetings("default").Get(t.Context(), "hello", metav1.GetOptions{})
	if err != nil || !hasFinalizer(g) {
		t.Errorf("Greeting %v (%v), want the finalizer on", g, err)
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(t.Context(), "hello", metav1.GetOptions{}); err != nil {
		t.Errorf("no ConfigMap: %v", err)
	}
}

// TestTheFinalizerGoesOnlyAfterTheFarewell: a deleted Greeting keeps its
// finalizer until farewell succeeds, and the failed sync is retried.
func TestTheFinalizerGoesOnlyAfterTheFarewell(t *testing.T) {
	for _, tc := range []struct {
		name          string
		farewellErr   error
		wantFinalizer bool
	}{
		{"farewell said", nil, false},
		{"farewell failed", errors.New("unreachable"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, greetings, farewells := newTestController(t, tc.farewellErr, deleting(greeting("hi", tutorialv1.Finalizer)))
			res := c.syncHandler(t.Context(), hello)
			if (res.err != nil) != tc.wantFinalizer || *farewells != 1 {
				t.Errorf("sync ended with %+v after %d farewells, want one farewell and error %t", res, *farewells, tc.wantFinalizer)
			}
			g, err := greetings.TutorialV1().Greetings("default").Get(t.Context(), "hello", metav1.GetOptions{})
			if err != nil || hasFinalizer(g) != tc.wantFinalizer {
				t.Errorf("Greeting %v (%v), want the finalizer on: %t", g, err, tc.wantFinalizer)
			}
		})
	}
}

// TestStatusSaysReadyAtTheGeneration: after a sync, Ready is True for the
// Greeting's generation; a second sync with that status writes nothing.
func TestStatusSaysReadyAtTheGeneration(t *testing.T) {
	c, _, greetings, _ := newTestController(t, nil, greeting("hi", tutorialv1.Finalizer))
	if res := c.syncHandler(t.Context(), hello); res.err != nil {
		t.Fatal(res.err)
	}
	g, err := greetings.TutorialV1().Greetings("default").Get(t.Context(), "hello", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(g.Status.Conditions, tutorialv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || g.Status.ObservedGeneration != g.Generation {
		t.Fatalf("status %+v, want Ready True at generation %d", g.Status, g.Generation)
	}

	c, kube, greetings, _ := newTestController(t, nil, g, newConfigMap(g))
	if res := c.syncHandler(t.Context(), hello); res.err != nil {
		t.Fatal(res.err)
	}
	if writes := len(greetings.Actions()) + len(kube.Actions()); writes != 0 {
		t.Errorf("a sync of a Greeting in order wrote: %v %v", greetings.Actions(), kube.Actions())
	}
}

// TestTheConfigMapIsOwnedAndAForeignOneLeftAlone: the published ConfigMap
// names its Greeting as controller; a ConfigMap of that name that another
// made is not overwritten, and Ready says why.
func TestTheConfigMapIsOwnedAndAForeignOneLeftAlone(t *testing.T) {
	c, kube, _, _ := newTestController(t, nil, greeting("hi", tutorialv1.Finalizer))
	if res := c.syncHandler(t.Context(), hello); res.err != nil {
		t.Fatal(res.err)
	}
	cm, err := kube.CoreV1().ConfigMaps("default").Get(t.Context(), "hello", metav1.GetOptions{})
	if err != nil || !metav1.IsControlledBy(cm, greeting("hi")) {
		t.Errorf("ConfigMap %v (%v), want it controlled by Greeting hello", cm, err)
	}

	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}, Data: map[string]string{"message": "mine"}}
	c, kube, greetings, _ := newTestController(t, nil, greeting("hi", tutorialv1.Finalizer), foreign)
	if res := c.syncHandler(t.Context(), hello); res.err != nil || res.after != notOwnedRetry {
		t.Errorf("sync ended with %+v, want a look again in %s", res, notOwnedRetry)
	}
	for _, a := range kube.Actions() {
		t.Errorf("the sync wrote a ConfigMap it does not own: %s", a.GetVerb())
	}
	g, err := greetings.TutorialV1().Greetings("default").Get(t.Context(), "hello", metav1.GetOptions{})
	if ready := meta.FindStatusCondition(g.Status.Conditions, tutorialv1.ConditionReady); err != nil || ready == nil || ready.Reason != "ConfigMapNotOwned" {
		t.Errorf("status %+v (%v), want Ready False, ConfigMapNotOwned", g.Status, err)
	}
}

// TestAnEditedConfigMapQueuesItsGreeting: handleObject queues the Greeting
// that controls a ConfigMap, and nothing for a ConfigMap nobody controls.
func TestAnEditedConfigMapQueuesItsGreeting(t *testing.T) {
	c, _, _, _ := newTestController(t, nil, greeting("hi"))
	c.handleObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}})
	if n := c.workqueue.Len(); n != 0 {
		t.Errorf("a ConfigMap nobody controls queued %d keys", n)
	}
	c.handleObject(newConfigMap(greeting("edited")))
	if n := c.workqueue.Len(); n != 1 {
		t.Errorf("the Greeting's own ConfigMap queued %d keys, want 1", n)
	}
}
