package injector

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

const (
	// RequestAnnotation is the design documents' opt-in: a Pod with it set
	// to "true" gets the sidecar.
	RequestAnnotation = "initializer.kubernetes.io/envoy"
	// InjectedAnnotation records what was injected (the template's
	// container names), and makes a second admission a no-op.
	InjectedAnnotation = "sidecar.samplecrd.k8s.io/injected"
)

// Wants reports whether the Pod asks for the sidecar and may have it. A
// Pod on the host's network never gets it, whatever it asks: the sidecar's
// listeners would take ports of the node itself, and clash with every
// other such Pod on it (Istio's injector skips them for the same reason).
// Anything but "true" — "false" included — is a Pod that does not ask.
func Wants(pod *corev1.Pod) bool {
	return pod.Annotations[RequestAnnotation] == "true" && !pod.Spec.HostNetwork
}

// Inject returns pod with the template merged in, or pod itself (not a
// copy) when there is nothing to do: the Pod did not ask, was injected
// already, or already has the template's containers (its own envoy). A
// container or volume of the template whose name the Pod already uses for
// something different is an error: the Pod's would be silently replaced.
func Inject(pod *corev1.Pod, tmpl *Template) (*corev1.Pod, error) {
	if !Wants(pod) || pod.Annotations[InjectedAnnotation] != "" || hasAll(pod, tmpl) {
		return pod, nil
	}
	for _, c := range tmpl.Containers {
		for _, existing := range pod.Spec.Containers {
			if existing.Name == c.Name && !equality.Semantic.DeepEqual(existing, c) {
				return nil, fmt.Errorf("the Pod already has a container named %q that differs from the sidecar's; rename it or drop the %s annotation", c.Name, RequestAnnotation)
			}
		}
	}
	for _, v := range tmpl.Volumes {
		for _, existing := range pod.Spec.Volumes {
			if existing.Name == v.Name && !equality.Semantic.DeepEqual(existing, v) {
				return nil, fmt.Errorf("the Pod already has a volume named %q that differs from the sidecar's; rename it or drop the %s annotation", v.Name, RequestAnnotation)
			}
		}
	}

	// The merge is the design documents' strategic-merge patch: containers
	// and volumes merge by name (their patchMergeKey in corev1.PodSpec).
	original, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	// $setElementOrder keeps the Pod's own containers first: the first
	// container is the one `kubectl logs` and `exec` pick by default.
	spec := map[string]any{
		"containers":                  tmpl.Containers,
		"$setElementOrder/containers": elementOrder(pod.Spec.Containers, tmpl.Containers, func(c corev1.Container) string { return c.Name }),
	}
	if len(tmpl.Volumes) > 0 {
		// Only when there are some: a null list in a strategic-merge patch
		// deletes the Pod's own.
		spec["volumes"] = tmpl.Volumes
		spec["$setElementOrder/volumes"] = elementOrder(pod.Spec.Volumes, tmpl.Volumes, func(v corev1.Volume) string { return v.Name })
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{InjectedAnnotation: containerNames(tmpl)}},
		"spec":     spec,
	})
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("merging the sidecar: %w", err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, err
	}
	return out, nil
}

// elementOrder lists the names of own then added, once each, in the form
// of a strategic-merge $setElementOrder directive.
func elementOrder[T any](own, added []T, name func(T) string) []map[string]string {
	seen := map[string]bool{}
	var order []map[string]string
	for _, list := range [][]T{own, added} {
		for _, x := range list {
			if n := name(x); !seen[n] {
				seen[n] = true
				order = append(order, map[string]string{"name": n})
			}
		}
	}
	return order
}

func hasAll(pod *corev1.Pod, tmpl *Template) bool {
	for _, c := range tmpl.Containers {
		found := false
		for _, existing := range pod.Spec.Containers {
			found = found || existing.Name == c.Name
		}
		if !found {
			return false
		}
	}
	return true
}

func containerNames(tmpl *Template) string {
	names := make([]string, 0, len(tmpl.Containers))
	for _, c := range tmpl.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ",")
}
