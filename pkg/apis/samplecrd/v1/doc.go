// Package v1 is version v1 of the samplecrd.k8s.io API: the Network
// resource that network-controller keeps equal to an OpenStack Neutron
// network and subnet.
//
// The comment tags below drive k8s.io/code-generator (hack/update-codegen.sh):
// deepcopy functions for every type, and OpenAPI definitions from which the
// apply configurations learn the schema that server-side apply needs.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=samplecrd.k8s.io
package v1
