package injector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Offline injection, `envoy-injector inject`, like `istioctl kube-inject`:
// manifests go through the same InjectJSON as the webhook's Pods, before they
// reach a cluster (GitOps, review, a cluster without the webhook).

// podTemplatePaths are where each workload kind keeps the Pod it makes.
var podTemplatePaths = map[string][]string{
	"Deployment":            {"spec", "template"},
	"StatefulSet":           {"spec", "template"},
	"DaemonSet":             {"spec", "template"},
	"ReplicaSet":            {"spec", "template"},
	"ReplicationController": {"spec", "template"},
	"Job":                   {"spec", "template"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template"},
	"PodTemplate":           {"template"},
}

// InjectManifests reads YAML or JSON documents from r (several, separated
// by "---", and Lists), merges tmpl into every Pod and pod template that
// asks for it, as the webhook would, and writes every document to w as
// YAML, ready for `kubectl apply -f -`. It returns how many Pods or
// templates it changed.
func InjectManifests(r io.Reader, w io.Writer, tmpl *Template) (int, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	injected := 0
	for doc := 1; ; doc++ {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return injected, nil
		}
		if err != nil {
			return injected, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document, e.g. a trailing "---"
		}
		n, err := injectObject(obj.Object, tmpl)
		if err != nil {
			return injected, fmt.Errorf("document %d (%s %s): %w", doc, obj.GetKind(), obj.GetName(), err)
		}
		injected += n
		out, err := yaml.Marshal(obj.Object)
		if err != nil {
			return injected, err
		}
		if doc > 1 {
			out = append([]byte("---\n"), out...)
		}
		if _, err := io.Copy(w, bytes.NewReader(out)); err != nil {
			return injected, err
		}
	}
}

// injectObject injects into obj, a Pod, a workload, or a List of them.
func injectObject(obj map[string]any, tmpl *Template) (int, error) {
	injected := 0
	err := forEachPod(obj, func(pod map[string]any, _ string) error {
		n, err := injectPodLike(pod, tmpl)
		injected += n
		return err
	})
	return injected, err
}

// forEachPod calls fn on every Pod of obj (a Pod, a workload, or a List of
// them): a Pod itself, or a workload's pod template, which fn may change
// in place; namespace is the Pod's or the workload's. Other kinds have
// none.
func forEachPod(obj map[string]any, fn func(pod map[string]any, namespace string) error) error {
	if items, ok := obj["items"].([]any); ok {
		for i, item := range items {
			m, ok := item.(map[string]any)
			if !ok {
				return fmt.Errorf("items[%d] is not an object", i)
			}
			if err := forEachPod(m, fn); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetKind() == "Pod" {
		return fn(obj, u.GetNamespace())
	}
	path, ok := podTemplatePaths[u.GetKind()]
	if !ok {
		return nil // a Service, a ConfigMap...: not ours to change
	}
	template, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return err
	}
	m, ok := template.(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not an object", strings.Join(path, "."))
	}
	return fn(m, u.GetNamespace())
}

// injectPodLike injects into an object with a Pod's metadata and spec: a
// Pod, or a pod template. The merge is made on the document as written,
// so it gains the sidecar and nothing else.
func injectPodLike(obj map[string]any, tmpl *Template) (int, error) {
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, pod, true); err != nil {
		return 0, err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return 0, err
	}
	merged, err := InjectJSON(raw, pod, tmpl)
	if err != nil || merged == nil {
		return 0, err
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(merged, &out); err != nil {
		return 0, err
	}
	clear(obj)
	maps.Copy(obj, out)
	return 1, nil
}
