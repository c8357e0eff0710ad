// Package importer brings the networks a project already has under
// management without downtime (network-controller import): for each
// network of the credentials' project that a Network can adopt, a Network
// manifest that adopts it, whose spec says what Neutron holds; for each it
// cannot, why. The spec is checked with the code adoption compares with
// (pkg/controller/desired), so a printed manifest is never refused as a mismatch;
// applied in a namespace granted adoption, each Network becomes Ready with
// the same Neutron IDs, and only the two marks are written.
package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Candidate is one network of the project, filtered in by name: the
// Network that adopts it, or, when both are nil, why none can. A network
// of one subnet is a v1 Network (Network), as import has always printed;
// one of an IPv4 and an IPv6 subnet a samplecrd.k8s.io/v2 Network
// (NetworkV2), which v1 cannot say.
type Candidate struct {
	NetworkID, Name string
	Network         *samplecrdv1.Network
	NetworkV2       *samplecrdv2.Network
	Skipped         string
}

// Candidates lists the project's networks whose names match one of names
// (path.Match patterns; every network when names is empty), and their
// subnets, and makes each a Candidate. Neutron is only read.
func Candidates(ctx context.Context, client neutron.Interface, names []string) ([]Candidate, error) {
	for _, pattern := range names {
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, fmt.Errorf("name pattern %q: %w", pattern, err)
		}
	}
	var nets []neutron.Network
	if err := client.ListNetworks(ctx, "", func(page []neutron.Network) error {
		nets = append(nets, page...)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("listing the project's networks: %w", err)
	}
	subnetsOf := map[string][]neutron.Subnet{}
	if err := client.ListSubnets(ctx, "", func(page []neutron.Subnet) error {
		for _, s := range page {
			subnetsOf[s.NetworkID] = append(subnetsOf[s.NetworkID], s)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("listing the project's subnets: %w", err)
	}
	taken := map[string]bool{}
	var out []Candidate
	for _, n := range nets {
		if !matches(n.Name, names) {
			continue
		}
		c := Candidate{NetworkID: n.ID, Name: n.Name}
		subs := subnetsOf[n.ID]
		if len(subs) == 2 && dualStack(subs) {
			if spec, why := adoptableV2(n, subs); why != "" {
				c.Skipped = why
			} else {
				c.NetworkV2 = manifestV2(kubernetesName(n, taken), spec)
			}
			out = append(out, c)
			continue
		}
		spec, why := adoptable(n, subs)
		if why != "" {
			c.Skipped = why
		} else {
			c.Network = manifest(kubernetesName(n, taken), spec)
		}
		out = append(out, c)
	}
	return out, nil
}

func matches(name string, patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// adoptable returns the spec that adopts n with its one subnet, or why n
// cannot be a Network's.
func adoptable(n neutron.Network, subs []neutron.Subnet) (samplecrdv1.NetworkSpec, string) {
	switch {
	case n.External:
		return samplecrdv1.NetworkSpec{}, "an external network (router:external): the cloud's way out, not a namespace's"
	case n.Shared:
		return samplecrdv1.NetworkSpec{}, "shared with every project: a Network would let one namespace change what others use"
	case neutron.IsMark(n.Description):
		return samplecrdv1.NetworkSpec{}, "already marked by a network-controller, of this cluster or another"
	case len(subs) == 0:
		return samplecrdv1.NetworkSpec{}, "no subnet: a Network is a network and its one subnet"
	case len(subs) > 1:
		return samplecrdv1.NetworkSpec{}, fmt.Sprintf("%d subnets: a Network holds at most two, an IPv4 and an IPv6 one", len(subs))
	case neutron.IsMark(subs[0].Description):
		return samplecrdv1.NetworkSpec{}, "its subnet is already marked by a network-controller"
	}
	spec := specOf(n, subs[0])
	want, err := desired.SubnetOf(desired.FromV1(spec), spec.CIDR)
	if err != nil {
		return samplecrdv1.NetworkSpec{}, fmt.Sprintf("its subnet cannot be said as a spec: %q", err.Error())
	}
	if _, diffs := want.Update(subs[0]); len(diffs) > 0 {
		return samplecrdv1.NetworkSpec{}, "its subnet cannot be said as a spec: it would differ in " + strings.Join(diffs, ", ")
	}
	return spec, ""
}

// specOf says what Neutron holds as a spec that adopts it, every field
// explicit: what is left out would mean the controller's default, which
// may not be what the network has.
func specOf(n neutron.Network, s neutron.Subnet) samplecrdv1.NetworkSpec {
	spec := samplecrdv1.NetworkSpec{
		CIDR:            s.CIDR,
		Gateway:         s.GatewayIP,
		NoGateway:       s.GatewayIP == "",
		DNSNameservers:  s.DNSNameservers,
		EnableDHCP:      ptr.To(s.EnableDHCP),
		IPv6AddressMode: samplecrdv1.IPv6Mode(s.IPv6AddressMode),
		IPv6RAMode:      samplecrdv1.IPv6Mode(s.IPv6RAMode),
		Adopt:           &samplecrdv1.Adoption{NetworkID: n.ID},
	}
	for _, r := range s.HostRoutes {
		spec.HostRoutes = append(spec.HostRoutes, samplecrdv1.HostRoute{Destination: r.Destination, NextHop: r.NextHop})
	}
	for _, p := range s.AllocationPools {
		spec.AllocationPools = append(spec.AllocationPools, samplecrdv1.AllocationPool{Start: p.Start, End: p.End})
	}
	if n.MTU > 0 {
		spec.MTU = ptr.To(int32(n.MTU))
	}
	return spec
}

func manifest(name string, spec samplecrdv1.NetworkSpec) *samplecrdv1.Network {
	return &samplecrdv1.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplecrdv1.SchemeGroupVersion.String(), Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}
}

var notInName = regexp.MustCompile(`[^a-z0-9.-]+`)

// kubernetesName makes n's name a Network's (a DNS subdomain), unique
// among those taken: the Neutron name lowercased, other characters as
// dashes; the ID's first part when nothing is left or it is taken.
func kubernetesName(n neutron.Network, taken map[string]bool) string {
	name := strings.Trim(notInName.ReplaceAllString(strings.ToLower(n.Name), "-"), "-.")
	short, _, _ := strings.Cut(n.ID, "-")
	short = strings.Trim(notInName.ReplaceAllString(strings.ToLower(short), "-"), "-.")
	switch {
	case name == "":
		name = "network-" + short
	case taken[name]:
		name = strings.TrimRight(name[:min(len(name), 253-len(short)-1)], "-.") + "-" + short
	}
	name = name[:min(len(name), 253)]
	taken[name] = true
	return name
}

// Write prints the manifests of cs as YAML documents that kubectl apply -f
// takes as they are, and why each other network is skipped to skipped.
//
// What Neutron holds is data, and its names allow newlines: every
// document is the serializer's (sigs.k8s.io/yaml), each separator is
// written here, and the comment above a manifest names only the Neutron
// ID, when it is a UUID. The Neutron name is left out of the manifests:
// the Network's name is made of it, and adoption records it in
// status.adopted. On skipped, Neutron's words are quoted (%q).
func Write(manifests, skipped io.Writer, cs []Candidate) error {
	first := true
	for _, c := range cs {
		var network runtime.Object = c.Network
		if c.NetworkV2 != nil {
			network = c.NetworkV2
		}
		if c.Network == nil && c.NetworkV2 == nil {
			if _, err := fmt.Fprintf(skipped, "skipped Neutron network %q (%q): %s\n", c.NetworkID, c.Name, c.Skipped); err != nil {
				return err
			}
			continue
		}
		data, err := marshal(network)
		if err != nil {
			return fmt.Errorf("Neutron network %q: %w", c.NetworkID, err)
		}
		var b bytes.Buffer
		if !first {
			b.WriteString("---\n")
		}
		first = false
		if isUUID(c.NetworkID) {
			b.WriteString("# Neutron network " + c.NetworkID + "\n")
		}
		b.Write(data)
		if _, err := manifests.Write(b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// marshal is n as YAML, without what the typed object marshals but a
// manifest does not say (a null creationTimestamp, an empty status):
// those are removed from the object, never from the text.
func marshal(n runtime.Object) ([]byte, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
	if err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(obj, "status")
	return yaml.Marshal(obj)
}

// isUUID accepts only the canonical form Neutron gives IDs in (36
// characters, lowercase, hyphenated): nothing else is printed in a
// comment, where YAML does not quote.
func isUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
