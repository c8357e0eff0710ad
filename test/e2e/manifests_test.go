package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

// TestEveryManifestIsValidOnTheAPIServer: every object the project ships
// (each chart rendered as the docs install it, each kustomization, every
// example) is checked by the validator that matters, the API server's
// own: `kubectl apply --dry-run=server --validate=strict`, which checks
// each object against the OpenAPI schemas the API server serves (the
// CRDs' included, CEL rules and all) and refuses a field it does not
// know. A fresh cluster holds the CRDs (applied as the docs say) and the
// namespaces the manifests name; the v1 examples go to the shared stack,
// whose conversion webhook they need. A manifest with one misspelt field
// is refused, which proves the check can fail.
func TestEveryManifestIsValidOnTheAPIServer(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	fresh := startOtherClusterWithoutConversion(ctx, t)
	root := stack.RepoRoot
	helm := filepath.Join(root, "bin", "helm")
	run := func(t *testing.T, stdin []byte, name string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%.3000s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	kubectl := func(kubeconfig string, args ...string) []string {
		return append([]string{"--kubeconfig", kubeconfig}, args...)
	}
	run(t, nil, "kubectl", kubectl(fresh.cp.AdminKubeconfig, "apply", "--validate=strict", "-k", filepath.Join(root, "artifacts", "crd"))...)
	run(t, nil, "kubectl", kubectl(fresh.cp.AdminKubeconfig, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")...)
	for _, ns := range []string{"network-controller-system", "envoy-injector", "monitoring"} {
		fresh.namespace(ctx, t, ns)
	}
	// No controller-manager makes a namespace's default ServiceAccount
	// here, and the API server admits a Pod only with one.
	run(t, nil, "kubectl", kubectl(fresh.cp.AdminKubeconfig, "create", "serviceaccount", "default", "-n", "default")...)

	rendered := []struct {
		name   string
		render func(t *testing.T) []byte
	}{
		{"chart network-controller", func(t *testing.T) []byte {
			return run(t, nil, helm, "template", "network-controller", filepath.Join(root, "charts", "network-controller"), "-n", "network-controller-system")
		}},
		{"chart network-controller, webhookOnly", func(t *testing.T) []byte {
			return run(t, nil, helm, "template", "network-controller", filepath.Join(root, "charts", "network-controller"), "-n", "network-controller-system", "--set", "webhookOnly=true")
		}},
		{"chart envoy-injector", func(t *testing.T) []byte {
			return run(t, nil, helm, "template", "envoy-injector", filepath.Join(root, "charts", "envoy-injector"), "-n", "envoy-injector")
		}},
		{"kustomization artifacts/deploy", func(t *testing.T) []byte {
			return run(t, nil, "kubectl", "kustomize", filepath.Join(root, "artifacts", "deploy"))
		}},
		{"kustomization artifacts/injector", func(t *testing.T) []byte {
			return run(t, nil, "kubectl", "kustomize", filepath.Join(root, "artifacts", "injector"))
		}},
		{"artifacts/prometheus/rbac.yaml", func(t *testing.T) []byte {
			b, err := os.ReadFile(filepath.Join(root, "artifacts", "prometheus", "rbac.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{"artifacts/examples: v2 and the injector's", func(t *testing.T) []byte {
			return append(examples(t, filepath.Join(root, "artifacts", "examples", "v2")),
				examples(t, filepath.Join(root, "artifacts", "examples", "injector"))...)
		}},
	}
	for _, r := range rendered {
		t.Run(r.name, func(t *testing.T) {
			run(t, r.render(t), "kubectl", kubectl(fresh.cp.AdminKubeconfig, "apply", "--dry-run=server", "--validate=strict", "-f", "-")...)
		})
	}
	t.Run("artifacts/examples: v1 and tenancy, through the shared stack's webhook", func(t *testing.T) {
		ns := newNamespace(ctx, t)
		run(t, nil, "kubectl", kubectl(stack.ControlPlane.AdminKubeconfig, "create", "serviceaccount", "default", "-n", ns)...)
		run(t, examples(t, filepath.Join(root, "artifacts", "examples")), "kubectl",
			kubectl(stack.ControlPlane.AdminKubeconfig, "apply", "--dry-run=server", "--validate=strict", "-n", ns, "-f", "-")...)
		// tenancy's team-a, in a namespace of this test's own.
		tenancy := bytes.ReplaceAll(examples(t, filepath.Join(root, "artifacts", "examples", "tenancy")),
			[]byte("namespace: team-a"), []byte("namespace: "+ns))
		run(t, tenancy, "kubectl", kubectl(stack.ControlPlane.AdminKubeconfig, "apply", "--dry-run=server", "--validate=strict", "-f", "-")...)
	})
	t.Run("a misspelt field is refused", func(t *testing.T) {
		deployment := run(t, nil, "kubectl", "kustomize", filepath.Join(root, "artifacts", "deploy"))
		bad := bytes.Replace(deployment, []byte("  replicas: 2\n"), []byte("  replicaz: 2\n"), 1)
		if bytes.Equal(bad, deployment) {
			t.Fatal("no `replicas: 2` to misspell in artifacts/deploy")
		}
		cmd := exec.CommandContext(ctx, "kubectl", kubectl(fresh.cp.AdminKubeconfig, "apply", "--dry-run=server", "--validate=strict", "-f", "-")...)
		cmd.Stdin = bytes.NewReader(bad)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "replicaz") {
			t.Errorf("a Deployment with spec.replicaz passed (%v):\n%.2000s", err, out)
		}
	})
}

// examples returns the YAML files directly in dir, as one stream.
func examples(t *testing.T, dir string) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s (%v)", dir, err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, []byte("\n---\n")...)
		all = append(all, b...)
	}
	return all
}
