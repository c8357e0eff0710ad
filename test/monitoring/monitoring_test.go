package monitoring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
)

// TestTheDashboardAsksForWhatTheProgramsExport: every query of
// artifacts/prometheus/dashboard.json names a metric that pkg/component/metrics
// declares, or one of client-go's.
func TestTheDashboardAsksForWhatTheProgramsExport(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "artifacts", "prometheus", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json does not parse: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard.json has no title, uid or panels: %+v", d)
	}
	ours := metrics.Names()
	for _, name := range Queried(t, d) {
		clientGo := slices.ContainsFunc(clientGoPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
		if !clientGo && !slices.Contains(ours, name) {
			t.Errorf("the dashboard queries %s, which the programs do not export (they export %v)", name, ours)
		}
	}
}
