// Package e2enode tests network-controller in cluster: the images built by
// hack/build-images.sh run as Pods on a real node (containerd, kubelet,
// kube-proxy) of a real control plane, deployed by hack/deploy.sh — the
// script behind `make deploy` — and reconcile against a real
// neutron-server, authenticated by a real Keystone through the clouds.yaml
// of the cloud Secret. It has its own stack because only one node runs per
// machine and the deployed controller manages every namespace.
package e2enode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

var stack *framework.Stack

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	stack, err = framework.Start(ctx, framework.Options{Neutron: true, Keystone: true, Node: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2enode: %v\n", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		stack.Stop()
		os.Exit(1)
	}()
	defer stack.Stop()
	fmt.Printf("e2enode: stack and node up in %s\n", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	if out, err := deploy(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "e2enode: hack/deploy.sh: %v\n%s\n%s", err, out, stack.Logs())
		return 1
	}
	fmt.Printf("e2enode: deployed in %s\n", time.Since(start).Round(time.Millisecond))

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2enode: failed; component logs follow\n%s", stack.Logs())
	}
	return code
}

// deploy runs hack/deploy.sh, exactly what `make deploy` runs, against this
// package's stack.
func deploy(ctx context.Context) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "hack", "deploy.sh"))
	cmd.Dir = stack.RepoRoot
	cmd.Env = append(os.Environ(),
		"DEPLOY_ENV=0",
		"KUBECONFIG="+stack.ControlPlane.AdminKubeconfig,
		"OS_CLIENT_CONFIG_FILE="+stack.Keystone.CloudsYAML,
		// The application credential: what artifacts/deploy recommends.
		"OS_CLOUD="+framework.AppCredentialCloud,
		"CONTAINERD_ADDRESS="+stack.Node.ContainerdSocket,
		"DEPLOY_OVERLAY="+filepath.Join(stack.Dir, "deploy"),
	)
	return cmd.CombinedOutput()
}
