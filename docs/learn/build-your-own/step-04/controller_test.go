package main

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
	"example.com/greeting/generated/clientset/versioned/fake"
	informers "example.com/greeting/generated/informers/externalversions"
)

// TestEventsQueueEachKeyOnceAndAWorkerTakesIt: the informer's Add queues
// the Greeting's key; more events of the same Greeting do not queue it
// twice; a worker's successful sync leaves the queue empty, with no
// retry counted.
func TestEventsQueueEachKeyOnceAndAWorkerTakesIt(t *testing.T) {
	hello := &tutorialv1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}}
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(hello), 0)
	c, err := NewController(factory.Tutorial().V1().Greetings())
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	factory.Start(ctx.Done())
	defer factory.Shutdown() // waits for the informers, which stop() ends first
	defer stop()

	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.workqueue.Len() == 1, nil
	})
	if err != nil {
		t.Fatalf("the Add event queued no key: %v", err)
	}
	c.enqueueGreeting(hello)
	c.enqueueGreeting(hello)
	if n := c.workqueue.Len(); n != 1 {
		t.Errorf("%d keys queued after three events of one Greeting, want 1", n)
	}

	if !c.processNextWorkItem(ctx) {
		t.Fatal("the queue shut down")
	}
	if n, retries := c.workqueue.Len(), c.workqueue.NumRequeues(cache.MetaObjectToName(hello)); n != 0 || retries != 0 {
		t.Errorf("after the sync: %d keys queued, %d retries, want none", n, retries)
	}
}
