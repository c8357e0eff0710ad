// Package argocd checks artifacts/argocd: that the health check Argo CD is
// given for Networks tells Healthy, Progressing and Degraded apart the way
// docs/conditions.md says, for every reason of Ready the API declares.
package argocd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// healthKey is the argocd-cm key Argo CD looks a kind's health check up
// by: resource.customizations.health.<group>_<kind>.
const healthKey = "resource.customizations.health.samplecrd.k8s.io_Network"

// health is what an Argo CD health check returns.
type health struct{ status, message string }

// healthScript reads the script from the patch users apply, so that what
// is tested is what they get.
func healthScript(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../artifacts/argocd/argocd-cm-patch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var patch struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &patch); err != nil {
		t.Fatal(err)
	}
	script, ok := patch.Data[healthKey]
	if !ok {
		t.Fatalf("the patch has no %s", healthKey)
	}
	return script
}

// assess runs script on network as Argo CD runs a health check from
// argocd-cm (argo-cd util/lua): gopher-lua with only the package, base and
// table libraries (no string library: custom checks run without the
// "open" ones), the object converted from its unstructured form (numbers
// are int64 there), and the returned table read as status and message.
func assess(t *testing.T, script string, network *samplecrdv1.Network) health {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(network)
	if err != nil {
		t.Fatal(err)
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatal(err)
		}
	}
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		t.Fatalf("the health check fails: %v", err)
	}
	out, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health check returns %s, not a table", l.Get(-1).Type())
	}
	return health{status: lua.LVAsString(out.RawGetString("status")), message: lua.LVAsString(out.RawGetString("message"))}
}

// toLua converts an unstructured value as Argo CD's decodeValue does.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetString(k, toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

// readyReasons are the constants named Reason* that pkg/apis declares: a
// reason added there is checked here without anyone listing it.
func readyReasons(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "../../pkg/apis/samplecrd/v1/types.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || len(spec.Values) != 1 || !strings.HasPrefix(spec.Names[0].Name, "Reason") {
			return true
		}
		if lit, ok := spec.Values[0].(*ast.BasicLit); ok {
			value, _ := strconv.Unquote(lit.Value)
			reasons = append(reasons, value)
		}
		return true
	})
	if len(reasons) < 10 {
		t.Fatalf("found only %d reasons in types.go: %v", len(reasons), reasons)
	}
	return reasons
}

// network is a Network of generation 2 whose status the controller wrote
// for observed, with Ready and its kstatus condition as the controller
// writes them (reconcile.ProgressCondition).
func network(observed int64, ready metav1.Condition) *samplecrdv1.Network {
	n := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "ns", Generation: 2}}
	n.Status.ObservedGeneration = observed
	ready.Type, ready.ObservedGeneration = samplecrdv1.ConditionReady, observed
	meta.SetStatusCondition(&n.Status.Conditions, ready)
	if progress := reconcile.ProgressCondition(ready); progress != nil {
		meta.SetStatusCondition(&n.Status.Conditions, *progress)
	}
	return n
}

func TestArgoCDHealthOfEveryReadyReason(t *testing.T) {
	script := healthScript(t)
	for _, reason := range readyReasons(t) {
		t.Run(reason, func(t *testing.T) {
			status := metav1.ConditionFalse
			want := "Degraded"
			switch {
			case reason == samplecrdv1.ReasonProvisioned:
				status, want = metav1.ConditionTrue, "Healthy"
			case reconcile.ProgressCondition(metav1.Condition{Status: status, Reason: reason}).Type == samplecrdv1.ConditionReconciling:
				want = "Progressing"
			}
			got := assess(t, script, network(2, metav1.Condition{Status: status, Reason: reason, Message: "the message"}))
			if got.status != want {
				t.Errorf("Ready %s %s: Argo CD health %s (%q), want %s", status, reason, got.status, got.message, want)
			}
			if want != "Healthy" && !strings.Contains(got.message, reason+": the message") {
				t.Errorf("the message %q does not carry Ready's reason and message", got.message)
			}
		})
	}
}

func TestArgoCDHealthWaitsForTheCurrentGeneration(t *testing.T) {
	script := healthScript(t)
	for _, tc := range []struct {
		name    string
		network *samplecrdv1.Network
	}{
		{"no status yet", &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "n", Generation: 1}}},
		{"Ready for the spec before", network(1, metav1.Condition{Status: metav1.ConditionTrue, Reason: samplecrdv1.ReasonProvisioned})},
		{"Stalled on the spec before", network(1, metav1.Condition{Status: metav1.ConditionFalse, Reason: samplecrdv1.ReasonInvalidSpec})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := assess(t, script, tc.network); got.status != "Progressing" {
				t.Errorf("Argo CD health %s (%q), want Progressing until the controller acts on the current spec", got.status, got.message)
			}
		})
	}
}
