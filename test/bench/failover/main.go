// Command failover measures how long a standby takes to lead after the
// leader is killed (SIGKILL) or frozen (SIGSTOP), with the leader-election
// flags the deployment uses, on the real stack: two controllers share one
// Lease; the leader is stopped; the time until the standby reports
// leader_election_master_status 1 is one sample. It prints the
// distribution for each signal. What binds it is client-go's election: a
// standby takes an unrenewed Lease only after it has seen the same record
// for the lease duration, and it looks again every retry period (with
// jitter), so a takeover takes between the lease duration and the lease
// duration plus a retry period and its jitter after the last renewal.
//
//	make bench-failover                    # FAILOVER_N=10
//	go run ./test/bench/failover -n 20 -lease 15s -renew 10s -retry 2s
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/samplecrd/network-controller/test/framework"
)

type config struct {
	n                   int
	lease, renew, retry time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 10, "takeovers measured per signal")
	flag.DurationVar(&c.lease, "lease", 15*time.Second, "--leader-elect-lease-duration")
	flag.DurationVar(&c.renew, "renew", 10*time.Second, "--leader-elect-renew-deadline")
	flag.DurationVar(&c.retry, "retry", 2*time.Second, "--leader-elect-retry-period")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

// replica is one controller process and where its metrics are.
type replica struct {
	proc    *framework.Process
	metrics string
}

func run(ctx context.Context, c config) error {
	stack, err := framework.Start(ctx, framework.Options{Neutron: true})
	if err != nil {
		return err
	}
	defer stack.Stop()
	binary := filepath.Join(stack.Dir, "network-controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = stack.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the controller: %v\n%s", err, out)
	}
	kube := kubernetes.NewForConfigOrDie(stack.ControlPlane.AdminConfig)
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "failover"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	start := func() (*replica, error) { return startReplica(ctx, stack, binary, c) }
	results := map[string][]time.Duration{}
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGSTOP: "SIGSTOP"}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		a, err := start()
		if err != nil {
			return err
		}
		if err := waitFor(ctx, 60*time.Second, func() bool { return a.leading(ctx) }); err != nil {
			return fmt.Errorf("the first replica never led: %w", err)
		}
		leader := a
		for i := range c.n {
			standby, err := start()
			if err != nil {
				return err
			}
			// The standby has seen the Lease renewed at least once, as a
			// standby in a running deployment has.
			if err := waitFor(ctx, 30*time.Second, func() bool { return standby.ready(ctx) }); err != nil {
				return err
			}
			if err := sleepUntilRenewed(ctx, kube, c.retry); err != nil {
				return err
			}
			stopped := time.Now()
			if sig == syscall.SIGKILL {
				leader.proc.Kill()
			} else if err := leader.proc.Freeze(); err != nil {
				return err
			}
			if err := waitFor(ctx, 2*c.lease+2*c.retry, func() bool { return standby.leading(ctx) }); err != nil {
				return fmt.Errorf("%s, takeover %d: %w", sig, i, err)
			}
			took := time.Since(stopped)
			results[names[sig]] = append(results[names[sig]], took)
			fmt.Fprintf(os.Stderr, "failover: %s %d/%d: %.2fs\n", names[sig], i+1, c.n, took.Seconds())
			leader.proc.Kill() // a frozen one too: SIGKILL needs no thaw
			leader = standby
		}
		leader.proc.Kill()
	}
	fmt.Printf("\nTakeover after the leader stops, --leader-elect-lease-duration=%v --leader-elect-renew-deadline=%v --leader-elect-retry-period=%v, %d each:\n\n", c.lease, c.renew, c.retry, c.n)
	fmt.Println("| signal | min | median | p90 | max |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, sig := range []string{"SIGKILL", "SIGSTOP"} {
		d := results[sig]
		slices.Sort(d)
		fmt.Printf("| %s | %s | %s | %s | %s |\n", sig, secs(d[0]), secs(d[len(d)/2]), secs(d[(len(d)*9)/10-boolInt(len(d)%10 == 0)]), secs(d[len(d)-1]))
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// sleepUntilRenewed returns just after the leader renewed the Lease, so
// that every sample starts at the same point of the renewal cycle: the
// worst case, a full lease duration still to wait.
func sleepUntilRenewed(ctx context.Context, kube kubernetes.Interface, retry time.Duration) error {
	lease, err := kube.CoordinationV1().Leases("failover").Get(ctx, "network-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	before := lease.Spec.RenewTime
	return waitFor(ctx, 3*retry, func() bool {
		l, err := kube.CoordinationV1().Leases("failover").Get(ctx, "network-controller", metav1.GetOptions{})
		return err == nil && !l.Spec.RenewTime.Equal(before)
	})
}

func startReplica(ctx context.Context, stack *framework.Stack, binary string, c config) (*replica, error) {
	ports, err := framework.FreePorts(2)
	if err != nil {
		return nil, err
	}
	p := &framework.Process{
		Name: "network-controller",
		Path: binary,
		Args: []string{
			"--kubeconfig=" + stack.ControlPlane.AdminKubeconfig,
			"--namespace=failover",
			"--neutron-endpoint=" + stack.Neutron.Endpoint,
			"--cluster-name=failover",
			"--leader-elect-resource-namespace=failover",
			"--leader-elect-lease-duration=" + c.lease.String(),
			"--leader-elect-renew-deadline=" + c.renew.String(),
			"--leader-elect-retry-period=" + c.retry.String(),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[0]),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[1]),
		},
		Dir:     stack.Dir,
		LogPath: filepath.Join(stack.Dir, fmt.Sprintf("controller-%d.log", time.Now().UnixNano())),
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	r := &replica{proc: p, metrics: fmt.Sprintf("http://127.0.0.1:%d", ports[0])}
	probe := fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[1])
	if err := waitFor(ctx, 30*time.Second, func() bool { code, _ := get(ctx, probe); return code == http.StatusOK }); err != nil {
		return nil, fmt.Errorf("the controller did not serve its probes: %w\n%s", err, p.Tail(4000))
	}
	return r, nil
}

// leading reports whether r says it holds the Lease.
func (r *replica) leading(ctx context.Context) bool {
	_, body := get(ctx, r.metrics+"/metrics")
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "leader_election_master_status{") && strings.HasSuffix(strings.TrimSpace(line), " 1") {
			return true
		}
	}
	return false
}

// ready reports whether r serves its metrics (a standby's election has
// begun once it does).
func (r *replica) ready(ctx context.Context) bool {
	code, _ := get(ctx, r.metrics+"/metrics")
	return code == http.StatusOK
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func get(ctx context.Context, url string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
