// Package cases is the table of Network specs that the API must accept and
// refuse. The CRD's unit test (pkg/apis/samplecrd/v1) and the e2e test that
// sends the same specs through a real kube-apiserver both read it, so the two
// prove one contract and cannot drift apart.
package cases

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Spec is a Network spec as a user writes it. It is a map, not a
// NetworkSpec, so that a case can leave a required field out.
type Spec = map[string]any

// Invalid is a spec the API must refuse, and what it must say.
type Invalid struct {
	// Name says what is wrong, as a sentence fragment.
	Name string
	// Old, when set, makes the case an update from Old to Spec; otherwise
	// it is a create.
	Old Spec
	// Spec is the refused spec; nil leaves spec out of the object.
	Spec Spec
	// Field is the path of the field the error names.
	Field string
	// Message is a part of the error's text that tells the user what to do.
	Message string
}

// Update is a change from Old to New that the API must accept.
type Update struct {
	Name     string
	Old, New Spec
}

// InvalidSpecs are the specs the API refuses.
func InvalidSpecs() []Invalid {
	return []Invalid{
		{Name: "cidr is an address, not a CIDR", Spec: Spec{"cidr": "192.168.0.0", "gateway": "192.168.0.1"},
			Field: "spec.cidr", Message: "must be a CIDR such as 192.168.0.0/16"},
		{Name: "cidr is not an address at all", Spec: Spec{"cidr": "my-network", "gateway": "192.168.0.1"},
			Field: "spec.cidr", Message: "must be a CIDR such as 192.168.0.0/16"},
		{Name: "cidr prefix is too long", Spec: Spec{"cidr": "192.168.0.0/33", "gateway": "192.168.0.1"},
			Field: "spec.cidr", Message: "must be a CIDR such as 192.168.0.0/16"},
		{Name: "cidr has host bits set", Spec: Spec{"cidr": "192.168.1.0/16", "gateway": "192.168.0.1"},
			Field: "spec.cidr", Message: "must be in canonical form: no address bits set past the prefix"},
		{Name: "IPv6 cidr is not in canonical text form", Spec: Spec{"cidr": "FD00:10:0::/64", "gateway": "fd00:10::1"},
			Field: "spec.cidr", Message: "IPv6 in lower-case compressed form"},
		{Name: "gateway is not an IP", Spec: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.300"},
			Field: "spec.gateway", Message: "must be an IP address such as 192.168.0.1"},
		{Name: "gateway is outside cidr", Spec: Spec{"cidr": "192.168.0.0/16", "gateway": "10.0.0.1"},
			Field: "spec.gateway", Message: "gateway 10.0.0.1 is not inside cidr 192.168.0.0/16"},
		{Name: "gateway is of the other IP family", Spec: Spec{"cidr": "192.168.0.0/16", "gateway": "fd00::1"},
			Field: "spec.gateway", Message: "gateway fd00::1 is not inside cidr 192.168.0.0/16"},
		{Name: "gateway is the IPv4 network address", Spec: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.0"},
			Field: "spec.gateway", Message: "gateway 192.168.0.0 is the network address of 192.168.0.0/16"},
		{Name: "gateway is the IPv6 network address", Spec: Spec{"cidr": "fd00:10::/64", "gateway": "fd00:10::"},
			Field: "spec.gateway", Message: "gateway fd00:10:: is the network address of fd00:10::/64"},
		{Name: "gateway is the broadcast address of a /16", Spec: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.255.255"},
			Field: "spec.gateway", Message: "gateway 192.168.255.255 is the broadcast address of 192.168.0.0/16"},
		{Name: "gateway is the broadcast address of a /30", Spec: Spec{"cidr": "10.0.0.4/30", "gateway": "10.0.0.7"},
			Field: "spec.gateway", Message: "gateway 10.0.0.7 is the broadcast address of 10.0.0.4/30"},
		{Name: "spec is missing", Spec: nil,
			Field: "spec", Message: "Required value"},
		{Name: "cidr is missing", Spec: Spec{"gateway": "192.168.0.1"},
			Field: "spec.cidr", Message: "Required value"},
		{Name: "gateway is missing", Spec: Spec{"cidr": "192.168.0.0/16"},
			Field: "spec.gateway", Message: "Required value"},
		{Name: "cidr is changed on update",
			Old:   Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.1"},
			Spec:  Spec{"cidr": "10.0.0.0/8", "gateway": "10.0.0.1"},
			Field: "spec.cidr", Message: "is immutable: a Neutron subnet's range cannot change; create a new Network"},
	}
}

// ValidSpecs are specs beyond the examples that the API accepts: the edges
// of the rules above.
func ValidSpecs() map[string]Spec {
	return map[string]Spec{
		"gateway is the last host address of a /30": {"cidr": "10.0.0.4/30", "gateway": "10.0.0.6"},
		"a /31 has no broadcast address":            {"cidr": "10.0.0.0/31", "gateway": "10.0.0.1"},
		"an IPv6 gateway written long-hand":         {"cidr": "fd00:10::/64", "gateway": "fd00:10:0:0::1"},
	}
}

// ValidUpdates are changes the API accepts.
func ValidUpdates() []Update {
	return []Update{
		{Name: "gateway moves inside the same cidr",
			Old: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.1"},
			New: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.254"}},
	}
}

// Examples reads every Network in artifacts/examples below the repository
// root repoRoot, sorted by file name.
func Examples(repoRoot string) ([]*unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(repoRoot, "artifacts", "examples", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", p, err)
		}
		if obj.GetKind() != "Network" {
			continue
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no Network examples under %s", repoRoot)
	}
	return objs, nil
}

// Object makes a Network object with the given name and spec (nil leaves
// spec out).
func Object(name string, spec Spec) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "samplecrd.k8s.io/v1",
		"kind":       "Network",
		"metadata":   map[string]any{"name": name},
	}}
	if spec != nil {
		obj.Object["spec"] = copySpec(spec)
	}
	return obj
}

func copySpec(s Spec) Spec {
	out := make(Spec, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}
