package main

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
	"example.com/greeting/generated/clientset/versioned/fake"
	informers "example.com/greeting/generated/informers/externalversions"
)

// TestTheListerSeesWhatTheServerHolds: the informer lists the fake
// clientset's Greetings, then watches it, so a Greeting created later
// reaches the lister too.
func TestTheListerSeesWhatTheServerHolds(t *testing.T) {
	hello := &tutorialv1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}}
	client := fake.NewSimpleClientset(hello)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := NewController(factory.Tutorial().V1().Greetings())
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	factory.Start(ctx.Done())
	defer factory.Shutdown() // waits for the informers, which stop() ends first
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), c.greetingsSynced) {
		t.Fatal("the cache did not sync")
	}
	if _, err := c.greetingsLister.Greetings("default").Get("hello"); err != nil {
		t.Errorf("the listed Greeting is not in the cache: %v", err)
	}

	later := &tutorialv1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: "default"}}
	if _, err := client.TutorialV1().Greetings("default").Create(t.Context(), later, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watch delivers it soon, not at once: poll, with a deadline.
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := c.greetingsLister.Greetings("default").Get("later")
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Errorf("the watched Greeting never reached the cache: %v", err)
	}
}
