package charts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// baseline is what the injector needs besides its memory budget: the Go
// runtime, the informer, TLS and the buffers of open connections
// (docs/sidecar-injection.md, "Bounded memory").
var baseline = resource.MustParse("64Mi")

// defaultBudget is --memory-budget's default, as the binary's --help
// gives it in docs/flags.md (which make verify keeps equal to it).
func defaultBudget(t *testing.T) resource.Quantity {
	t.Helper()
	flags, err := os.ReadFile(filepath.Join(root, "docs", "flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`--memory-budget string .*\(default "([^"]+)"\)`).FindSubmatch(flags)
	if m == nil {
		t.Fatal("docs/flags.md gives no default for --memory-budget")
	}
	return resource.MustParse(string(m[1]))
}

// TestTheInjectorsMemoryLimitFollowsItsBudget: the webhook container's
// memory limit is at least the memory budget its flags give it plus the
// program's baseline, with the default values and with a budget set, and
// GOMEMLIMIT is that limit; a budget below what the largest review costs
// is refused at render time, as the binary refuses it at start.
func TestTheInjectorsMemoryLimitFollowsItsBudget(t *testing.T) {
	helm := filepath.Join(root, "bin", "helm")
	chart := filepath.Join(root, "charts", "envoy-injector")
	for _, tc := range []struct {
		name string
		set  []string
	}{
		{"defaults", nil},
		{"a larger budget", []string{"--set", "memory.budgetMi=300"}},
		{"a larger baseline", []string{"--set", "memory.baselineMi=100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := objects(t, run(t, helm, append([]string{"template", "ei", chart}, tc.set...)...))
			pod := nested(got["Deployment/envoy-injector"], "spec", "template", "spec").(map[string]any)
			container := pod["containers"].([]any)[0].(map[string]any)
			budget := defaultBudget(t)
			for _, a := range container["args"].([]any) {
				if v, ok := strings.CutPrefix(a.(string), "--memory-budget="); ok {
					budget = resource.MustParse(v)
				}
			}
			limit := resource.MustParse(nested(container, "resources", "limits", "memory").(string))
			need := budget.DeepCopy()
			need.Add(baseline)
			if limit.Cmp(need) < 0 {
				t.Errorf("memory limit %s, below the budget %s and the baseline %s", limit.String(), budget.String(), baseline.String())
			}
			fromLimit := false
			for _, e := range container["env"].([]any) {
				e := e.(map[string]any)
				fromLimit = fromLimit || e["name"] == "GOMEMLIMIT" && nested(e, "valueFrom", "resourceFieldRef", "resource") == "limits.memory"
			}
			if !fromLimit {
				t.Errorf("GOMEMLIMIT is not the container's memory limit: %v", container["env"])
			}
		})
	}
	if out, err := exec.Command(helm, "template", "ei", chart, "--set", "memory.budgetMi=64").CombinedOutput(); err == nil || !strings.Contains(string(out), "at least 100") {
		t.Errorf("a budget of 64Mi rendered (%v):\n%s", err, out)
	}
}
