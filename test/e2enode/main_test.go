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
	"path/filepath"
	"testing"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

var stack *framework.Stack

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, "e2enode", framework.Options{Neutron: true, Keystone: true, Node: true}, 5*time.Minute,
		func(ctx context.Context, s *framework.Stack) error {
			stack = s
			if out, err := deploy(ctx); err != nil {
				return fmt.Errorf("hack/deploy.sh: %w\n%s", err, out)
			}
			return nil
		}))
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
	)
	return cmd.CombinedOutput()
}
