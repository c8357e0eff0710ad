package desired

import (
	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// FromV1 is a v1 spec's one subnet as a v2 subnet spec, by the scheme's own
// conversion (a v1 Network is a v2 Network with one subnet).
//
// It is transitional: it serves the callers that still read v1 Networks
// while the controller moves to v2 (issue 42), and goes with the last one.
func FromV1(spec samplecrdv1.NetworkSpec) samplecrdv2.SubnetSpec {
	var out samplecrdv2.Network
	// The conversion fails only on a malformed annotation; there is none
	// on a Network made of a spec alone.
	_ = samplecrdv1.Convert_v1_Network_To_v2_Network(&samplecrdv1.Network{Spec: spec}, &out, nil)
	return out.Spec.Subnets[0]
}
