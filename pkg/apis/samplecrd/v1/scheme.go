package v1

import "k8s.io/apimachinery/pkg/runtime"

// This file is what a scheme gains from this package: its types
// (register.go) and their conversions to and from v2 (conversion.go). It is
// a file of its own so that conversion.go, which needs the group version,
// and register.go, which declares it, do not refer to each other.

var (
	// SchemeBuilder collects the functions that add this package's types,
	// and their conversions to and from v2, to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes, addConversionFuncs)
	// AddToScheme adds this package's types and conversions to a scheme;
	// the generated clientset calls it for its own scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
