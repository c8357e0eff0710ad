package leader

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2/ktesting"
)

// TestTheFenceClosesWhileARenewalHangs is the frozen leader's case: its
// renewal is stuck on the wire, so client-go still calls it the leader
// and its work runs on, but after the renew deadline without a renewal
// the fence refuses every write. (A process resumed after a freeze is in
// this state until its first request to the API server comes back.)
func TestTheFenceClosesWhileARenewalHangs(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, shutdown := context.WithCancel(ctx)
	defer shutdown()
	client := fake.NewClientset()
	lock := leaseLock(t, client)
	const leaseDuration, renewDeadline = 3 * time.Second, time.Second
	opts := componentbaseconfig.LeaderElectionConfiguration{
		LeaseDuration: metav1.Duration{Duration: leaseDuration},
		RenewDeadline: metav1.Duration{Duration: renewDeadline},
		RetryPeriod:   metav1.Duration{Duration: 100 * time.Millisecond},
		ResourceName:  "network-controller",
	}
	// Renewals hang once hanging is set, until hung is closed. The
	// reactor is in place before the elector starts: the fake's reactor
	// chain is not safe to change while it is used.
	var hanging atomic.Bool
	hung := make(chan struct{})
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if hanging.Load() {
			<-hung
		}
		return false, nil, nil
	})
	fence := &Fence{}
	working := make(chan context.Context)
	work := func(ctx context.Context) error {
		working <- ctx
		<-ctx.Done()
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, lock, "me", opts, nil, fence, work, func() {}) }()
	workCtx := <-working
	if err := fence.Check(); err != nil {
		t.Fatalf("the fence refuses the leader that just renewed: %v", err)
	}

	hanging.Store(true)
	closedAt := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, renewDeadline+time.Second, true, func(context.Context) (bool, error) {
		return fence.Check() != nil, nil
	}); err != nil {
		t.Fatalf("the fence still lets writes through %v after renewals stopped (the lease lasts %v)", time.Since(closedAt), leaseDuration)
	}
	if workCtx.Err() != nil {
		t.Fatal("the work was stopped: the test did not hold the renewal on the wire")
	}

	close(hung)
	shutdown()
	if err := <-done; err != nil {
		t.Logf("the election ended with renewals held: %v", err)
	}
}

// TestTheFenceIsOpenWithoutLeaderElection: with --leader-elect=false
// nothing is ever watched, and every write goes out.
func TestTheFenceIsOpenWithoutLeaderElection(t *testing.T) {
	var none *Fence
	if err := none.Check(); err != nil {
		t.Errorf("nil fence: %v", err)
	}
	if err := (&Fence{}).Check(); err != nil {
		t.Errorf("unwatched fence: %v", err)
	}
}
