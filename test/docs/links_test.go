// Package docs checks the project's documentation against the tree: a
// reader who follows a link must find the file it names.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link is a Markdown link's target: ](target) or ](target#anchor).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestEveryLinkedPathExists reads README.md and docs/*.md and fails for
// each relative link whose file or directory does not exist, e.g. after
// code moved to another package.
func TestEveryLinkedPathExists(t *testing.T) {
	root, pages := docPages(t)
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path := filepath.Join(filepath.Dir(page), target)
			if _, err := os.Stat(path); err != nil {
				rel, _ := filepath.Rel(root, page)
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d links checked: the pattern no longer finds the docs' links", checked)
	}
}

// TestTheRepositoryMapNamesTheTree reads the code block under README's
// "Repository map": each line names paths (comma-separated, before the
// description), every one of which must exist.
func TestTheRepositoryMapNamesTheTree(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Repository map")
	if !ok {
		t.Fatal("README.md has no Repository map")
	}
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	named := 0
	mapped := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		paths, _, _ := strings.Cut(line, "  ") // the description follows two spaces or more
		for _, p := range strings.Split(paths, ",") {
			p = strings.TrimSuffix(strings.TrimSpace(p), "/")
			if p == "" || p == "..." {
				continue
			}
			named++
			mapped[p] = true
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("the repository map names %s, which does not exist", p)
			}
		}
	}
	if named < 20 {
		t.Errorf("only %d paths named: the map's format changed", named)
	}
	// Every package directory of pkg/ and cmd/ has a line: a learner
	// reads the map to find where a concern lives.
	dirs, err := filepath.Glob(filepath.Join(root, "[pc][km][gd]", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel(root, d)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !mapsUnder(mapped, filepath.ToSlash(rel)) {
			t.Errorf("the repository map does not name %s", rel)
		}
	}
}

// docPages returns the repository's root and the pages the tests read:
// docs/*.md, the chapters of docs/learn, and README.md.
func docPages(t *testing.T) (root string, pages []string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, glob := range []string{"docs/*.md", "docs/learn/*.md"} {
		matched, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, matched...)
	}
	return root, append(pages, filepath.Join(root, "README.md"))
}

// mapsUnder reports whether the map names dir or a path under it.
func mapsUnder(mapped map[string]bool, dir string) bool {
	for p := range mapped {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}
