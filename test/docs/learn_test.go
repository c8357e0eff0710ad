package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readingLength is README's statement of what the learning path takes.
var readingLength = regexp.MustCompile(`about ([0-9,]+) lines\*\* — ([0-9,]+) of chapters and ([0-9,]+) of\s+controller\.go`)

// TestTheStatedReadingLengthIsTheReadingLength: README says how much a
// learner reads (docs/learn's chapters and controller.go, as
// hack/learn-length.sh counts them); the figures may round, but not drift
// by more than a tenth, so that the promise stays true as the code grows.
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
	chapters, err := filepath.Glob(filepath.Join(root, "docs", "learn", "[0-9][0-9]-*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(chapters) != 13 {
		t.Errorf("%d chapters in docs/learn, want the 13 of the learning path", len(chapters))
	}
	chapterLines := 0
	for _, c := range chapters {
		chapterLines += lineCount(t, c)
	}
	code := lineCount(t, filepath.Join(root, "controller.go"))
	for i, measured := range []int{chapterLines + code, chapterLines, code} {
		stated, err := strconv.Atoi(strings.ReplaceAll(m[i+1], ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		if d := float64(stated-measured) / float64(measured); d > 0.1 || d < -0.1 {
			t.Errorf("README states %d lines where hack/learn-length.sh counts %d: update README", stated, measured)
		}
	}
}

func lineCount(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}
