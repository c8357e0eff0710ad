// Package charts checks the Helm charts against the kustomizations: with
// their default values they render the same objects, so that neither way
// of installing drifts from the other. It needs bin/helm
// (hack/build-controlplane.sh helm) and kubectl.
package charts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/samplecrd/network-controller/pkg/component/tracing"
)

const root = "../.."

// helmLabels are the labels a chart adds for Helm's bookkeeping; the
// kustomizations' objects carry only app.kubernetes.io/name, on some.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/name"}

// chartOnly are fields only a chart has, by kind. There are none: the
// chart once rolled the Pods on a changed clouds.yaml with a checksum
// annotation, an unkeyed hash of the credentials that anyone who may read
// the Pods could try passwords against offline; the controller reads the
// mounted file again by itself (--cloud-reload-interval), so nothing needs
// rolling.
var chartOnly = map[string][][]string{}

// TestChartsRenderTheKustomizations: `helm template` of each chart, with
// its defaults, in the namespace its kustomization names, gives the
// kustomization's objects (less its Namespace, which Helm leaves to
// --create-namespace), field by field.
func TestChartsRenderTheKustomizations(t *testing.T) {
	helm := filepath.Join(root, "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("no %s: build it with hack/build-controlplane.sh helm", helm)
	}
	for _, tc := range []struct{ chart, namespace, kustomization string }{
		{"network-controller", "network-controller-system", "artifacts/deploy"},
		{"envoy-injector", "envoy-injector", "artifacts/injector"},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			want := objects(t, run(t, "kubectl", "kustomize", filepath.Join(root, tc.kustomization)))
			got := objects(t, run(t, helm, "template", tc.chart, filepath.Join(root, "charts", tc.chart), "--namespace", tc.namespace))
			delete(want, "Namespace/"+tc.namespace)
			for key, obj := range got {
				// Helm installs namespaced objects into the release's
				// namespace; kustomize writes it into each.
				if w, ok := want[key]; ok && nested(w, "metadata", "namespace") != nil {
					obj["metadata"].(map[string]any)["namespace"] = tc.namespace
				}
			}
			for key := range want {
				if _, ok := got[key]; !ok {
					t.Errorf("the chart does not render %s", key)
				}
			}
			for key, obj := range got {
				w, ok := want[key]
				if !ok {
					t.Errorf("the chart renders %s, which %s does not have", key, tc.kustomization)
					continue
				}
				if diff := cmp.Diff(w, obj); diff != "" {
					t.Errorf("%s differs (-%s +chart):\n%s", key, tc.kustomization, diff)
				}
			}
		})
	}
}

// TestTheChartsCRDIsArtifactsCRD: Helm installs the CRD from crds/ (and
// never deletes it); it must be the very file kustomize applies.
func TestTheChartsCRDIsArtifactsCRD(t *testing.T) {
	const name = "networks.samplecrd.k8s.io.yaml"
	chart, err := os.ReadFile(filepath.Join(root, "charts", "network-controller", "crds", name))
	if err != nil {
		t.Fatal(err)
	}
	artifact, err := os.ReadFile(filepath.Join(root, "artifacts", "crd", name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(chart, artifact) {
		t.Errorf("charts/network-controller/crds/%s differs from artifacts/crd/%s: copy it (cp artifacts/crd/%s charts/network-controller/crds/)", name, name, name)
	}
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr)
	}
	return out
}

// objects decodes a YAML stream into objects by "Kind/name", without
// Helm's bookkeeping labels and what only a chart has.
func objects(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if obj == nil {
			continue
		}
		obj = normalised(obj)
		meta := obj["metadata"].(map[string]any)
		if labels, ok := meta["labels"].(map[string]any); ok {
			for _, l := range helmLabels {
				delete(labels, l)
			}
			if len(labels) == 0 {
				delete(meta, "labels")
			}
		}
		for _, path := range chartOnly[obj["kind"].(string)] {
			if parent, ok := nested(obj, path[:len(path)-1]...).(map[string]any); ok {
				delete(parent, path[len(path)-1])
				if len(parent) == 0 {
					delete(nested(obj, path[:len(path)-2]...).(map[string]any), path[len(path)-2])
				}
			}
		}
		out[fmt.Sprintf("%s/%s", obj["kind"], meta["name"])] = obj
	}
}

// normalised is obj through JSON, so that numbers and strings compare the
// same whichever tool wrote them.
func normalised(obj map[string]any) map[string]any {
	data, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// TestTheChartInstallsTenantPolicies: tenantPolicies become TenantPolicies
// with their specs as written, and none by default.
func TestTheChartInstallsTenantPolicies(t *testing.T) {
	helm := filepath.Join(root, "bin", "helm")
	chart := filepath.Join(root, "charts", "network-controller")
	if got := objects(t, run(t, helm, "template", "nc", chart)); got["TenantPolicy/team-a"] != nil {
		t.Error("the chart installs a TenantPolicy by default")
	}
	got := objects(t, run(t, helm, "template", "nc", chart, "--set-json",
		`tenantPolicies=[{"name":"team-a","spec":{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"team-a"}},"routers":["edge"],"adoption":true}}]`))
	tp := got["TenantPolicy/team-a"]
	if tp == nil {
		t.Fatalf("no TenantPolicy/team-a among %d objects", len(got))
	}
	want := normalised(map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "team-a"}},
		"routers": []any{"edge"}, "adoption": true})
	if !reflect.DeepEqual(tp["spec"], want) {
		t.Errorf("spec %v, want %v", tp["spec"], want)
	}
}

// TestTheChartTurnsTracingOn: tracing becomes a TracingConfiguration that
// the controller's own parser reads back as written, mounted where the
// Deployment's --tracing-config-file points; none by default.
func TestTheChartTurnsTracingOn(t *testing.T) {
	helm := filepath.Join(root, "bin", "helm")
	chart := filepath.Join(root, "charts", "network-controller")
	if got := objects(t, run(t, helm, "template", "nc", chart)); got["ConfigMap/network-controller-tracing"] != nil {
		t.Error("the chart configures tracing by default")
	}
	got := objects(t, run(t, helm, "template", "nc", chart, "--set", "tracing.endpoint=otel-collector.monitoring:4317",
		"--set", "tracing.samplingRatePerMillion=10000"))
	cm := got["ConfigMap/network-controller-tracing"]
	if cm == nil {
		t.Fatalf("no ConfigMap/network-controller-tracing among %d objects", len(got))
	}
	path := filepath.Join(t.TempDir(), "tracing.yaml")
	if err := os.WriteFile(path, []byte(cm["data"].(map[string]any)["tracing.yaml"].(string)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := tracing.ReadConfig(path)
	if err != nil || *cfg.Endpoint != "otel-collector.monitoring:4317" || *cfg.SamplingRatePerMillion != 10000 {
		t.Errorf("the controller reads %+v (%v), want the endpoint and rate set", cfg, err)
	}
	pod := nested(got["Deployment/network-controller"], "spec", "template", "spec").(map[string]any)
	container := pod["containers"].([]any)[0].(map[string]any)
	mounted := false
	for _, m := range container["volumeMounts"].([]any) {
		mounted = mounted || m.(map[string]any)["mountPath"] == "/etc/network-controller/tracing" && m.(map[string]any)["name"] == "tracing"
	}
	args := fmt.Sprint(container["args"])
	if !mounted || !strings.Contains(args, "--tracing-config-file=/etc/network-controller/tracing/tracing.yaml") {
		t.Errorf("the Deployment mounts the configuration: %v, with args %s", mounted, args)
	}
}

// TestTheChartServesTheWebhookAlone: the conversion webhook is a
// Deployment of its own, `network-controller conversion-webhook` with a
// ServiceAccount that gets Networks and the Network CRD only, whose Pods
// alone the Service selects; with webhookOnly it is all the chart renders
// (for a controller out of cluster), the same objects as beside the
// controller.
func TestTheChartServesTheWebhookAlone(t *testing.T) {
	helm := filepath.Join(root, "bin", "helm")
	chart := filepath.Join(root, "charts", "network-controller")
	full := objects(t, run(t, helm, "template", "nc", chart))
	alone := objects(t, run(t, helm, "template", "nc", chart, "--set", "webhookOnly=true"))

	var keys []string
	for key, obj := range alone {
		keys = append(keys, key)
		if diff := cmp.Diff(full[key], obj); diff != "" {
			t.Errorf("%s with webhookOnly differs from the one beside the controller (-beside +alone):\n%s", key, diff)
		}
	}
	slices.Sort(keys)
	want := []string{
		"ClusterRole/network-controller-conversion", "ClusterRoleBinding/network-controller-conversion",
		"Deployment/network-controller-conversion", "NetworkPolicy/network-controller-conversion",
		"PodDisruptionBudget/network-controller-conversion", "PriorityClass/network-controller",
		"Service/network-controller-conversion", "ServiceAccount/network-controller-conversion",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("webhookOnly renders %v, want %v", keys, want)
	}

	spec := nested(full["Deployment/network-controller-conversion"], "spec", "template", "spec").(map[string]any)
	container := spec["containers"].([]any)[0].(map[string]any)
	args := container["args"].([]any)
	if len(args) == 0 || args[0] != "conversion-webhook" {
		t.Errorf("the webhook's args are %v, want the subcommand conversion-webhook first", args)
	}
	for _, a := range args {
		if s := a.(string); strings.HasPrefix(s, "--os-cloud") || strings.HasPrefix(s, "--leader-elect") {
			t.Errorf("the webhook is given the controller's flag %s", s)
		}
	}
	if sa := spec["serviceAccountName"]; sa != "network-controller-conversion" {
		t.Errorf("the webhook runs as %v, want its own ServiceAccount", sa)
	}
	// The Service selects the webhook's Pods, and only those Ready.
	selector := nested(full["Service/network-controller-conversion"], "spec", "selector")
	podLabels := nested(full["Deployment/network-controller-conversion"], "spec", "template", "metadata", "labels")
	if !reflect.DeepEqual(selector, podLabels) || reflect.DeepEqual(selector, nested(full["Deployment/network-controller"], "spec", "template", "metadata", "labels")) {
		t.Errorf("the Service selects %v: want the webhook's Pods (%v) and not the controller's", selector, podLabels)
	}
	if p := nested(full["Service/network-controller-conversion"], "spec", "publishNotReadyAddresses"); p != nil {
		t.Errorf("the Service publishes Pods that are not Ready (%v): a frozen webhook would keep its calls", p)
	}
	rules, err := json.Marshal(nested(full["ClusterRole/network-controller-conversion"], "rules"))
	if err != nil {
		t.Fatal(err)
	}
	wantRules := `[{"apiGroups":["samplecrd.k8s.io"],"resources":["networks"],"verbs":["get"]},{"apiGroups":["apiextensions.k8s.io"],"resourceNames":["networks.samplecrd.k8s.io"],"resources":["customresourcedefinitions"],"verbs":["get"]}]`
	if string(rules) != wantRules {
		t.Errorf("the webhook's ClusterRole's rules are %s, want %s", rules, wantRules)
	}
}
