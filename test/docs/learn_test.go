package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readingLength is README's statement of what the learning path takes.
var readingLength = regexp.MustCompile(`about ([0-9,]+) lines\*\* — ([0-9,]+) of\s+chapters and ([0-9,]+) of\s+the code they name`)

// measured are hack/learn-length.sh's figures: the total, and the code.
var measured = regexp.MustCompile(`(?m)^of which code\s+([0-9]+)\s*$[\s\S]*^total\s+([0-9]+)\s`)

// TestTheStatedReadingLengthIsTheReadingLength: README says how much a
// learner reads (docs/learn's chapters, and the code they name, as
// hack/learn-length.sh counts them); the figures may round, but not drift
// by more than a tenth, so that the promise stays true as the code grows.
// The path stays within an hour's reading: 1,500 lines.
func TestTheStatedReadingLengthIsTheReadingLength(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readingLength.FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatalf("README.md does not state the reading length as %q", readingLength)
	}
	out, err := exec.Command("bash", filepath.Join(root, "hack", "learn-length.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("hack/learn-length.sh: %v\n%s", err, out)
	}
	f := measured.FindStringSubmatch(string(out))
	if f == nil {
		t.Fatalf("hack/learn-length.sh printed no total:\n%s", out)
	}
	code, _ := strconv.Atoi(f[1])
	total, _ := strconv.Atoi(f[2])
	if total > 1500 {
		t.Errorf("the learning path is %d lines, more than an hour's 1,500: point a chapter at one function, or move a link below its \"Beyond the path\"", total)
	}
	for i, measured := range []int{total, total - code, code} {
		stated, err := strconv.Atoi(strings.ReplaceAll(m[i+1], ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		if d := float64(stated-measured) / float64(measured); d > 0.1 || d < -0.1 {
			t.Errorf("README states %d lines where hack/learn-length.sh counts %d: update README", stated, measured)
		}
	}
}
