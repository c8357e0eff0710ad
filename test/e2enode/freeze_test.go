package e2enode

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/test/framework"
)

// What a frozen leader may cost (issue 52; docs/reliability.md): the
// standby leads within freezeTakeover of the freeze (the lease duration,
// 15 s, and up to two jittered retry periods); what clients changed during
// the freeze is in Neutron within freezeCatchUp of the takeover; and every
// Network is Ready within freezeCatchUp of the thaw.
const (
	freezeFor      = 60 * time.Second
	freezeTakeover = 25 * time.Second
	freezeCatchUp  = 30 * time.Second
)

// TestAFrozenLeaderIsReplacedAndItsWorkDone: the leader's process frozen
// (SIGSTOP, as a stuck node or a long pause would) for a minute while a v1
// client and a v2 client create, patch and delete Networks. The standby
// takes the Lease within freezeTakeover; every change is in Neutron within
// freezeCatchUp of that; thawed (or killed by its liveness probe
// meanwhile), the old leader exits without taking the Lease back, every
// Network is Ready within freezeCatchUp, and Neutron holds what they say.
func TestAFrozenLeaderIsReplacedAndItsWorkDone(t *testing.T) {
	ctx := framework.TestContext(t, 6*time.Minute)
	controllers := waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	waitPodsReady(ctx, t, controllerNamespace, conversionSelector, 2, true, 2*time.Minute)
	ns := newNamespace(ctx, t, nil)
	createNetworks(ctx, t, ns, "before", 163, 4) // through v1
	waitAllReady(ctx, t, ns, 4, 2*time.Minute)

	holder := leaseHolder(ctx, t)
	leaderName, _, _ := strings.Cut(holder, "_")
	i := slices.IndexFunc(controllers, func(p corev1.Pod) bool { return p.Name == leaderName })
	if i < 0 {
		t.Fatalf("the Lease's holder %q is not one of the Ready replicas", holder)
	}
	leaderRestarts := restartCount(ctx, t, leaderName)
	frozenAt := time.Now()
	thaw := freeze(ctx, t, controllers[i])

	// Meanwhile, each client does each kind of change: 4 Networks at the
	// end, before-0 and before-1 with their gateways moved.
	changeDuringTheFreeze(ctx, t, ns)

	framework.Eventually(ctx, t, 2*freezeTakeover, func(ctx context.Context) (bool, string, error) {
		h := leaseHolder(ctx, t)
		return h != "" && h != holder, "the Lease is still held by " + h, nil
	})
	takeover := time.Since(frozenAt)
	tookOverAt := time.Now()
	t.Logf("the standby took the Lease %s after the leader froze", takeover.Round(100*time.Millisecond))
	if takeover > freezeTakeover {
		t.Errorf("the standby took the Lease %s after the leader froze, want within %s", takeover.Round(100*time.Millisecond), freezeTakeover)
	}

	want := map[string]string{"before-0": "10.163.0.254", "before-1": "10.163.1.254", "during-v1": "10.164.0.1", "during-v2": "10.164.1.1"}
	framework.Eventually(ctx, t, freezeCatchUp, func(ctx context.Context) (bool, string, error) {
		msg := neutronDiffers(ctx, t, ns, want)
		return msg == "", msg, nil
	})
	t.Logf("every change of the freeze was in Neutron %s after the takeover", time.Since(tookOverAt).Round(100*time.Millisecond))

	// The freeze lasts freezeFor, a fault's length rather than a wait
	// for a condition.
	select {
	case <-time.After(time.Until(frozenAt.Add(freezeFor))):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	thaw()
	thawedAt := time.Now()
	waitAllReady(ctx, t, ns, len(want), freezeCatchUp)
	t.Logf("every Network Ready %s after the thaw", time.Since(thawedAt).Round(100*time.Millisecond))
	// The old leader exited (its liveness probe had it killed, or thawed
	// it found the Lease gone), both replicas are back, the new leader
	// still leads, and Neutron is still what the Networks say: the old
	// leader's writes are fenced (TestAFrozenLeaderWritesNothingWhenItResumes
	// in test/e2e proves each one).
	waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	if restarts := restartCount(ctx, t, leaderName); restarts <= leaderRestarts {
		t.Errorf("the frozen leader %s did not exit: %d restarts, as before the freeze", leaderName, restarts)
	}
	if h := leaseHolder(ctx, t); h == holder {
		t.Errorf("the thawed replica holds the Lease again (%s)", h)
	}
	if msg := neutronDiffers(ctx, t, ns, want); msg != "" {
		t.Errorf("after the thaw: %s", msg)
	}
}

// changeDuringTheFreeze changes the Networks of ns through both versions:
// a create, a patch of the gateway and a delete each.
func changeDuringTheFreeze(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	v1 := networkClient(t).SamplecrdV1().Networks(ns)
	v2 := networkClient(t).SamplecrdV2().Networks(ns)
	if _, err := v1.Create(ctx, &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "during-v1"},
		Spec: samplecrdv1.NetworkSpec{CIDR: "10.164.0.0/24", Gateway: "10.164.0.1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a v1 create during the freeze: %v", err)
	}
	if _, err := v2.Create(ctx, &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: "during-v2"},
		Spec: samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: "10.164.1.0/24", Gateway: "10.164.1.1"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a v2 create during the freeze: %v", err)
	}
	if _, err := v1.Patch(ctx, "before-0", types.MergePatchType, []byte(`{"spec":{"gateway":"10.163.0.254"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("a v1 patch during the freeze: %v", err)
	}
	if _, err := v2.Patch(ctx, "before-1", types.MergePatchType, []byte(`{"spec":{"subnets":[{"cidr":"10.163.1.0/24","gateway":"10.163.1.254"}]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("a v2 patch during the freeze: %v", err)
	}
	if err := v1.Delete(ctx, "before-2", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("a v1 delete during the freeze: %v", err)
	}
	if err := v2.Delete(ctx, "before-3", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("a v2 delete during the freeze: %v", err)
	}
}

// neutronDiffers reads the Neutron networks of ns and says how they differ
// from want (a Network's name to its one subnet's gateway; no other), ""
// when they do not.
func neutronDiffers(ctx context.Context, t *testing.T, ns string, want map[string]string) string {
	t.Helper()
	nets, subs, err := neutronOf(ctx, t, ns)
	if err != nil {
		return "reading Neutron: " + err.Error()
	}
	seen := map[string]bool{}
	var problems []string
	for _, n := range nets {
		name := strings.Split(strings.TrimPrefix(n.Name, ns+"/"), "/")[0]
		if _, ok := want[name]; !ok || seen[name] {
			problems = append(problems, fmt.Sprintf("a network of %s, which should not be there", name))
			continue
		}
		seen[name] = true
		var own []subnets.Subnet
		for _, s := range subs {
			if s.NetworkID == n.ID {
				own = append(own, s)
			}
		}
		if len(own) != 1 {
			problems = append(problems, fmt.Sprintf("%s: %d subnets, want 1", name, len(own)))
		} else if own[0].GatewayIP != want[name] {
			problems = append(problems, fmt.Sprintf("%s: gateway %s, want %s", name, own[0].GatewayIP, want[name]))
		}
	}
	for name := range want {
		if !seen[name] {
			problems = append(problems, "no network of "+name)
		}
	}
	slices.Sort(problems)
	return strings.Join(problems, "; ")
}

// restartCount is how many times the containers of a Pod of the
// controller's namespace have been restarted.
func restartCount(ctx context.Context, t *testing.T, pod string) int32 {
	t.Helper()
	p, err := kubeClient(t).CoreV1().Pods(controllerNamespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}
