package main

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
	"example.com/greeting/generated/clientset/versioned/fake"
	informers "example.com/greeting/generated/informers/externalversions"
)

// newTestController is a Controller on fake clientsets whose caches hold
// objects, put straight into the informers' indexers: no informer runs,
// so what the sync reads is exactly what the test gave it.
func newTestController(t *testing.T, objects ...runtime.Object) (*Controller, *k8sfake.Clientset) {
	t.Helper()
	kube, greetings := k8sfake.NewSimpleClientset(), fake.NewSimpleClientset()
	kubeInformers := kubeinformers.NewSharedInformerFactory(kube, 0)
	greetingInformers := informers.NewSharedInformerFactory(greetings, 0)
	c, err := NewController(kube, greetings, greetingInformers.Tutorial().V1().Greetings(), kubeInformers.Core().V1().ConfigMaps())
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		switch o := obj.(type) {
		case *tutorialv1.Greeting:
			err = greetingInformers.Tutorial().V1().Greetings().Informer().GetIndexer().Add(o)
		case *corev1.ConfigMap:
			err = kubeInformers.Core().V1().ConfigMaps().Informer().GetIndexer().Add(o)
			_ = kube.Tracker().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, kube
}

var hello = cache.ObjectName{Namespace: "default", Name: "hello"}

func greeting(msg string) *tutorialv1.Greeting {
	return &tutorialv1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}, Spec: tutorialv1.GreetingSpec{Message: msg}}
}

// TestTheSyncPublishesTheMessage: a sync creates the missing ConfigMap,
// updates one holding another message, and writes nothing when the
// ConfigMap already holds it.
func TestTheSyncPublishesTheMessage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		configMap *corev1.ConfigMap
		wantVerbs []string
	}{
		{"none yet", nil, []string{"create"}},
		{"another message", newConfigMap(greeting("bye")), []string{"update"}},
		{"the message", newConfigMap(greeting("hi")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := []runtime.Object{greeting("hi")}
			if tc.configMap != nil {
				objects = append(objects, tc.configMap)
			}
			c, kube := newTestController(t, objects...)
			if res := c.syncHandler(t.Context(), hello); res.err != nil {
				t.Fatal(res.err)
			}
			var verbs []string
			for _, a := range kube.Actions() {
				verbs = append(verbs, a.GetVerb())
			}
			if fmt.Sprint(verbs) != fmt.Sprint(tc.wantVerbs) {
				t.Errorf("the sync did %v, want %v", verbs, tc.wantVerbs)
			}
			cm, err := kube.CoreV1().ConfigMaps("default").Get(t.Context(), "hello", metav1.GetOptions{})
			if err != nil || cm.Data["message"] != "hi" {
				t.Errorf("ConfigMap %v (%v), want message hi", cm, err)
			}
		})
	}
}

// TestAGoneGreetingNeedsNothing: the sync of a key whose Greeting is not
// in the cache ends, without error and without a write.
func TestAGoneGreetingNeedsNothing(t *testing.T) {
	c, kube := newTestController(t)
	if res := c.syncHandler(t.Context(), hello); res.err != nil || len(kube.Actions()) != 0 {
		t.Errorf("sync of a gone Greeting: %+v, actions %v; want nothing", res, kube.Actions())
	}
}
