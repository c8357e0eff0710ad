// Package samplecrd holds what every version of the samplecrd.k8s.io API
// group shares: its name.
package samplecrd

// GroupName is the API group of the Network resource.
const GroupName = "samplecrd.k8s.io"
