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

// baseline is what the injector needs besides its memory budget: its
// mapped code and runtime outside the Go heap, its own heap
// (docs/sidecar-injection.md, "How this project does it": bounded
// memory); outsideHeap is the part
// GOMEMLIMIT does not count, measured at about 40 MiB.
var (
	baseline    = resource.MustParse("96Mi")
	outsideHeap = resource.MustParse("40Mi")
)

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
// GOMEMLIMIT leaves the Go heap the budget and keeps the whole under the
// limit; a budget below what the largest review costs
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
			var goMemLimit string
			for _, e := range container["env"].([]any) {
				if e := e.(map[string]any); e["name"] == "GOMEMLIMIT" {
					goMemLimit, _ = e["value"].(string)
				}
			}
			// GOMEMLIMIT's suffixes are Go's (MiB); a quantity's are Mi.
			heap, err := resource.ParseQuantity(strings.TrimSuffix(goMemLimit, "B"))
			if err != nil {
				t.Fatalf("GOMEMLIMIT %q: %v", goMemLimit, err)
			}
			room := limit.DeepCopy()
			room.Sub(outsideHeap)
			if heap.Cmp(budget) <= 0 || heap.Cmp(room) > 0 {
				t.Errorf("GOMEMLIMIT %s: want above the budget %s and at most the limit %s less %s outside the heap", goMemLimit, budget.String(), limit.String(), outsideHeap.String())
			}
		})
	}
	if out, err := exec.Command(helm, "template", "ei", chart, "--set", "memory.budgetMi=108").CombinedOutput(); err == nil || !strings.Contains(string(out), "at least 109") {
		t.Errorf("a budget of 108Mi, below what the webhook starts with, rendered (%v):\n%s", err, out)
	}
}
