package injector

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
)

// ConfigMapSource reads the template from a ConfigMap through an
// informer's lister, so an edit of the ConfigMap changes the next
// injection without a restart, and a request costs no API call. The parsed
// template is kept until the ConfigMap's resourceVersion changes.
type ConfigMapSource struct {
	Lister          listerscorev1.ConfigMapLister
	Namespace, Name string

	mu      sync.Mutex
	version string
	tmpl    *Template
	err     error
}

// Template returns the current template, or why there is none.
func (s *ConfigMapSource) Template() (*Template, error) {
	cm, err := s.Lister.ConfigMaps(s.Namespace).Get(s.Name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("the template ConfigMap %s/%s does not exist", s.Namespace, s.Name)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cm.ResourceVersion != s.version {
		s.tmpl, s.err = TemplateFromConfigMap(cm)
		s.version = cm.ResourceVersion
	}
	return s.tmpl, s.err
}
