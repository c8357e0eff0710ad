package importer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestADualStackNetworkIsAV2Manifest: a network of an IPv4 and an IPv6
// subnet, which import skipped while a Network had one subnet, is printed
// as a samplecrd.k8s.io/v2 Network with both in spec.subnets, IPv4 first,
// each saying exactly what Neutron holds; one of two subnets of a family
// is still skipped.
func TestADualStackNetworkIsAV2Manifest(t *testing.T) {
	f := neutronfake.New()
	dual := f.AddNetwork("dual", "made by hand")
	f.AddSubnet(dual, "v6", "", "fd00:30::/64", "fd00:30::1")
	f.AddSubnet(dual, "v4", "", "10.30.0.0/24", "10.30.0.254")
	twoV4 := f.AddNetwork("two-v4", "")
	f.AddSubnet(twoV4, "a", "", "10.31.0.0/24", "10.31.0.1")
	f.AddSubnet(twoV4, "b", "", "10.32.0.0/24", "10.32.0.1")
	cs, err := Candidates(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	var manifests, skipped bytes.Buffer
	if err := Write(&manifests, &skipped, cs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(skipped.String(), "two-v4") || !strings.Contains(skipped.String(), "2 subnets") || strings.Contains(skipped.String(), `"dual"`) {
		t.Errorf("skipped: %q, want two-v4 alone", skipped.String())
	}
	var n samplecrdv2.Network
	if err := yaml.UnmarshalStrict(manifests.Bytes(), &n); err != nil {
		t.Fatalf("%v:\n%s", err, manifests.String())
	}
	if n.APIVersion != "samplecrd.k8s.io/v2" || n.Kind != "Network" || n.Name != "dual" || n.Spec.Adopt == nil || n.Spec.Adopt.NetworkID != dual {
		t.Fatalf("manifest:\n%s", manifests.String())
	}
	if len(n.Spec.Subnets) != 2 || n.Spec.Subnets[0].CIDR != "10.30.0.0/24" || n.Spec.Subnets[1].CIDR != "fd00:30::/64" || n.Spec.Subnets[0].Gateway != "10.30.0.254" {
		t.Fatalf("spec.subnets = %+v, want IPv4 then IPv6, as Neutron holds them", n.Spec.Subnets)
	}
	// What adoption compares: every entry equal to its subnet.
	wants, err := desired.SubnetsOf(n.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Subnets() {
		if s.NetworkID != dual {
			continue
		}
		for _, w := range wants {
			if desired.SameCIDR(w.Key, s.CIDR) {
				if _, diffs := w.Subnet.Update(s); len(diffs) > 0 {
					t.Errorf("subnet %s would differ in %v", s.CIDR, diffs)
				}
			}
		}
	}
}
