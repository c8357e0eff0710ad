package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the Greeting resource; the CRD's
// spec.group and doc.go's +groupName tag say the same.
const GroupName = "tutorial.samplecrd.k8s.io"

// SchemeGroupVersion is the group and version of every type in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// Resource turns an unqualified resource name into a group-qualified one:
// the generated listers name it in their NotFound errors.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that add this package's types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's types to a scheme; the generated
	// clientset calls it for its own scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes tells a scheme which Go type is which kind of the group.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Greeting{}, &GreetingList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
