// Package v1 is version v1 of the tutorial.samplecrd.k8s.io API: the
// Greeting of docs/learn/13-build-your-own.md.
//
// The tags below switch k8s.io/code-generator on for the whole package
// (hack/update-codegen.sh): deepcopy functions for every type, and the
// group name the clientset, listers and informers are generated for.
//
// +k8s:deepcopy-gen=package
// +groupName=tutorial.samplecrd.k8s.io
package v1
