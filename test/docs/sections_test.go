package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citation is text that sends a reader to a section of a page by name,
// (PAGE, "Section"), PAGE being README or a page of docs/. It is not a
// link, so TestEveryLinkedPathExists does not see it.
var citation = regexp.MustCompile(`\(((?:README|docs/[\w./-]+\.md))(?:\.md)?, "([^"]+)"\)`)

// lineBreak is a break within a citation, which may be wrapped over two
// lines of a comment.
var lineBreak = regexp.MustCompile(`\s*\n\s*(?:#|//)?\s*`)

// TestEveryCitedSectionExists: a section cited by name is a heading of the
// page named, wherever the citation is written: the docs, the charts'
// notes and values, the Go code's comments. A section that moved (README's
// Uninstall went to docs/operations.md) fails here.
func TestEveryCitedSectionExists(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cited := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == ".local" || d.Name() == "generated"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".md") && !strings.HasSuffix(path, ".txt") && !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".go"):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		text := lineBreak.ReplaceAllString(string(data), " ")
		for _, m := range citation.FindAllStringSubmatch(text, -1) {
			cited++
			page := m[1]
			if page == "README" {
				page = "README.md"
			}
			if !hasHeading(t, filepath.Join(root, page), m[2]) {
				t.Errorf("%s cites section %q of %s, which has no heading of that name", rel, m[2], page)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no citation found: the pattern no longer matches how sections are cited")
	}
}

// hasHeading reports whether the Markdown page has a heading that begins
// with section.
func hasHeading(t *testing.T, page, section string) bool {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Errorf("reading %s: %v", page, err)
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") && strings.HasPrefix(heading, section) {
			return true
		}
	}
	return false
}
