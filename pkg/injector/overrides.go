package injector

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// AnnotationPrefix is the prefix of the annotations a Pod uses to tune its
// own sidecar, and of the status annotation.
const AnnotationPrefix = "sidecar.samplecrd.k8s.io/"

const (
	// RequestAnnotation is the design documents' opt-in: a Pod with it set
	// to "true" gets the sidecar.
	RequestAnnotation = "initializer.kubernetes.io/envoy"
	// RequestLabel is the opt-in by label: the webhook's objectSelector
	// sends the API server's Pods with it to the webhook, and no others,
	// so Pods that do not ask never wait on it (artifacts/injector).
	RequestLabel = AnnotationPrefix + "inject"
	// StatusAnnotation records what was injected (Status, as JSON), and
	// makes a second admission of the same Pod, or of a copy, a no-op.
	StatusAnnotation = AnnotationPrefix + "status"
)

// The per-Pod overrides. Each applies to the template's first container,
// the sidecar proper (later ones are helpers the Pod has no say over).
const (
	// ImageAnnotation replaces the sidecar's image: a valid image
	// reference, e.g. "envoyproxy/envoy:v1.31.0".
	ImageAnnotation = AnnotationPrefix + "image"
	// CPURequestAnnotation, CPULimitAnnotation, MemoryRequestAnnotation
	// and MemoryLimitAnnotation set the sidecar's resources (Istio
	// #21757): positive quantities, e.g. "250m" or "128Mi"; a request may
	// not pass its limit, whether each comes from the Pod or the template.
	CPURequestAnnotation    = AnnotationPrefix + "cpu-request"
	CPULimitAnnotation      = AnnotationPrefix + "cpu-limit"
	MemoryRequestAnnotation = AnnotationPrefix + "memory-request"
	MemoryLimitAnnotation   = AnnotationPrefix + "memory-limit"
	// ExtraArgsAnnotation appends arguments to the sidecar's: a JSON list
	// of strings, e.g. '["--log-level", "debug"]'. JSON, not a
	// space-separated string, so an argument may hold a space.
	ExtraArgsAnnotation = AnnotationPrefix + "extra-args"
	// NativeSidecarAnnotation, "true" or "false", overrides the template's
	// nativeSidecar for this Pod: a Job's Pod asks for "true" so that it
	// can complete, whatever the cluster's default.
	NativeSidecarAnnotation = AnnotationPrefix + "native-sidecar"
)

// resourceAnnotations maps each resource annotation to the field it sets.
var resourceAnnotations = map[string]struct {
	name  corev1.ResourceName
	limit bool
}{
	CPURequestAnnotation:    {corev1.ResourceCPU, false},
	CPULimitAnnotation:      {corev1.ResourceCPU, true},
	MemoryRequestAnnotation: {corev1.ResourceMemory, false},
	MemoryLimitAnnotation:   {corev1.ResourceMemory, true},
}

// applyOverrides changes the sidecar as the Pod's annotations ask, or says
// which annotation is wrong and why. An unknown annotation under our
// prefix is an error too: "cpu-requets" must not be ignored silently.
func applyOverrides(s *Sidecar, annotations map[string]string) error {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // the same Pod always gets the same message
	c := &s.Containers[0]
	for _, key := range keys {
		value := annotations[key]
		var err error
		switch key {
		case StatusAnnotation:
		case ImageAnnotation:
			err = overrideImage(c, value)
		case ExtraArgsAnnotation:
			err = appendArgs(c, value)
		case NativeSidecarAnnotation:
			err = setNative(s, value)
		default:
			r, ok := resourceAnnotations[key]
			if !ok {
				return fmt.Errorf("unknown annotation %s; the sidecar's are %s", key, strings.Join(overrideNames(), ", "))
			}
			err = setResource(c, r.name, r.limit, value)
		}
		if err != nil {
			return fmt.Errorf("annotation %s=%q: %w", key, value, err)
		}
	}
	return checkRequestsWithinLimits(c)
}

func overrideImage(c *corev1.Container, value string) error {
	if _, err := reference.ParseNormalizedNamed(value); err != nil {
		return fmt.Errorf("not an image reference: %w", err)
	}
	c.Image = value
	return nil
}

func appendArgs(c *corev1.Container, value string) error {
	var args []string
	if err := json.Unmarshal([]byte(value), &args); err != nil {
		return fmt.Errorf(`want a JSON list of strings, e.g. ["--log-level", "debug"]: %w`, err)
	}
	c.Args = append(c.Args, args...)
	return nil
}

func setNative(s *Sidecar, value string) error {
	switch value {
	case "true", "false":
		s.NativeSidecar = value == "true"
		return nil
	}
	return fmt.Errorf(`want "true" or "false"`)
}

func setResource(c *corev1.Container, name corev1.ResourceName, limit bool, value string) error {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return fmt.Errorf("not a quantity: %w", err)
	}
	if q.Sign() <= 0 {
		return fmt.Errorf("want a positive quantity")
	}
	list := &c.Resources.Requests
	if limit {
		list = &c.Resources.Limits
	}
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[name] = q
	return nil
}

// checkRequestsWithinLimits refuses what the API server would refuse later
// with a message that does not name the annotation.
func checkRequestsWithinLimits(c *corev1.Container) error {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[name]
		lim, hasLim := c.Resources.Limits[name]
		if hasReq && hasLim && req.Cmp(lim) > 0 {
			return fmt.Errorf("the sidecar's %s request %s would pass its limit %s (annotations %s%s-request and %s%s-limit, or the template)",
				name, req.String(), lim.String(), AnnotationPrefix, name, AnnotationPrefix, name)
		}
	}
	return nil
}

func overrideNames() []string {
	names := []string{ImageAnnotation, ExtraArgsAnnotation, NativeSidecarAnnotation}
	for k := range resourceAnnotations {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
