package injector

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// asks is the annotations of a pod template that asks for the sidecar.
const asks = `{initializer.kubernetes.io/envoy: "true"}`

// TestInjectManifests: every kind that holds a Pod gets the sidecar where
// the Pod asks, everything else passes through, and injecting the output
// again changes nothing.
func TestInjectManifests(t *testing.T) {
	tests := []struct {
		name, in string
		// want is the number of Pods or templates injected; paths lists,
		// per document, where the containers are (empty: none checked).
		want int
	}{
		{"a Pod", `{apiVersion: v1, kind: Pod, metadata: {name: p, annotations: ` + asks + `}, spec: {containers: [{name: app, image: busybox}]}}`, 1},
		{"a Pod that does not ask", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: app, image: busybox}]}}`, 0},
		{"a hostNetwork Pod", `{apiVersion: v1, kind: Pod, metadata: {name: p, annotations: ` + asks + `}, spec: {hostNetwork: true, containers: [{name: app, image: busybox}]}}`, 0},
		{"every workload kind", strings.Join([]string{
			workload("apps/v1", "Deployment", "spec: {template: %s}"),
			workload("apps/v1", "StatefulSet", "spec: {template: %s}"),
			workload("apps/v1", "DaemonSet", "spec: {template: %s}"),
			workload("apps/v1", "ReplicaSet", "spec: {template: %s}"),
			workload("batch/v1", "Job", "spec: {template: %s}"),
			workload("batch/v1", "CronJob", `spec: {schedule: "* * * * *", jobTemplate: {spec: {template: %s}}}`),
		}, "\n---\n"), 6},
		{"a List, a Service and an empty document", `{apiVersion: v1, kind: List, items: [` +
			workload("apps/v1", "Deployment", "spec: {template: %s}") + `, {apiVersion: v1, kind: Service, metadata: {name: s}, spec: {ports: [{port: 80}]}}]}
---
---
{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}}`, 1},
		{"JSON", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"initializer.kubernetes.io/envoy": "true"}}, "spec": {"containers": [{"name": "app", "image": "busybox"}]}}`, 1},
	}
	tmpl := mustTemplate(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var once bytes.Buffer
			n, err := InjectManifests(strings.NewReader(tc.in), &once, tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.want {
				t.Errorf("injected %d, want %d:\n%s", n, tc.want, once.String())
			}
			if got := strings.Count(once.String(), "image: lyft/envoy:"); got != tc.want {
				t.Errorf("%d envoy containers in the output, want %d:\n%s", got, tc.want, once.String())
			}
			var twice bytes.Buffer
			if n, err := InjectManifests(bytes.NewReader(once.Bytes()), &twice, tmpl); err != nil || n != 0 {
				t.Errorf("injecting the output again: %d changes, %v", n, err)
			}
			if once.String() != twice.String() {
				t.Errorf("inject twice != inject once:\n%s\n---- twice:\n%s", once.String(), twice.String())
			}
			assertDecodes(t, once.Bytes())
		})
	}
}

func TestInjectManifestsRefusesWhatItCannotRead(t *testing.T) {
	tmpl := mustTemplate(t)
	for name, in := range map[string]string{
		"a misspelt field in a Pod":        `{apiVersion: v1, kind: Pod, metadata: {name: p, annotations: ` + asks + `}, spec: {containers: [{name: app, image: busybox, volumeMount: []}]}}`,
		"a container name the sidecar has": `{apiVersion: v1, kind: Pod, metadata: {name: p, annotations: ` + asks + `}, spec: {volumes: [{name: envoy-conf, emptyDir: {}}], containers: [{name: app, image: busybox}]}}`,
		"not YAML":                         "kind: [",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := InjectManifests(strings.NewReader(in), &bytes.Buffer{}, tmpl); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// workload is a document of kind whose pod template, placed into spec by
// its %s, asks for the sidecar.
func workload(apiVersion, kind, spec string) string {
	template := `{metadata: {labels: {app: w}, annotations: ` + asks + `}, spec: {restartPolicy: Never, containers: [{name: app, image: busybox}]}}`
	return "{apiVersion: " + apiVersion + ", kind: " + kind + ", metadata: {name: w}, " + strings.Replace(spec, "%s", template, 1) + "}"
}

// assertDecodes checks that out is a stream of well-formed documents.
func assertDecodes(t *testing.T, out []byte) {
	t.Helper()
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := d.Decode(&obj.Object); err != nil {
			if err.Error() != "EOF" {
				t.Errorf("the output does not decode: %v", err)
			}
			return
		}
	}
}
