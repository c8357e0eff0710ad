package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// leaderElectionOptions are the --leader-elect* flags, named as
// kube-controller-manager names them.
type leaderElectionOptions struct {
	enabled           bool
	leaseDuration     time.Duration
	renewDeadline     time.Duration
	retryPeriod       time.Duration
	resourceName      string
	resourceNamespace string
}

// errLostLease ends the process when another replica took the lease: the
// work stopped at once, and the kubelet restarts a fresh candidate.
var errLostLease = errors.New("lost the leader lease")

// runLeaderElected runs work while this process holds the Lease, and
// returns when ctx ends (releasing the Lease, so a standby takes over at
// once rather than after the lease duration) or the Lease is lost.
func runLeaderElected(ctx context.Context, client kubernetes.Interface, opts leaderElectionOptions,
	watchdog *leaderelection.HealthzAdaptor, work func(ctx context.Context) error, onStandby func()) error {
	logger := klog.FromContext(ctx)
	hostname, err := os.Hostname()
	if err != nil {
		return err
	}
	// The hostname alone is not unique: two processes on one machine.
	id := hostname + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, opts.resourceNamespace, opts.resourceName,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("creating the leader election lock: %w", err)
	}

	workDone := make(chan error, 1)
	var leading atomic.Bool
	onStandby()
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            opts.resourceName,
		LeaseDuration:   opts.leaseDuration,
		RenewDeadline:   opts.renewDeadline,
		RetryPeriod:     opts.retryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				leading.Store(true)
				logger.Info("Became the leader", "identity", id)
				workDone <- work(ctx)
			},
			OnStoppedLeading: func() {
				logger.Info("Stopped leading", "identity", id)
			},
			OnNewLeader: func(current string) {
				if current != id {
					logger.Info("Another replica leads", "leader", current)
				}
			},
		},
	})
	if !leading.Load() {
		return nil // ctx ended while standing by
	}
	// RunOrDie returns once the lease is gone; the work's context is
	// cancelled by then: wait for the workers to finish.
	err = <-workDone
	if ctx.Err() == nil {
		return errors.Join(errLostLease, err)
	}
	return err
}
