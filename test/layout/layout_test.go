// Package layout checks the shape of the code that the compiler does not:
// that every arrow between packages points down a fixed order, and that no
// two files of one package refer to each other.
package layout

import (
	"fmt"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/samplecrd/network-controller"

// layers are the project's packages from the bottom up. A package may
// import only packages of lower layers (and the generated code, and
// pkg/apis, which everyone may). The compiler forbids cycles; this
// forbids a low package reaching up, e.g. pkg/controller/neutron into
// pkg/controller/reconcile. The folders show the same layers, as
// TestTheFoldersAreTheLayers checks: pkg/component (the plumbing both
// programs share), then pkg/injector (the webhook's), and pkg/controller
// (the Network controller's); the programs at the top.
var layers = [][]string{
	// pkg/component: what both programs are built from, of neither.
	{"pkg/component/metrics", "pkg/component/tracing", "pkg/component/leader", "pkg/component/serving", "pkg/component/events", "pkg/component/crdschema"},
	{"pkg/component/command"}, // both programs' cobra commands, run as Kubernetes components run theirs
	// pkg/injector: the sidecar-injection webhook.
	{"pkg/injector"},
	// pkg/controller: the Network controller, bottom up.
	{"pkg/controller/fairqueue", "pkg/controller/neutron", "pkg/controller/conversion"},
	{"pkg/controller/neutron/fake", "pkg/controller/desired", "pkg/controller/cloud"},
	{"pkg/controller/inventory"},
	{"pkg/controller/reconcile"},
	// The garbage collector deletes through a project's inventory with
	// reconcile's DeleteOwned; pkg/controller/tenancy builds it.
	{"pkg/controller/collector", "pkg/controller/configmap"},
	{"pkg/controller/tenancy"},                         // a Network's place: its policy, credentials and projects
	{"pkg/controller/capacity"},                        // each TenantPolicy's status: its namespaces against their caps
	{"pkg/controller/options"},                         // the controller's command line
	{"pkg/controller/importer", "pkg/controller/plan"}, // the subcommands, each with its command
	{"", "cmd/envoy-injector"},                         // the programs: package main
}

// folders say which folders a package of each may import from: the
// webhook and the controller share the components, and nothing else.
var folders = map[string][]string{
	"pkg/component":      {"pkg/component"},
	"pkg/injector":       {"pkg/component", "pkg/injector"},
	"pkg/controller":     {"pkg/component", "pkg/controller"},
	"":                   {"pkg/component", "pkg/controller"},
	"cmd/envoy-injector": {"pkg/component", "pkg/injector"},
}

// folderOf is the folder of folders that path is in.
func folderOf(path string) string {
	for _, f := range []string{"pkg/component", "pkg/injector", "pkg/controller", "cmd/envoy-injector"} {
		if path == f || strings.HasPrefix(path, f+"/") {
			return f
		}
	}
	return path
}

// TestTheFoldersAreTheLayers: the components import nothing of either
// program, and neither program's packages import the other's.
func TestTheFoldersAreTheLayers(t *testing.T) {
	for _, p := range load(t) {
		from := rel(p.PkgPath)
		allowed, ok := folders[folderOf(from)]
		if !ok {
			continue // generated code, API types, tests and tools
		}
		for imp := range p.Imports {
			to := rel(imp)
			if !strings.HasPrefix(imp, module) || strings.HasPrefix(to, "pkg/generated") || strings.HasPrefix(to, "pkg/apis") {
				continue
			}
			if !slices.Contains(allowed, folderOf(to)) {
				t.Errorf("%s imports %s: %s may import only from %v", from, to, folderOf(from), allowed)
			}
		}
	}
}

// rootFiles are the files of the root package, the learner's entry point:
// the command and its run, and the controller; the rest is in pkg/.
var rootFiles = []string{"controller.go", "main.go"}

// load loads every package of the module but the tests, with types.
func load(t *testing.T) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{Dir: "../..", Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports |
		packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
	}
	return pkgs
}

func rel(pkgPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(pkgPath, module), "/")
}

func layerOf(path string) int {
	for i, l := range layers {
		if slices.Contains(l, path) {
			return i
		}
	}
	return -1
}

// TestEveryImportPointsDown: a package imports only packages of lower
// layers, and every package of the controller is in a layer.
func TestEveryImportPointsDown(t *testing.T) {
	for _, p := range load(t) {
		from := rel(p.PkgPath)
		if strings.HasPrefix(from, "pkg/generated") || strings.HasPrefix(from, "pkg/apis") || strings.HasPrefix(from, "test/") || strings.HasPrefix(from, "hack/") {
			continue
		}
		fromLayer := layerOf(from)
		if fromLayer < 0 {
			t.Errorf("%s is in no layer: add it to layers", p.PkgPath)
			continue
		}
		for imp := range p.Imports {
			to := rel(imp)
			if !strings.HasPrefix(imp, module) || strings.HasPrefix(to, "pkg/generated") || strings.HasPrefix(to, "pkg/apis") {
				continue
			}
			if toLayer := layerOf(to); toLayer < 0 || toLayer >= fromLayer {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down", from, fromLayer, to, toLayer)
			}
		}
	}
}

// TestTheRootHoldsTheLessonOnly: package main at the root is main.go and
// controller.go (and their tests); a command's wiring goes into pkg/.
func TestTheRootHoldsTheLessonOnly(t *testing.T) {
	for _, p := range load(t) {
		if p.PkgPath != module {
			continue
		}
		var files []string
		for _, f := range p.GoFiles {
			files = append(files, filepath.Base(f))
		}
		sort.Strings(files)
		if !slices.Equal(files, rootFiles) {
			t.Errorf("the root package holds %v, want %v: move the rest into a package of pkg/", files, rootFiles)
		}
	}
}

// TestNoTwoFilesReferToEachOther: within a package, if one file uses a
// function, type, variable, constant or method of another, the other uses
// nothing of it, so that each file reads with what is below it. Generated
// code is left out.
func TestNoTwoFilesReferToEachOther(t *testing.T) {
	for _, p := range load(t) {
		if strings.HasPrefix(rel(p.PkgPath), "pkg/generated") {
			continue
		}
		uses := map[[2]string]map[string]bool{}
		for id, obj := range p.TypesInfo.Uses {
			to := fileOf(p, obj)
			from := p.Fset.Position(id.Pos()).Filename
			if to == "" || to == from {
				continue
			}
			k := [2]string{from, to}
			if uses[k] == nil {
				uses[k] = map[string]bool{}
			}
			uses[k][obj.Name()] = true
		}
		var pairs []string
		for k, names := range uses {
			if back := uses[[2]string{k[1], k[0]}]; k[0] < k[1] && back != nil {
				pairs = append(pairs, fmt.Sprintf("%s uses %v of %s, which uses %v of it",
					filepath.Base(k[0]), sorted(names), filepath.Base(k[1]), sorted(back)))
			}
		}
		sort.Strings(pairs)
		for _, pair := range pairs {
			t.Errorf("%s: %s", p.PkgPath, pair)
		}
	}
}

// fileOf is the file that declares obj, when obj is a package-level object
// or a method of p; "" otherwise.
func fileOf(p *packages.Package, obj types.Object) string {
	if obj == nil || obj.Pkg() != p.Types || !obj.Pos().IsValid() {
		return ""
	}
	if obj.Parent() != p.Types.Scope() {
		f, ok := obj.(*types.Func)
		if !ok || f.Type().(*types.Signature).Recv() == nil {
			return ""
		}
	}
	return p.Fset.Position(obj.Pos()).Filename
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
