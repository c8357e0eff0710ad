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
//
// The stack is the e2e one: kube-apiserver and etcd, Keystone, and
// neutron-server behind it (the controllers' way in), plus the noauth
// neutron-server on the same database through which the soak checks.
// Two controller replicas run with leader election, through clouds.yaml.
//
// Faults, one at a time, each followed by recovery:
//   - controller-kill: SIGKILL of a random replica, restarted at once;
//   - controller-stop: SIGTERM of a random replica, restarted;
//   - neutron-restart: the controllers' neutron-server stopped for a few
//     seconds and started again;
//   - keystone-restart: Keystone stopped for a few seconds and started;
//   - apiserver-restart: kube-apiserver stopped for a few seconds and
//     started again (etcd keeps the state).
//
// A replica that exits by itself (it lost its lease while the API server
// was away, and a controller that is no longer sure it leads must stop)
// is started again, as the kubelet would restart its container; the
// report counts these restarts.
//
// The invariant, once the workload has stopped and the last fault is over:
// every Network is Ready; Neutron holds, with this cluster's mark, exactly
// one network and subnet per Network, with its cidr and gateway; nothing
// is left of deleted Networks; the foreign networks seeded first exist
// unchanged.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/pkg/neutron"
	"github.com/samplecrd/network-controller/test/framework"
)

const (
	namespace = "soak"
	cluster   = "soak"
	// slots is how many Networks may exist at once; slot i owns the
	// range 10.150.i.0/24, so Networks never overlap.
	slots = 40
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the workload and the faults")
	duration := flag.Duration("duration", 3*time.Minute, "how long the workload and the faults run")
	opEvery := flag.Duration("op-every", 300*time.Millisecond, "pause between two operations of the workload")
	faultEvery := flag.Duration("fault-every", 15*time.Second, "pause between two faults")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *duration+10*time.Minute)
	defer cancel()
	if err := run(ctx, *seed, *duration, *opEvery, *faultEvery); err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		os.Exit(1)
	}
}

type soak struct {
	stack       *framework.Stack
	kube        kubernetes.Interface
	nc          clientset.Interface
	controllers []*framework.Process
	// workload and faultRNG are two streams of the seed: each operation
	// draws three numbers and each fault its own, so how many operations
	// fit between two faults (the wall clock's business) changes neither
	// the faults nor the operations' draws.
	workload, faultRNG *rand.Rand
	ops, faults        map[string]int
	// restarts counts replicas that exited by themselves and were started again.
	restarts int
	foreign  map[string]string // ID → name
}

func run(ctx context.Context, seed uint64, duration, opEvery, faultEvery time.Duration) error {
	stack, err := framework.Start(ctx, framework.Options{Neutron: true, Keystone: true})
	if err != nil {
		return err
	}
	defer stack.Stop()
	s := &soak{stack: stack, workload: rand.New(rand.NewPCG(seed, seed^0x5eed)), faultRNG: rand.New(rand.NewPCG(seed, seed^0xfa17)), ops: map[string]int{}, faults: map[string]int{},
		kube: kubernetes.NewForConfigOrDie(stack.ControlPlane.AdminConfig), nc: clientset.NewForConfigOrDie(stack.ControlPlane.AdminConfig)}
	if err := s.setUp(ctx); err != nil {
		return err
	}
	defer func() {
		for _, c := range s.controllers {
			_ = c.Stop(10 * time.Second)
		}
	}()

	start := time.Now()
	end := start.Add(duration)
	nextFault := start.Add(faultEvery)
	var lastFault time.Time
	for time.Now().Before(end) {
		if time.Now().After(nextFault) {
			if err := s.fault(ctx); err != nil {
				return err
			}
			lastFault = time.Now()
			nextFault = lastFault.Add(faultEvery)
		}
		if err := s.supervise(); err != nil {
			return err
		}
		s.operation(ctx)
		if err := pause(ctx, opEvery); err != nil {
			return err
		}
	}
	converged, convergeErr := s.converge(ctx, 3*time.Minute)
	violations, err := s.checkAfterCollection(ctx)
	if err != nil {
		return err
	}
	if convergeErr != nil {
		violations = append([]string{convergeErr.Error()}, violations...)
	}
	s.report(seed, duration, converged.Sub(lastFault), lastFault.IsZero() || convergeErr != nil, violations)
	if len(violations) > 0 {
		return fmt.Errorf("%d invariant violations", len(violations))
	}
	return nil
}

// setUp builds the controller, seeds foreign networks in the controllers'
// project, and starts two replicas.
func (s *soak) setUp(ctx context.Context) error {
	binary := filepath.Join(s.stack.Dir, "network-controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = s.stack.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the controller: %v\n%s", err, out)
	}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := s.seedForeign(ctx); err != nil {
		return err
	}
	kubeconfig := filepath.Join(s.stack.Dir, "soak.kubeconfig")
	if err := framework.WriteKubeconfig(s.stack.ControlPlane.AdminConfig, "admin", kubeconfig); err != nil {
		return err
	}
	for i := range 2 {
		c := &framework.Process{
			Name: fmt.Sprintf("controller-%d", i),
			Path: binary,
			Args: []string{"--kubeconfig=" + kubeconfig, "--namespace=" + namespace, "--cluster-name=" + cluster,
				"--os-cloud=" + framework.PasswordCloud, "--leader-elect-resource-namespace=default",
				"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s",
				"--health-probe-bind-address=0", "--metrics-bind-address=0", "--max-retry-delay=10s",
				"--neutron-resync-period=" + neutronResync.String(), "--orphan-grace-period=" + orphanGrace.String()},
			Env:     append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+s.stack.Keystone.CloudsYAML),
			Dir:     s.stack.Dir,
			LogPath: filepath.Join(s.stack.Dir, fmt.Sprintf("controller-%d.log", i)),
		}
		if err := c.Start(); err != nil {
			return err
		}
		s.controllers = append(s.controllers, c)
	}
	return nil
}

// seedForeign makes networks in the controllers' project that are not
// theirs: another tool's, and another cluster's with a Network's name.
func (s *soak) seedForeign(ctx context.Context) error {
	s.foreign = map[string]string{}
	for _, o := range []networks.CreateOpts{
		{Name: "k8s-clusterapi-cluster-default-foo", ProjectID: s.stack.Keystone.ProjectID},
		{Name: namespace + "/n-1/00000000-0000-0000-0000-000000000001", Description: "managed-by=network-controller,cluster=other", ProjectID: s.stack.Keystone.ProjectID},
		{Name: "hand-made", ProjectID: s.stack.Keystone.ProjectID},
	} {
		n, err := networks.Create(ctx, s.stack.Neutron.Client, o).Extract()
		if err != nil {
			return fmt.Errorf("seeding a foreign network: %w", err)
		}
		s.foreign[n.ID] = n.Name
	}
	return nil
}

// operation is one random change of the workload: create a Network in a
// free slot, move a Network's gateway, or delete a Network.
func (s *soak) operation(ctx context.Context) {
	slot := s.workload.IntN(slots)
	kind := s.workload.IntN(10)
	host := 1 + s.workload.IntN(250) // the new gateway, drawn whatever the operation
	name := fmt.Sprintf("n-%d", slot)
	client := s.nc.SamplecrdV1().Networks(namespace)
	current, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return // the API server may be restarting; the next operation tries again
	}
	found := err == nil
	exists := found && current.DeletionTimestamp == nil
	switch {
	case !found && kind < 6:
		_, err = client.Create(ctx, &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       samplecrdv1.NetworkSpec{CIDR: fmt.Sprintf("10.150.%d.0/24", slot), Gateway: fmt.Sprintf("10.150.%d.1", slot)},
		}, metav1.CreateOptions{})
		s.ops["create"]++
	case exists && kind < 8:
		patch := fmt.Sprintf(`{"spec":{"gateway":"10.150.%d.%d"}}`, slot, host)
		_, err = client.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		s.ops["update"]++
	case exists:
		err = client.Delete(ctx, name, metav1.DeleteOptions{})
		s.ops["delete"]++
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsAlreadyExists(err) {
		s.ops["refused"]++
	}
}

// fault injects one fault and waits for its recovery to begin.
func (s *soak) fault(ctx context.Context) error {
	kinds := []string{"controller-kill", "controller-stop", "neutron-restart", "keystone-restart", "apiserver-restart"}
	kind := kinds[s.faultRNG.IntN(len(kinds))]
	s.faults[kind]++
	down := time.Duration(2+s.faultRNG.IntN(5)) * time.Second
	switch kind {
	case "controller-kill", "controller-stop":
		c := s.controllers[s.faultRNG.IntN(len(s.controllers))]
		if kind == "controller-kill" {
			c.Kill()
		} else {
			_ = c.Stop(10 * time.Second)
		}
		return c.Start()
	case "neutron-restart":
		p := s.stack.Neutron.KeystoneServer
		return outage(ctx, p, down, p.Start)
	case "keystone-restart":
		p := s.stack.Keystone.Server
		return outage(ctx, p, down, p.Start)
	case "apiserver-restart":
		cp := s.stack.ControlPlane
		return outage(ctx, cp.APIServer, down, func() error { return cp.StartAPIServer(ctx) })
	}
	return nil
}

// outage stops daemon p, waits down, and starts it again with start.
func outage(ctx context.Context, p *framework.Process, down time.Duration, start func() error) error {
	_ = p.Stop(10 * time.Second)
	if err := pause(ctx, down); err != nil {
		return err
	}
	return start()
}

// supervise starts again every replica that has exited by itself.
func (s *soak) supervise() error {
	for _, c := range s.controllers {
		if !c.Exited() {
			continue
		}
		_ = c.Stop(0) // reaps what is left of its process group
		if err := c.Start(); err != nil {
			return err
		}
		s.restarts++
	}
	return nil
}

// converge waits until every Network is Ready for its generation and no
// deleted one is left, and returns when that was first seen.
func (s *soak) converge(ctx context.Context, timeout time.Duration) (time.Time, error) {
	waiting := -1
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := s.supervise(); err != nil {
			return false, err
		}
		list, err := s.nc.SamplecrdV1().Networks(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // the API server may be coming back
		}
		waiting = 0
		for _, n := range list.Items {
			c := meta.FindStatusCondition(n.Status.Conditions, samplecrdv1.ConditionReady)
			if n.DeletionTimestamp != nil || c == nil || c.Status != metav1.ConditionTrue || n.Status.ObservedGeneration != n.Generation {
				waiting++
			}
		}
		return waiting == 0, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("%d Networks not Ready for their generation (or not gone) %s after the workload", waiting, timeout)
	}
	return time.Now(), nil
}

// orphanGrace is the controllers' --orphan-grace-period: a resource left
// without its Network (a create that completed after its Network went) is
// collected only after two lists this far apart, so a leak is a leak only
// once that has had time to happen.
const orphanGrace = 2 * time.Second

// checkAfterCollection runs check until it finds nothing, for at most the
// time garbage collection may take (the grace period, and the resync
// period for the list that sights it first), and returns what the last
// check found.
func (s *soak) checkAfterCollection(ctx context.Context) ([]string, error) {
	var violations []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, orphanGrace+neutronResync+5*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		violations, err = s.check(ctx)
		return err == nil && len(violations) == 0, err
	})
	if err != nil && !wait.Interrupted(err) {
		return nil, err
	}
	return violations, nil
}

// neutronResync is the controllers' --neutron-resync-period.
const neutronResync = 20 * time.Second

// check compares Neutron with the Networks, and returns what differs.
func (s *soak) check(ctx context.Context) ([]string, error) {
	list, err := s.nc.SamplecrdV1().Networks(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	mark, err := neutron.NewMark(cluster, s.stack.ControlPlane.ClusterUID)
	if err != nil {
		return nil, err
	}
	allNets, allSubnets, err := s.listNeutron(ctx)
	if err != nil {
		return nil, err
	}
	var violations []string
	ours, byID := map[string]networks.Network{}, map[string]networks.Network{}
	for _, n := range allNets {
		byID[n.ID] = n
		if n.Description == mark.Description() {
			ours[n.ID] = n
		}
	}
	subnetsOf := map[string][]subnets.Subnet{}
	for _, sn := range allSubnets {
		subnetsOf[sn.NetworkID] = append(subnetsOf[sn.NetworkID], sn)
	}
	for _, n := range list.Items {
		net, ok := ours[n.Status.NetworkID]
		if !ok {
			violations = append(violations, fmt.Sprintf("Network %s: its Neutron network %q is missing", n.Name, n.Status.NetworkID))
			continue
		}
		delete(ours, net.ID)
		sns := subnetsOf[net.ID]
		if len(sns) != 1 || sns[0].CIDR != n.Spec.CIDR || sns[0].GatewayIP != n.Spec.Gateway {
			violations = append(violations, fmt.Sprintf("Network %s (cidr %s gateway %s): Neutron has subnets %v", n.Name, n.Spec.CIDR, n.Spec.Gateway, describe(sns)))
		}
	}
	for id, n := range ours {
		violations = append(violations, fmt.Sprintf("leaked: network %s %q has no Network", id, n.Name))
	}
	for id, name := range s.foreign {
		if got, ok := byID[id]; !ok || got.Name != name {
			violations = append(violations, fmt.Sprintf("foreign network %s %q was touched", id, name))
		}
	}
	sort.Strings(violations)
	return violations, nil
}

// listNeutron lists every network and subnet, through the noauth
// neutron-server: an operator's view of all projects.
func (s *soak) listNeutron(ctx context.Context) ([]networks.Network, []subnets.Subnet, error) {
	pages, err := networks.List(s.stack.Neutron.Client, networks.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, nil, err
	}
	nets, err := networks.ExtractNetworks(pages)
	if err != nil {
		return nil, nil, err
	}
	if pages, err = subnets.List(s.stack.Neutron.Client, subnets.ListOpts{}).AllPages(ctx); err != nil {
		return nil, nil, err
	}
	subs, err := subnets.ExtractSubnets(pages)
	return nets, subs, err
}

func (s *soak) report(seed uint64, duration, convergeAfterLastFault time.Duration, noFault bool, violations []string) {
	total := 0
	for _, n := range s.faults {
		total += n
	}
	fmt.Printf("\nsoak: seed %d, %s of workload and faults\n\n", seed, duration)
	fmt.Println("| figure | value |")
	fmt.Println("| --- | --- |")
	fmt.Printf("| operations | %s |\n", counts(s.ops))
	fmt.Printf("| faults injected | %d: %s |\n", total, counts(s.faults))
	fmt.Printf("| replicas restarted after exiting by themselves | %d |\n", s.restarts)
	if noFault {
		fmt.Println("| time to converge after the last fault | - (no fault, or no convergence) |")
	} else {
		fmt.Printf("| time to converge after the last fault | %s |\n", convergeAfterLastFault.Round(100*time.Millisecond))
	}
	fmt.Printf("| foreign networks seeded, untouched | %d |\n", len(s.foreign))
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

func describe(sns []subnets.Subnet) []string {
	var out []string
	for _, sn := range sns {
		out = append(out, sn.CIDR+" gw "+sn.GatewayIP)
	}
	return out
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
