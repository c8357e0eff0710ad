// Package v2 is version v2 of the samplecrd.k8s.io API: the Network
// resource with one subnet per IP family, so that one Neutron network can
// hold an IPv4 and an IPv6 range (issue 42).
//
// v2 is the hub of the group's conversions and the version the API server
// stores: every other version of Network converts to and from it, and the
// conversion functions live with the spoke,
// pkg/apis/samplecrd/v1/conversion.go. TenantPolicy has no v2; it stays in
// v1.
//
// The comment tags below drive k8s.io/code-generator (hack/update-codegen.sh),
// as in v1.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=samplecrd.k8s.io
package v2
