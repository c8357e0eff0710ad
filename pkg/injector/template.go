// Package injector merges a sidecar, declared once in a ConfigMap, into the
// Pods that ask for it. It is the Envoy "Initializer" of the design
// documents, rebuilt as a mutating admission webhook: Kubernetes removed the
// alpha Initializer API (metadata.initializers, InitializerConfiguration) in
// 1.14, and admission webhooks are how a Pod is changed on its way into the
// API server today.
package injector

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// ConfigKey is the ConfigMap key that holds the template.
const ConfigKey = "config"

// maxRenderedBytes bounds what one rendering may produce: a template is
// trusted (a cluster administrator writes it), but a slip such as
// {{range 1000000000}} must cost one refused Pod, not the webhook.
const maxRenderedBytes = 1 << 20

// Template is the value of the ConfigMap's "config" key: YAML of the
// design documents' layout (containers:, volumes:), which may also be a Go
// text/template over the Pod's metadata (PodData). A template without
// {{ }} is plain YAML and renders to itself, so the design documents'
// ConfigMap works unchanged.
type Template struct {
	text *template.Template
	// Hash identifies the template's text: recorded in the status
	// annotation of every Pod it was injected into.
	Hash string
}

// Sidecar is what a Template renders to for one Pod: what gets merged in.
type Sidecar struct {
	Containers []corev1.Container `json:"containers"`
	Volumes    []corev1.Volume    `json:"volumes,omitempty"`
	// NativeSidecar injects the containers as init containers with
	// restartPolicy: Always, Kubernetes' native sidecars (1.29+): they
	// start before the Pod's own init containers, and they do not keep a
	// Job's Pod from completing, because the kubelet stops them once the
	// main containers have exited.
	NativeSidecar bool `json:"nativeSidecar,omitempty"`
}

// PodData is what a template sees of the Pod. Name is empty for a Pod made
// from a workload's template (the API server names it after admission);
// GenerateName is then set.
type PodData struct {
	Name, GenerateName, Namespace string
	Labels, Annotations           map[string]string
}

// templateFuncs are the only functions a template has beside text/template's
// built-ins, none of which reads the environment, files or the network.
var templateFuncs = template.FuncMap{
	// default returns value, or fallback when value is empty:
	// {{ .Labels.app | default "unknown" }}.
	"default": func(fallback, value any) any {
		if value == nil || reflect.ValueOf(value).IsZero() {
			return fallback
		}
		return value
	},
	// quote makes a YAML double-quoted string of its argument, safe
	// whatever a label or annotation holds.
	"quote": func(value any) string { return strconv.Quote(fmt.Sprint(value)) },
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
}

// ParseTemplate reads a template. It is rendered once, for a Pod with no
// labels or annotations in the namespace "default", so that a template
// that cannot work is refused when it is read (a ConfigMap edit, or
// `inject --template`), not at the first Pod.
func ParseTemplate(data string) (*Template, error) {
	text, err := template.New(ConfigKey).Funcs(templateFuncs).Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the template is not a valid Go template: %w", err)
	}
	sum := sha256.Sum256([]byte(data))
	t := &Template{text: text, Hash: hex.EncodeToString(sum[:8])}
	if _, err := t.Render(PodData{Namespace: "default"}); err != nil {
		return nil, err
	}
	return t, nil
}

// Render fills the template in for one Pod and reads the result, refusing
// unknown fields (a misspelt "volumeMount" would otherwise vanish silently)
// and sidecars that would inject nothing or something unnamed.
func (t *Template) Render(pod PodData) (*Sidecar, error) {
	out := &limitedBuffer{limit: maxRenderedBytes}
	if err := t.text.Execute(out, pod); err != nil {
		return nil, fmt.Errorf("rendering the template: %w", err)
	}
	s := &Sidecar{}
	if err := yaml.UnmarshalStrict(out.Bytes(), s); err != nil {
		return nil, fmt.Errorf("the template is not valid YAML of containers and volumes: %w", err)
	}
	if len(s.Containers) == 0 {
		return nil, errors.New("the template has no containers")
	}
	for i, c := range s.Containers {
		if c.Name == "" || c.Image == "" {
			return nil, fmt.Errorf("template container %d needs a name and an image", i)
		}
	}
	for i, v := range s.Volumes {
		if v.Name == "" {
			return nil, fmt.Errorf("template volume %d needs a name", i)
		}
	}
	return s, nil
}

// TemplateFromConfigMap reads the template from a ConfigMap.
func TemplateFromConfigMap(cm *corev1.ConfigMap) (*Template, error) {
	data, ok := cm.Data[ConfigKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no %q key", cm.Namespace, cm.Name, ConfigKey)
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return t, nil
}

// limitedBuffer is a bytes.Buffer that refuses to grow past limit.
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, fmt.Errorf("the rendered template passes %d bytes", b.limit)
	}
	return b.Buffer.Write(p)
}
