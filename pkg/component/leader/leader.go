// Package leader runs a controller's work only while its process holds a
// Lease, with client-go's leaderelection configured and checked the way
// kube-controller-manager's --leader-elect* flags are.
package leader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	componentbasevalidation "k8s.io/component-base/config/validation"
	"k8s.io/klog/v2"
)

// Validate checks the --leader-elect* flags with
// component-base's validation, as kube-controller-manager does, and with
// the one rule it leaves to client-go's panic: a retry period short enough
// for a renewal to be tried (with jitter) before the renew deadline.
func Validate(c componentbaseconfig.LeaderElectionConfiguration) error {
	errs := componentbasevalidation.ValidateLeaderElectionConfiguration(&c, field.NewPath("leaderElection"))
	if c.LeaderElect && c.RenewDeadline.Duration <= time.Duration(leaderelection.JitterFactor*float64(c.RetryPeriod.Duration)) {
		errs = append(errs, field.Invalid(field.NewPath("leaderElection", "renewDeadline"), c.RenewDeadline.Duration.String(),
			fmt.Sprintf("must be more than %v x --leader-elect-retry-period", leaderelection.JitterFactor)))
	}
	if c.LeaderElect && c.ResourceLock != resourcelock.LeasesResourceLock {
		errs = append(errs, field.NotSupported(field.NewPath("leaderElection", "resourceLock"), c.ResourceLock, []string{resourcelock.LeasesResourceLock}))
	}
	return errs.ToAggregate()
}

// ErrLostLease ends the process when another replica took the lease: the
// work's context was cancelled (the workers drained the queue on it, each
// key's requests failing at once and its writes fenced), and the kubelet
// restarts a fresh candidate.
var ErrLostLease = errors.New("lost the leader lease")

// Run runs work while this process holds the Lease, and returns when ctx
// ends or the Lease is lost. When ctx ends, the work is stopped and waited
// for first, and only then is the Lease released (so a standby takes over
// at once rather than after the lease duration): client-go's
// ReleaseOnCancel alone would release it as soon as ctx ends, while the
// workers still drain the queue, and a successor could write beside them.
func Run(ctx context.Context, client kubernetes.Interface, opts componentbaseconfig.LeaderElectionConfiguration,
	watchdog *leaderelection.HealthzAdaptor, fence *Fence, work func(ctx context.Context) error, onStandby func()) error {
	hostname, err := os.Hostname()
	if err != nil {
		return err
	}
	// The hostname alone is not unique: two processes on one machine.
	id := hostname + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(opts.ResourceLock, opts.ResourceNamespace, opts.ResourceName,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("creating the leader election lock: %w", err)
	}
	return run(ctx, &releasesOnlyOurs{Interface: lock, id: id}, id, opts, watchdog, fence, work, onStandby)
}

func run(ctx context.Context, lock resourcelock.Interface, id string, opts componentbaseconfig.LeaderElectionConfiguration,
	watchdog *leaderelection.HealthzAdaptor, fence *Fence, work func(ctx context.Context) error, onStandby func()) error {
	logger := klog.FromContext(ctx)
	// The election's context ends only once the work is over (or when ctx
	// ends while standing by): its end is what releases the Lease.
	electionCtx, endElection := context.WithCancel(context.WithoutCancel(ctx))
	defer endElection()
	workDone := make(chan error, 1)
	var leading atomic.Bool
	go func() {
		<-ctx.Done()
		if !leading.Load() {
			endElection()
		}
	}()
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            opts.ResourceName,
		LeaseDuration:   opts.LeaseDuration.Duration,
		RenewDeadline:   opts.RenewDeadline.Duration,
		RetryPeriod:     opts.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) {
				leading.Store(true)
				logger.Info("Became the leader", "identity", id)
				// The work stops when the Lease is lost (leaderCtx) or
				// the process shuts down (ctx), whichever comes first.
				workCtx, stop := context.WithCancel(leaderCtx)
				defer stop()
				go func() {
					select {
					case <-ctx.Done():
						stop()
					case <-workCtx.Done():
					}
				}()
				workDone <- work(workCtx)
				// The workers have finished: now the Lease may go.
				endElection()
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
	if err != nil {
		return fmt.Errorf("configuring leader election: %w", err)
	}
	if watchdog != nil {
		watchdog.SetLeaderElection(elector)
	}
	fence.watch(elector, opts.LeaseDuration.Duration, opts.RenewDeadline.Duration)
	onStandby()
	elector.Run(electionCtx)
	if !leading.Load() {
		return nil // ctx ended while standing by
	}
	// Run returns once the Lease is released or lost; the work's
	// context is cancelled by then: wait for the workers to finish.
	workErr := <-workDone
	if ctx.Err() == nil {
		return errors.Join(ErrLostLease, workErr)
	}
	return workErr
}
