package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/test/framework"
)

// TestAV1NetworkIsNeverStoredWithoutItsWebhook: a fresh cluster whose
// CRD was applied as the docs say (`kubectl apply -k artifacts/crd`, the
// chart's crds/ being the same file), with no controller, then with the
// controller installed but not running (artifacts/deploy applied: its
// conversion Service has no Pod behind it). The seed's v1 Network is
// refused with an error that names the webhook's Service, and nothing is
// stored: never a v2 Network with its subnet dropped. A v2 client needs
// no conversion, and works throughout.
func TestAV1NetworkIsNeverStoredWithoutItsWebhook(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	other := startOtherClusterWithoutConversion(ctx, t)
	kubectl := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", other.cp.AdminKubeconfig}, args...)...).CombinedOutput()
		return string(out), err
	}
	for _, step := range []struct {
		name    string
		install []string
	}{
		{"the CRD alone", []string{"apply", "-k", filepath.Join(stack.RepoRoot, "artifacts", "crd")}},
		{"the controller installed and stopped", []string{"apply", "-k", filepath.Join(stack.RepoRoot, "artifacts", "deploy")}},
	} {
		t.Run(step.name, func(t *testing.T) {
			if out, err := kubectl(step.install...); err != nil {
				t.Fatalf("kubectl %s: %v\n%s", strings.Join(step.install, " "), err, out)
			}
			out, err := kubectl("apply", "-f", filepath.Join(stack.RepoRoot, "artifacts", "examples", "example-network.yaml"))
			if err == nil {
				t.Fatalf("the seed's v1 Network was accepted without a conversion webhook:\n%s", out)
			}
			if !strings.Contains(out, "network-controller-conversion") {
				t.Errorf("refused with an error that does not name the webhook's Service:\n%s", out)
			}
			if n, err := other.nc.SamplecrdV2().Networks(metav1.NamespaceDefault).Get(ctx, "example-network", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("stored after all (%v): %+v", err, n)
			}
			// v2 needs no conversion.
			if out, err := kubectl("apply", "-f", filepath.Join(stack.RepoRoot, "artifacts", "examples", "v2", "dual-stack.yaml")); err != nil {
				t.Fatalf("a v2 Network without the webhook: %v\n%s", err, out)
			}
			if out, err := kubectl("delete", "-f", filepath.Join(stack.RepoRoot, "artifacts", "examples", "v2", "dual-stack.yaml"), "--wait=false"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}
