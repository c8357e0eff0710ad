package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// codeSpan is `text` in Markdown prose (fenced blocks are left out).
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// identifier is what a doc writes for a Go name: `syncHandler`,
// `Options.Fence`, `neutron.Session`, `TestFrozenNeutronFailsFast`.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?(\(\))?$`)

// repoPath is a path of this repository as docs write it.
var repoPath = regexp.MustCompile(`^(pkg|cmd|test|hack|artifacts|charts|docs)/[A-Za-z0-9_./-]*$`)

// TestEveryNamedIdentifierAndPathExists reads README.md and docs/*.md and
// fails for each name in code font that looks like a Go identifier of this
// repository, or a path in it, and is not there: after a rename, the docs
// that still teach the old name fail here, not in a learner's hands. A Go
// name counts as there when the repository's Go code declares it (a
// function, method, type, field, constant or variable, a test included),
// or uses it as a JSON field name or a string constant's value (an API
// field, a condition reason); names of other projects' code the docs
// explain are listed in external.txt.
func TestEveryNamedIdentifierAndPathExists(t *testing.T) {
	root, pages := docPages(t)
	known := declaredNames(t, root)
	external, err := os.ReadFile("external.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(external), "\n") {
		if name, _, _ := strings.Cut(line, "#"); strings.TrimSpace(name) != "" {
			known[strings.TrimSpace(name)] = true
		}
	}
	checked := 0
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		for _, span := range spans(t, page) {
			switch {
			case repoPath.MatchString(span):
				checked++
				path, _, _ := strings.Cut(span, "#")
				if _, err := os.Stat(filepath.Join(root, strings.TrimRight(path, "."))); err != nil {
					t.Errorf("%s names `%s`, which is not in the repository", rel, span)
				}
			case identifier.MatchString(span) && goLike(span):
				checked++
				name := strings.TrimSuffix(span, "()")
				_, last, dotted := strings.Cut(name, ".")
				if !known[name] && !(dotted && known[last]) {
					t.Errorf("%s names `%s`, which no Go code of the repository declares (nor external.txt lists)", rel, span)
				}
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d names checked: the patterns no longer find the docs' names", checked)
	}
}

// goLike reports whether span is written as a Go name, not as prose, a
// value or a command: it has a capital after its first letter (camelCase,
// MixedCase), or ends in ().
func goLike(span string) bool {
	if strings.HasSuffix(span, "()") {
		return true
	}
	body := strings.TrimLeft(span, "_")
	if i := strings.LastIndex(body, "."); i >= 0 {
		body = body[i+1:]
	}
	return len(body) > 1 && strings.ContainsAny(body[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(body, "abcdefghijklmnopqrstuvwxyz")
}

// spans returns the code spans of page's prose.
func spans(t *testing.T, page string) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// declaredNames is every name the repository's Go code declares or uses
// from another package (a selector, a field of a composite literal), every
// JSON field name of its types, and every string constant's value.
func declaredNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == ".local") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				names[n.Name.Name] = true
			case *ast.TypeSpec:
				names[n.Name.Name] = true
			case *ast.ValueSpec:
				for _, id := range n.Names {
					names[id.Name] = true
				}
				for _, v := range n.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							names[s] = true
						}
					}
				}
			case *ast.Field:
				for _, id := range n.Names {
					names[id.Name] = true
				}
				if n.Tag != nil {
					if tag, err := strconv.Unquote(n.Tag.Value); err == nil {
						json, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
						names[json] = true
					}
				}
			case *ast.SelectorExpr:
				// What the code uses of other packages (cache.ObjectName,
				// AddEventHandler) is there too: a doc that names it
				// points at code that calls it.
				names[n.Sel.Name] = true
				if x, ok := n.X.(*ast.Ident); ok {
					names[x.Name+"."+n.Sel.Name] = true
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					names[id.Name] = true
				}
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && n.Tok == token.DEFINE {
						names[id.Name] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
