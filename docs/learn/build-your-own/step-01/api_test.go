// Package greeting_test checks step 1 of docs/learn/13-build-your-own.md:
// that the hand-written CRD and the Go types describe the same resource,
// and that the generated clientset's scheme decodes the example.
package greeting_test

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"

	tutorialv1 "example.com/greeting/api/tutorial/v1"
	"example.com/greeting/generated/clientset/versioned/scheme"
)

// TestTheCRDServesTheGoTypes: the CRD's group, version and kind are
// register.go's, and it has the status subresource that UpdateStatus
// needs. A typo here is a controller that lists nothing, forever.
func TestTheCRDServesTheGoTypes(t *testing.T) {
	data, err := os.ReadFile("config/crd/greetings.tutorial.samplecrd.k8s.io.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Group != tutorialv1.GroupName || crd.Name != "greetings."+tutorialv1.GroupName {
		t.Errorf("CRD %s of group %s, want greetings.%s", crd.Name, crd.Spec.Group, tutorialv1.GroupName)
	}
	if crd.Spec.Names.Kind != "Greeting" || crd.Spec.Names.ListKind != "GreetingList" || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("CRD names %+v, scope %s: want the namespaced Greeting and GreetingList", crd.Spec.Names, crd.Spec.Scope)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != tutorialv1.SchemeGroupVersion.Version {
		t.Fatalf("CRD versions %+v, want only %s", crd.Spec.Versions, tutorialv1.SchemeGroupVersion.Version)
	}
	if v := crd.Spec.Versions[0]; v.Subresources == nil || v.Subresources.Status == nil {
		t.Error("the CRD has no status subresource: UpdateStatus would be refused")
	}
}

// TestTheExampleDecodesAsAGreeting: the generated scheme knows the kind,
// and the example sets only fields the type has.
func TestTheExampleDecodesAsAGreeting(t *testing.T) {
	data, err := os.ReadFile("config/example/greeting.yaml")
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	obj, gvk, err := decoder.Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := obj.(*tutorialv1.Greeting)
	if !ok || gvk.GroupVersion() != tutorialv1.SchemeGroupVersion {
		t.Fatalf("decoded a %T of %s, want a Greeting of %s", obj, gvk, tutorialv1.SchemeGroupVersion)
	}
	if g.Spec.Message == "" {
		t.Error("the example has no spec.message")
	}
}
