package leader

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2/ktesting"
)

// TestTheLeaseOutlivesTheWork: shut down while leading, a replica stops
// its work, waits for it, and only then releases the Lease, so that no
// successor writes beside workers that are still draining the queue.
func TestTheLeaseOutlivesTheWork(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, shutdown := context.WithCancel(ctx)
	defer shutdown()
	client := fake.NewClientset()
	lock := leaseLock(t, client)
	opts := componentbaseconfig.LeaderElectionConfiguration{
		LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
		RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
		RetryPeriod:   metav1.Duration{Duration: 100 * time.Millisecond},
		ResourceName:  "network-controller",
	}
	working, stopped, drained := make(chan struct{}), make(chan struct{}), make(chan struct{})
	work := func(ctx context.Context) error {
		close(working)
		<-ctx.Done()
		close(stopped)
		<-drained // the workers finish the items they hold
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, lock, "me", opts, nil, nil, work, func() {}) }()

	<-working
	shutdown()
	<-stopped
	holder := func() string {
		lease, err := client.CoordinationV1().Leases("default").Get(context.Background(), "network-controller", metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	// client-go would release at its next retry (100 ms); twenty retries
	// later the Lease must still be ours.
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 2*time.Second, true, func(context.Context) (bool, error) {
		return holder() != "me", nil
	}); err == nil {
		t.Fatalf("the Lease was given up (holder %q) while the work drained", holder())
	}
	close(drained)
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return holder() == "", nil
	}); err != nil {
		t.Errorf("the Lease is still held by %q after the work finished", holder())
	}
}

// leaseLock is the Lease default/network-controller in client, held as
// "me".
func leaseLock(t *testing.T, client *fake.Clientset) resourcelock.Interface {
	t.Helper()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "default", "network-controller",
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: "me"})
	if err != nil {
		t.Fatal(err)
	}
	return lock
}
