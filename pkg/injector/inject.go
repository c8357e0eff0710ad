package injector

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
)

// Status is the value of StatusAnnotation: the names of what was injected,
// and the Hash of the template they came from.
type Status struct {
	Template       string   `json:"template"`
	Containers     []string `json:"containers,omitempty"`
	InitContainers []string `json:"initContainers,omitempty"`
	Volumes        []string `json:"volumes,omitempty"`
}

// Wants reports whether the Pod asks for the sidecar and may have it. A
// Pod on the host's network never gets it, whatever it asks: the sidecar's
// listeners would take ports of the node itself, and clash with every
// other such Pod on it (Istio's injector skips them for the same reason).
// A Pod asks with the label RequestLabel or the design documents'
// annotation RequestAnnotation; anything but "true" — "false" included —
// is a Pod that does not ask.
func Wants(pod *corev1.Pod) bool {
	wants, _ := wantsWhy(pod)
	return wants
}

// InjectJSON decides on pod and merges the sidecar into raw, the same Pod
// (or pod template) as its author or the API server wrote it, so that
// nothing but the sidecar is added: no defaults, no empty fields. It
// returns nil when there is nothing to do: the Pod did not ask, was
// injected already, or already has the sidecar's containers (its own
// envoy).
//
// "Injected already" is decided by the status annotation together with the
// containers it names, never by the template: a Pod admitted again
// (reinvocation), or created from a copy of an injected Pod, keeps the
// sidecar it has even when the template changed in between; a copy that
// kept the annotation but lost the containers is injected afresh.
//
// A container or volume of the sidecar whose name the Pod already uses
// for something different is an error: the Pod's would be silently
// replaced.
func InjectJSON(raw []byte, pod *corev1.Pod, tmpl *Template) ([]byte, error) {
	merged, _, err := injectJSON(raw, pod, tmpl)
	return merged, err
}

// injectJSON is InjectJSON that also says why: a Reason* value, and, on
// error, a refusal that carries it.
func injectJSON(raw []byte, pod *corev1.Pod, tmpl *Template) ([]byte, string, error) {
	if wants, why := wantsWhy(pod); !wants {
		return nil, why, nil
	}
	if injectedAlready(pod) {
		return nil, ReasonAlreadyInjected, nil
	}
	sidecar, err := tmpl.Render(podData(pod))
	if err != nil {
		return nil, ReasonTemplateFailed, refused(ReasonTemplateFailed, err)
	}
	if hasAll(pod, sidecar) {
		return nil, ReasonHasSidecar, nil
	}
	if err := applyOverrides(sidecar, pod.Annotations); err != nil {
		return nil, ReasonOverrideRefused, refused(ReasonOverrideRefused, err)
	}
	if sidecar.NativeSidecar {
		for i := range sidecar.Containers {
			sidecar.Containers[i].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
	}
	if err := checkClashes(pod, sidecar); err != nil {
		return nil, ReasonClash, refused(ReasonClash, err)
	}
	merged, err := merge(raw, pod, sidecar, tmpl.Hash)
	if err != nil {
		return nil, ReasonMergeFailed, refused(ReasonMergeFailed, err)
	}
	return merged, ReasonInjected, nil
}

// ReadStatus returns the status annotation among a Pod's (or a pod
// template's) annotations, if there is a readable one.
func ReadStatus(annotations map[string]string) (Status, bool) {
	var s Status
	value, ok := annotations[StatusAnnotation]
	if !ok || json.Unmarshal([]byte(value), &s) != nil {
		return Status{}, false
	}
	return s, true
}

func injectedAlready(pod *corev1.Pod) bool {
	s, ok := ReadStatus(pod.Annotations)
	if !ok || len(s.Containers)+len(s.InitContainers) == 0 {
		return false
	}
	for _, names := range [][]string{s.Containers, s.InitContainers} {
		for _, name := range names {
			if findContainer(pod, name) == nil {
				return false
			}
		}
	}
	return true
}

func podData(pod *corev1.Pod) PodData {
	return PodData{Name: pod.Name, GenerateName: pod.GenerateName, Namespace: pod.Namespace,
		Labels: pod.Labels, Annotations: pod.Annotations}
}

// merge is the design documents' strategic-merge patch: containers, init
// containers and volumes merge by name (their patchMergeKey in
// corev1.PodSpec).
func merge(raw []byte, pod *corev1.Pod, s *Sidecar, hash string) ([]byte, error) {
	status := Status{Template: hash, Volumes: volumeNames(s.Volumes)}
	spec := map[string]any{}
	if s.NativeSidecar {
		// Native sidecars go first, so the Pod's own init containers
		// already have the proxy.
		spec["initContainers"] = s.Containers
		spec["$setElementOrder/initContainers"] = elementOrder(s.Containers, pod.Spec.InitContainers, containerName)
		status.InitContainers = containerNames(s.Containers)
	} else {
		// The Pod's own containers first: the first container is the one
		// `kubectl logs` and `exec` pick by default.
		spec["containers"] = s.Containers
		spec["$setElementOrder/containers"] = elementOrder(pod.Spec.Containers, s.Containers, containerName)
		status.Containers = containerNames(s.Containers)
	}
	if len(s.Volumes) > 0 {
		// Only when there are some: a null list in a strategic-merge patch
		// deletes the Pod's own.
		spec["volumes"] = s.Volumes
		spec["$setElementOrder/volumes"] = elementOrder(pod.Spec.Volumes, s.Volumes, func(v corev1.Volume) string { return v.Name })
	}
	statusJSON, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{StatusAnnotation: string(statusJSON)}},
		"spec":     spec,
	})
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(raw, patch, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("merging the sidecar: %w", err)
	}
	return merged, nil
}

// checkClashes refuses a sidecar container or volume whose name the Pod
// uses for something else. Container names are unique across containers
// and init containers, so a native sidecar's name is checked in both.
func checkClashes(pod *corev1.Pod, s *Sidecar) error {
	same, other := pod.Spec.Containers, pod.Spec.InitContainers
	if s.NativeSidecar {
		same, other = other, same
	}
	for _, c := range s.Containers {
		for _, existing := range other {
			if existing.Name == c.Name {
				return clash("container", c.Name)
			}
		}
		for _, existing := range same {
			if existing.Name == c.Name && !equality.Semantic.DeepEqual(existing, c) {
				return clash("container", c.Name)
			}
		}
	}
	for _, v := range s.Volumes {
		for _, existing := range pod.Spec.Volumes {
			if existing.Name == v.Name && !equality.Semantic.DeepEqual(existing, v) {
				return clash("volume", v.Name)
			}
		}
	}
	return nil
}

func clash(kind, name string) error {
	return fmt.Errorf("the Pod already has a %s named %q that differs from the sidecar's; rename it or drop the %s annotation", kind, name, RequestAnnotation)
}

// elementOrder lists the names of first then second, once each, in the
// form of a strategic-merge $setElementOrder directive.
func elementOrder[T any](first, second []T, name func(T) string) []map[string]string {
	seen := map[string]bool{}
	var order []map[string]string
	for _, list := range [][]T{first, second} {
		for _, x := range list {
			if n := name(x); !seen[n] {
				seen[n] = true
				order = append(order, map[string]string{"name": n})
			}
		}
	}
	return order
}

// hasAll reports whether the Pod has containers of all the sidecar's names
// already, in either list: its own envoy.
func hasAll(pod *corev1.Pod, s *Sidecar) bool {
	for _, c := range s.Containers {
		if findContainer(pod, c.Name) == nil {
			return false
		}
	}
	return true
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func containerName(c corev1.Container) string { return c.Name }

func containerNames(cs []corev1.Container) []string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

func volumeNames(vs []corev1.Volume) []string {
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return names
}
