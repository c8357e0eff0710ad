// Package supplychain checks the checks that guard what the project is
// built from: that a clean answer of hack/vulncheck.sh means what it says.
package supplychain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const root = "../.."

// TestVulncheckRefusesABlindDatabase: against a database that holds no
// vulnerability at all (well formed, every index empty), govulncheck
// finds nothing in the project, and would pass it. hack/vulncheck.sh
// first scans its canary (hack/vulncheck-canary calls GO-2022-1059 on
// purpose) and fails, naming the canary, before it scans the project.
func TestVulncheckRefusesABlindDatabase(t *testing.T) {
	if _, err := os.Stat(filepath.Join(root, "bin", "govulncheck")); err != nil {
		t.Skip("no bin/govulncheck: make vulncheck builds it")
	}
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "index"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"index/db.json":      `{"modified":"2026-11-05T23:49:57Z"}`,
		"index/modules.json": `[]`,
		"index/vulns.json":   `[]`,
	} {
		if err := os.WriteFile(filepath.Join(empty, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(root, "hack", "vulncheck.sh"))
	cmd.Env = append(os.Environ(), "VULNCHECK_DB="+empty)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("hack/vulncheck.sh passed against an empty database:\n%s", out)
	}
	if !strings.Contains(string(out), "the database is blind") || !strings.Contains(string(out), "GO-2022-1059") {
		t.Errorf("hack/vulncheck.sh failed, but not for its canary:\n%s", out)
	}
	if !strings.Contains(string(out), ", dated 20") {
		t.Errorf("hack/vulncheck.sh does not say the database's date:\n%s", out)
	}
	if strings.Contains(string(out), "govulncheck: . (database") {
		t.Errorf("hack/vulncheck.sh scanned the project with a blind database:\n%s", out)
	}
}
