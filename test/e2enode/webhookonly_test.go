package e2enode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/test/framework"
)

// TestAControllerOutOfClusterWithTheWebhookInCluster: the chart installed
// with webhookOnly serves the conversion webhook on the node, and the
// controller runs out of cluster with --kubeconfig, as on a laptop
// (docs/operations.md, "Conversion webhook"). A v1 and a v2 Network become
// Ready; with the controller stopped, v1 clients still read and write
// (through the webhook, which holds the write to v2's rules with the RBAC
// the chart gives it). Its file sorts last: it installs the chart as it
// needs it, and uninstalls it after.
func TestAControllerOutOfClusterWithTheWebhookInCluster(t *testing.T) {
	ctx := framework.TestContext(t, 6*time.Minute)
	helm := func(ctx context.Context, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "bin", "helm"), append(args, "--namespace", controllerNamespace)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+stack.ControlPlane.AdminKubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
	helm(ctx, "upgrade", "--install", "network-controller", filepath.Join(stack.RepoRoot, "charts", "network-controller"),
		"--set", "webhookOnly=true", "--wait", "--timeout=2m")
	t.Cleanup(func() {
		// The test's context has ended by now.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		helm(ctx, "uninstall", "network-controller", "--wait")
	})
	waitPodsReady(ctx, t, controllerNamespace, conversionSelector, 2, true, 2*time.Minute)
	framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		n := len(pods(ctx, t, controllerNamespace, controllerSelector))
		return n == 0, fmt.Sprintf("%d of the controller's Pods are left with webhookOnly, want none", n), nil
	})

	binary := filepath.Join(t.TempDir(), "network-controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = stack.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ns := newNamespace(ctx, t, nil)
	ports, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	controller := &framework.Process{
		Name: "network-controller (out of cluster)",
		Path: binary,
		Args: []string{"--kubeconfig=" + stack.ControlPlane.AdminKubeconfig, "--os-cloud=" + framework.AppCredentialCloud,
			"--namespace=" + ns, "--leader-elect=false", "--metrics-bind-address=0",
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[0])},
		Env:     append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+stack.Keystone.CloudsYAML),
		Dir:     stack.Dir,
		LogPath: filepath.Join(stack.Dir, "out-of-cluster-controller.log"),
	}
	if err := controller.Start(); err != nil {
		t.Fatal(err)
	}
	// Stopped last but for the chart: the Networks' cleanup needs it.
	t.Cleanup(func() { _ = controller.Stop(10 * time.Second) })

	createNetworks(ctx, t, ns, "v1", 161, 1) // through v1: the webhook in cluster converts it
	dual := fmt.Sprintf(`{"apiVersion":"samplecrd.k8s.io/v2","kind":"Network","metadata":{"name":"dual","namespace":%q},
		"spec":{"subnets":[{"cidr":"10.162.0.0/24"},{"cidr":"fd00:162::/64"}]}}`, ns)
	apply := exec.CommandContext(ctx, "kubectl", "--kubeconfig", stack.ControlPlane.AdminKubeconfig, "apply", "-f", "-")
	apply.Stdin = strings.NewReader(dual)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply of a v2 Network: %v\n%s", err, out)
	}
	waitAllReady(ctx, t, ns, 2, 2*time.Minute)

	if err := controller.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	// The controller stopped: v1 clients read and write through the
	// webhook, which lives in cluster.
	if got := kubectl(ctx, t, "-n", ns, "get", "networks.v1.samplecrd.k8s.io", "-o", "jsonpath={.items[*].spec.cidr}"); got != "10.162.0.0/24 10.161.0.0/24" {
		t.Errorf("v1 read with the controller stopped: spec.cidr %q, want both Networks' first subnets", got)
	}
	kubectl(ctx, t, "-n", ns, "label", "networks.v1.samplecrd.k8s.io", "dual", "written-through=v1")
	n, err := networkClient(t).SamplecrdV2().Networks(ns).Get(ctx, "dual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Spec.Subnets) != 2 || n.Labels["written-through"] != "v1" {
		t.Errorf("after a v1 write with the controller stopped: subnets %+v, labels %v; want both subnets and the label", n.Spec.Subnets, n.Labels)
	}
	if err := controller.Start(); err != nil {
		t.Fatal(err)
	}
	// The v2 Network goes with the namespace's others, by createNetworks'
	// cleanup, which deletes every Network of ns.
}
