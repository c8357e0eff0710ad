// Package injector merges a sidecar, declared once in a ConfigMap, into the
// Pods that ask for it. It is the Envoy "Initializer" of the design
// documents, rebuilt as a mutating admission webhook: Kubernetes removed the
// alpha Initializer API (metadata.initializers, InitializerConfiguration) in
// 1.14, and admission webhooks are how a Pod is changed on its way into the
// API server today.
package injector

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Template is what gets merged into a Pod: the value of the ConfigMap's
// "config" key, with the layout of the design documents.
type Template struct {
	Containers []corev1.Container `json:"containers"`
	Volumes    []corev1.Volume    `json:"volumes,omitempty"`
}

// ConfigKey is the ConfigMap key that holds the template.
const ConfigKey = "config"

// ParseTemplate reads a template, refusing unknown fields (a misspelt
// "volumeMount" would otherwise vanish silently) and templates that would
// inject nothing or something unnamed.
func ParseTemplate(data string) (*Template, error) {
	t := &Template{}
	if err := yaml.UnmarshalStrict([]byte(data), t); err != nil {
		return nil, fmt.Errorf("the template is not valid YAML of containers and volumes: %w", err)
	}
	if len(t.Containers) == 0 {
		return nil, errors.New("the template has no containers")
	}
	for i, c := range t.Containers {
		if c.Name == "" || c.Image == "" {
			return nil, fmt.Errorf("template container %d needs a name and an image", i)
		}
	}
	for i, v := range t.Volumes {
		if v.Name == "" {
			return nil, fmt.Errorf("template volume %d needs a name", i)
		}
	}
	return t, nil
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
