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

// beyondLength is README's statement of what the chapters beyond the hour
// (14, API versions and conversion) add to it.
var beyondLength = regexp.MustCompile(`about ([0-9,]+) lines more\*\* — ([0-9,]+) of\s+chapter and ([0-9,]+) of\s+the code it names`)

// measured are hack/learn-length.sh's figures of the path: the code, and
// the total.
var measured = regexp.MustCompile(`(?m)^of which code\s+([0-9]+)\s*$[\s\S]*^total\s+([0-9]+)\s`)

// measuredBeyond are hack/learn-length.sh's figures of the chapters beyond
// the hour, printed after the path's total: the code, and their total.
var measuredBeyond = regexp.MustCompile(`(?m)^beyond the hour, of which code\s+([0-9]+)\s*$[\s\S]*^beyond the hour\s+([0-9]+)\s`)

// TestTheStatedReadingLengthIsTheReadingLength: README says how much a
// learner reads (docs/learn's chapters, and the code they name, as
// hack/learn-length.sh counts them), and how much chapter 14 adds beyond
// the hour; the figures may round, but not drift by more than a tenth, so
// that the promise stays true as the code grows. The path stays within an
// hour's reading: 1,500 lines; what is beyond the hour is not part of it.
func TestTheStatedReadingLengthIsTheReadingLength(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "hack", "learn-length.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("hack/learn-length.sh: %v\n%s", err, out)
	}
	for _, c := range []struct {
		what             string
		stated, measured *regexp.Regexp
	}{
		{"the path", readingLength, measured},
		{"beyond the hour", beyondLength, measuredBeyond},
	} {
		m := c.stated.FindStringSubmatch(string(readme))
		if m == nil {
			t.Errorf("README.md does not state the length of %s as %q", c.what, c.stated)
			continue
		}
		f := c.measured.FindStringSubmatch(string(out))
		if f == nil {
			t.Errorf("hack/learn-length.sh printed no figures of %s:\n%s", c.what, out)
			continue
		}
		code, _ := strconv.Atoi(f[1])
		total, _ := strconv.Atoi(f[2])
		if c.measured == measured && total > 1500 {
			t.Errorf("the learning path is %d lines, more than an hour's 1,500: point a chapter at one function, or move a link below its \"Beyond the path\"", total)
		}
		for i, measured := range []int{total, total - code, code} {
			stated, err := strconv.Atoi(strings.ReplaceAll(m[i+1], ",", ""))
			if err != nil {
				t.Fatal(err)
			}
			if d := float64(stated - measured); d > 0.1*float64(measured) || d < -0.1*float64(measured) {
				t.Errorf("README states %d lines of %s where hack/learn-length.sh counts %d: update README", stated, c.what, measured)
			}
		}
	}
}
