// Command soak runs a random workload of Networks against the real stack
// while it injects faults, then checks that Neutron holds exactly what the
// Networks declare. The workload and the faults are drawn from -seed, in
// two streams: the same seed injects the same faults in the same order and
// draws the same operations (how many operations fit between two faults,
// and which are refused while the API server is away, follow the wall
// clock).
//
//	make soak                          # SOAK_DURATION=3m SOAK_SEED=1
//	go run ./test/soak -duration 10m -seed 42
//	go run ./test/soak -seed 42 -dir /tmp/soak   # keeps every log
//
// The stack is the e2e one: kube-apiserver and etcd, Keystone, and
// neutron-server behind it (the controllers' way in), plus the noauth
// neutron-server on the same database through which the soak checks.
// Two controller replicas run with leader election, through clouds.yaml,
// as Keystone users of their own in one region, whose network endpoint
// hands each replica's requests, by its token's user, to a proxy to
// Neutron of its own: the proxy records its writes and injects its faults.
//
// Faults, one at a time, each followed by recovery (faults.go):
//   - controller-kill: SIGKILL of a random replica, restarted at once;
//   - controller-stop: SIGTERM of a random replica, restarted;
//   - controller-freeze: the leader frozen (SIGSTOP) past its lease, then
//     thawed;
//   - leader-partition: the leader alone cut off from the API server past
//     its lease, then healed;
//   - neutron-chaos: each replica's proxy to Neutron refuses, loses the
//     answer to, or delays a share of its requests for a while (chaos.go);
//   - token-revoke: the leader's Keystone token revoked;
//   - neutron-restart, keystone-restart, apiserver-restart, etcd-restart,
//     mariadb-restart, ovn-nb-restart, ovn-northd-restart: that daemon
//     stopped for a few seconds and started again.
//
// A replica that exits by itself (it lost its lease while the API server
// was away, and a controller that is no longer sure it leads must stop)
// is started again, as the kubelet would restart its container; the
// report counts these restarts.
//
// The history (history.go), checked during the run and after it: no
// replica writes to Neutron while the Lease samples show another leads,
// and no Network's status ever names another network or subnet than the
// first it named.
//
// The invariant, once the workload has stopped and the last fault is over
// (check.go): every Network is Ready; Neutron holds, with this cluster's
// mark, exactly one network and subnet per Network, with its cidr and
// gateway; no marked network or subnet is left of deleted Networks; the
// foreign resources seeded first are answered for byte for byte as before.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the workload and the faults")
	duration := flag.Duration("duration", 3*time.Minute, "how long the workload and the faults run")
	opEvery := flag.Duration("op-every", 300*time.Millisecond, "pause between two operations of the workload")
	faultEvery := flag.Duration("fault-every", 15*time.Second, "pause between two faults")
	dir := flag.String("dir", "", "the stack's directory, kept after the run with every daemon's and replica's whole log (default: a temporary one, removed)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *duration+10*time.Minute)
	defer cancel()
	if err := run(ctx, *dir, *seed, *duration, *opEvery, *faultEvery); err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, seed uint64, duration, opEvery, faultEvery time.Duration) error {
	stack, err := framework.Start(ctx, framework.Options{Dir: dir, Neutron: true, Keystone: true, ConversionWebhook: true})
	if err != nil {
		return err
	}
	defer stack.Stop()
	s := &soak{stack: stack, hist: newHistory(), ops: map[string]int{}, faults: map[string]int{},
		workload: rand.New(rand.NewPCG(seed, seed^0x5eed)), faultRNG: rand.New(rand.NewPCG(seed, seed^0xfa17)),
		kube: kubernetes.NewForConfigOrDie(stack.ControlPlane.AdminConfig), nc: clientset.NewForConfigOrDie(stack.ControlPlane.AdminConfig)}
	if err := s.setUp(ctx, seed); err != nil {
		return err
	}
	defer func() {
		for _, c := range s.controllers {
			_ = c.Stop(10 * time.Second)
		}
		if s.router != nil {
			_ = s.router.close()
		}
		for _, p := range s.proxies {
			_ = p.close()
		}
		for _, p := range s.apiProxies {
			_ = p.Close()
		}
	}()
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go s.watch(watchCtx)

	start := time.Now()
	end := start.Add(duration)
	nextFault := start.Add(faultEvery)
	var lastFault time.Time
	// faultDone is the fault under way's end, nil while none is: one at a
	// time, beside the workload.
	var faultDone chan error
	seen := 0
	for time.Now().Before(end) || faultDone != nil {
		if faultDone == nil && time.Now().After(nextFault) && time.Now().Before(end) {
			inject := s.drawFault()
			faultDone = make(chan error, 1)
			go func() { faultDone <- inject(ctx) }()
		}
		select {
		case err := <-faultDone:
			if err != nil {
				return err
			}
			faultDone = nil
			lastFault = time.Now()
			nextFault = lastFault.Add(faultEvery)
			seen = s.printNew(seen) // checked during the run, too
		default:
		}
		// Not while a fault is under way: it may be stopping and
		// starting a replica itself.
		if faultDone == nil {
			if err := s.supervise(); err != nil {
				return err
			}
		}
		if time.Now().Before(end) {
			s.operation(ctx)
		}
		if err := pause(ctx, opEvery); err != nil {
			return err
		}
	}
	converged, convergeErr := s.converge(ctx, 3*time.Minute)
	violations, err := s.checkAfterCollection(ctx)
	if err != nil {
		return err
	}
	stopWatching()
	violations = append(s.hist.check(), violations...)
	if convergeErr != nil {
		violations = append([]string{convergeErr.Error()}, violations...)
	}
	s.report(seed, duration, converged.Sub(lastFault), lastFault.IsZero() || convergeErr != nil, violations)
	if len(violations) > 0 {
		for _, c := range s.controllers {
			fmt.Printf("\n%s log (tail):\n%s\n", c.Name, c.Tail(8000))
		}
		return fmt.Errorf("%d invariant violations", len(violations))
	}
	return nil
}

// printNew prints the history's violations beyond the first seen ones as
// they are found, and returns how many there are now.
func (s *soak) printNew(seen int) int {
	violations := s.hist.check()
	for _, v := range violations[min(seen, len(violations)):] {
		fmt.Printf("soak: %s: violation: %s\n", time.Now().Format("15:04:05"), v)
	}
	return len(violations)
}

func (s *soak) report(seed uint64, duration, convergeAfterLastFault time.Duration, noFault bool, violations []string) {
	total := 0
	for _, n := range s.faults {
		total += n
	}
	injected := map[string]int{}
	tokensSeen, refused := 0, 0
	for _, p := range s.proxies {
		p.mu.Lock()
		for k, n := range p.injected {
			injected[k] += n
		}
		tokensSeen, refused = tokensSeen+len(p.tokens), refused+p.refused
		p.mu.Unlock()
	}
	s.hist.mu.Lock()
	writes, samples := len(s.hist.writes), len(s.hist.samples)
	s.hist.mu.Unlock()
	fmt.Printf("\nsoak: seed %d, %s of workload and faults\n\n", seed, duration)
	fmt.Println("| figure | value |")
	fmt.Println("| --- | --- |")
	fmt.Printf("| operations | %s |\n", counts(s.ops))
	fmt.Printf("| faults injected | %d: %s |\n", total, counts(s.faults))
	fmt.Printf("| requests faulted by the chaos proxies | %s |\n", counts(injected))
	fmt.Printf("| Neutron writes recorded, Lease samples | %d, %d |\n", writes, samples)
	fmt.Printf("| Keystone tokens the replicas used, requests Neutron refused with 401 | %d, %d |\n", tokensSeen, refused)
	fmt.Printf("| replicas restarted after exiting by themselves | %d |\n", s.restarts)
	if noFault {
		fmt.Println("| time to converge after the last fault | - (no fault, or no convergence) |")
	} else {
		fmt.Printf("| time to converge after the last fault | %s |\n", convergeAfterLastFault.Round(100*time.Millisecond))
	}
	fmt.Printf("| foreign resources seeded, untouched | %d |\n", len(s.foreign))
	fmt.Printf("| invariant violations | %d |\n", len(violations))
	for _, v := range violations {
		fmt.Printf("  - %s\n", v)
	}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
