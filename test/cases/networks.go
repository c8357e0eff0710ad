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
	"strings"

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
		{Name: "the ConfigMap to publish into has a name no ConfigMap can have", Spec: Spec{"cidr": "192.168.0.0/16", "writeConfigMapToRef": map[string]any{"name": "Net_Info"}},
			Field: "spec.writeConfigMapToRef.name", Message: "should match"},
		{Name: "the ConfigMap to publish into has no name", Spec: Spec{"cidr": "192.168.0.0/16", "writeConfigMapToRef": map[string]any{}},
			Field: "spec.writeConfigMapToRef.name", Message: "Required value"},
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
		{Name: "neither cidr nor subnetPool", Spec: Spec{"gateway": "192.168.0.1"},
			Field: "spec", Message: "set exactly one of cidr (a range you choose) and subnetPool"},
		{Name: "both cidr and subnetPool", Spec: Spec{"cidr": v4, "subnetPool": "pool"},
			Field: "spec", Message: "set exactly one of cidr"},
		{Name: "prefixLength without subnetPool", Spec: Spec{"cidr": v4, "prefixLength": int64(24)},
			Field: "spec.prefixLength", Message: "prefixLength is only for a range allocated from subnetPool"},
		{Name: "a gateway with subnetPool", Spec: Spec{"subnetPool": "pool", "gateway": "10.0.0.1"},
			Field: "spec.subnetPool", Message: "gateway and allocationPools need a known range"},
		{Name: "prefixLength past 128", Spec: Spec{"subnetPool": "pool", "prefixLength": int64(129)},
			Field: "spec.prefixLength", Message: "should be less than or equal to 128"},
		{Name: "subnetPool is changed on update",
			Old:   Spec{"subnetPool": "pool-a", "prefixLength": int64(24)},
			Spec:  Spec{"subnetPool": "pool-b", "prefixLength": int64(24)},
			Field: "spec.subnetPool", Message: "cidr, subnetPool and prefixLength are fixed at creation"},
		{Name: "cidr replaced by subnetPool on update",
			Old:   Spec{"cidr": v4},
			Spec:  Spec{"subnetPool": "pool"},
			Field: "spec.subnetPool", Message: "cidr, subnetPool and prefixLength are fixed at creation"},
		{Name: "gateway and noGateway together", Spec: Spec{"cidr": v4, "gateway": "192.168.0.1", "noGateway": true},
			Field: "spec.noGateway", Message: "gateway and noGateway exclude each other"},
		{Name: "a DNS server is not an address", Spec: Spec{"cidr": v4, "dnsNameservers": []any{"dns.example.com"}},
			Field: "spec.dnsNameservers[0]", Message: "must be an IP address"},
		{Name: "a DNS server is not in canonical form", Spec: Spec{"cidr": v6, "dnsNameservers": []any{"FD00:10::53"}},
			Field: "spec.dnsNameservers[0]", Message: "must be in canonical form"},
		{Name: "a DNS server is named twice", Spec: Spec{"cidr": v4, "dnsNameservers": []any{"192.168.0.53", "192.168.0.53"}},
			Field: "spec.dnsNameservers", Message: "must not name one server twice"},
		{Name: "six DNS servers, one more than Neutron allows", Spec: Spec{"cidr": v4, "dnsNameservers": []any{
			"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"}},
			Field: "spec.dnsNameservers", Message: "must have at most 5 items"},
		{Name: "a DNS server of the other family", Spec: Spec{"cidr": v4, "dnsNameservers": []any{"fd00::53"}},
			Field: "spec.dnsNameservers", Message: "dnsNameservers must be addresses of the IP family of cidr 192.168.0.0/16"},
		{Name: "a host route's destination is not canonical", Spec: Spec{"cidr": v4,
			"hostRoutes": []any{map[string]any{"destination": "10.1.2.3/8", "nextHop": "192.168.0.254"}}},
			Field: "spec.hostRoutes[0].destination", Message: "must be in canonical form, as Neutron requires"},
		{Name: "a host route without a next hop", Spec: Spec{"cidr": v4,
			"hostRoutes": []any{map[string]any{"destination": "10.0.0.0/8"}}},
			Field: "spec.hostRoutes[0].nextHop", Message: "Required value"},
		{Name: "a host route twice", Spec: Spec{"cidr": v4, "hostRoutes": []any{
			map[string]any{"destination": "10.0.0.0/8", "nextHop": "192.168.0.254"},
			map[string]any{"destination": "10.0.0.0/8", "nextHop": "192.168.0.254"}}},
			Field: "spec.hostRoutes", Message: "must not repeat a route"},
		{Name: "21 host routes, one more than Neutron allows", Spec: Spec{"cidr": v4, "hostRoutes": routes(21)},
			Field: "spec.hostRoutes", Message: "must have at most 20 items"},
		{Name: "a host route of the other family", Spec: Spec{"cidr": v4,
			"hostRoutes": []any{map[string]any{"destination": "fd00:20::/64", "nextHop": "fd00::1"}}},
			Field: "spec.hostRoutes", Message: "hostRoutes must have destinations and next hops of the IP family of cidr"},
		{Name: "an allocation pool ends outside cidr", Spec: Spec{"cidr": v4,
			"allocationPools": []any{map[string]any{"start": "192.168.0.10", "end": "192.169.0.10"}}},
			Field: "spec.allocationPools", Message: "allocationPools must lie inside cidr 192.168.0.0/16"},
		{Name: "an allocation pool's start is not an address", Spec: Spec{"cidr": v4,
			"allocationPools": []any{map[string]any{"start": "first", "end": "192.168.0.10"}}},
			Field: "spec.allocationPools[0].start", Message: "must be an IP address"},
		{Name: "an IPv6 mode on an IPv4 cidr", Spec: Spec{"cidr": v4, "ipv6AddressMode": "slaac"},
			Field: "spec.cidr", Message: "ipv6AddressMode and ipv6RAMode are only for an IPv6 cidr"},
		{Name: "an IPv6 mode Neutron does not know", Spec: Spec{"cidr": v6, "ipv6RAMode": "radvd"},
			Field: "spec.ipv6RAMode", Message: "Unsupported value"},
		{Name: "two different IPv6 modes", Spec: Spec{"cidr": v6, "ipv6AddressMode": "slaac", "ipv6RAMode": "dhcpv6-stateful"},
			Field: "spec.ipv6RAMode", Message: "must be equal when both are set"},
		{Name: "SLAAC on a /80", Spec: Spec{"cidr": "fd00:10::/80", "ipv6AddressMode": "slaac"},
			Field: "spec.cidr", Message: "slaac and dhcpv6-stateless need a /64 cidr"},
		{Name: "DHCP off with an IPv6 mode", Spec: Spec{"cidr": v6, "ipv6AddressMode": "dhcpv6-stateful", "enableDHCP": false},
			Field: "spec.enableDHCP", Message: "enableDHCP cannot be false on a subnet with ipv6AddressMode"},
		{Name: "an MTU below IPv4's minimum", Spec: Spec{"cidr": v4, "mtu": int64(67)},
			Field: "spec.mtu", Message: "should be greater than or equal to 68"},
		{Name: "an MTU below IPv6's minimum", Spec: Spec{"cidr": v6, "mtu": int64(1279)},
			Field: "spec.mtu", Message: "must be at least 1280 for an IPv6 cidr"},
		{Name: "a deletion policy that does not exist", Spec: Spec{"cidr": v4, "deletionPolicy": "Keep"},
			Field: "spec.deletionPolicy", Message: `supported values: "Delete", "Orphan"`},
		{Name: "adopt names no network", Spec: Spec{"cidr": v4, "adopt": map[string]any{}},
			Field: "spec.adopt.networkID", Message: "Required value"},
		{Name: "adopt names a network by name, not ID", Spec: Spec{"cidr": v4, "adopt": map[string]any{"networkID": "public"}},
			Field: "spec.adopt.networkID", Message: "should match"},
		{Name: "adopt with a pool, not a cidr", Spec: Spec{"subnetPool": "pool", "adopt": map[string]any{"networkID": "6f0b9f6e-6a3c-4bb0-9c55-1f2e3d4c5b6a"}},
			Field: "spec.adopt", Message: "adopt needs cidr"},
		{Name: "adopt is added on update",
			Old:   Spec{"cidr": v4},
			Spec:  Spec{"cidr": v4, "adopt": map[string]any{"networkID": "6f0b9f6e-6a3c-4bb0-9c55-1f2e3d4c5b6a"}},
			Field: "spec.adopt", Message: "adopt is fixed at creation"},
		{Name: "an IPv6 mode is added on update",
			Old:   Spec{"cidr": v6},
			Spec:  Spec{"cidr": v6, "ipv6AddressMode": "slaac"},
			Field: "spec.ipv6AddressMode", Message: "ipv6AddressMode and ipv6RAMode are immutable"},
		{Name: "an IPv6 mode is changed on update",
			Old:   Spec{"cidr": v6, "ipv6RAMode": "slaac"},
			Spec:  Spec{"cidr": v6, "ipv6RAMode": "dhcpv6-stateless"},
			Field: "spec.ipv6AddressMode", Message: "ipv6AddressMode and ipv6RAMode are immutable"},
		{Name: "cidr is changed on update",
			Old:   Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.1"},
			Spec:  Spec{"cidr": "10.0.0.0/8", "gateway": "10.0.0.1"},
			Field: "spec.cidr", Message: "is immutable: a Neutron subnet's range cannot change; create a new Network"},
		{Name: "credentials named in another namespace", Spec: Spec{"cidr": v4, "cloudCredentialsRef": map[string]any{"secretName": "team-b/cloud", "cloudName": "team"}},
			Field: "spec.cloudCredentialsRef.secretName", Message: "should match"},
		{Name: "credentials without a cloud", Spec: Spec{"cidr": v4, "cloudCredentialsRef": map[string]any{"secretName": "cloud"}},
			Field: "spec.cloudCredentialsRef.cloudName", Message: "Required value"},
		{Name: "credentials changed on update",
			Old:   Spec{"cidr": v4, "cloudCredentialsRef": map[string]any{"secretName": "cloud", "cloudName": "team"}},
			Spec:  Spec{"cidr": v4, "cloudCredentialsRef": map[string]any{"secretName": "cloud", "cloudName": "other"}},
			Field: "spec.cloudCredentialsRef", Message: "cloudCredentialsRef is fixed at creation"},
		{Name: "credentials taken away on update",
			Old:   Spec{"cidr": v4, "cloudCredentialsRef": map[string]any{"secretName": "cloud", "cloudName": "team"}},
			Spec:  Spec{"cidr": v4},
			Field: "spec.cloudCredentialsRef", Message: "cloudCredentialsRef is fixed at creation"},
		{Name: "a router named by both name and ID", Spec: Spec{"cidr": v4, "router": map[string]any{"name": "edge", "id": routerID}},
			Field: "spec.router", Message: "set exactly one of name and id (an existing router) and externalNetwork"},
		{Name: "a router named by neither", Spec: Spec{"cidr": v4, "router": map[string]any{}},
			Field: "spec.router", Message: "set exactly one of name and id (an existing router) and externalNetwork"},
		{Name: "a router both existing and of its own", Spec: Spec{"cidr": v4, "router": map[string]any{"name": "edge", "externalNetwork": "public"}},
			Field: "spec.router", Message: "set exactly one of name and id (an existing router) and externalNetwork"},
		{Name: "a router ID that is not a UUID", Spec: Spec{"cidr": v4, "router": map[string]any{"id": "edge"}},
			Field: "spec.router.id", Message: "should match"},
		{Name: "a router without a gateway", Spec: Spec{"cidr": v4, "noGateway": true, "router": map[string]any{"name": "edge"}},
			Field: "spec.router", Message: "router needs a gateway"},
		{Name: "the gateway moved while a router is attached on it",
			Old:   Spec{"cidr": v4, "gateway": "192.168.0.1", "router": map[string]any{"name": "edge"}},
			Spec:  Spec{"cidr": v4, "gateway": "192.168.0.254", "router": map[string]any{"name": "other"}},
			Field: "spec.gateway", Message: "remove router, change gateway, then set router again"},
	}
}

// routerID is a router's ID in the router cases.
const routerID = "0b6f3a1e-2d4c-4e5f-8a9b-1c2d3e4f5a6b"

// ValidSpecs are specs beyond the examples that the API accepts: the edges
// of the rules above.
func ValidSpecs() map[string]Spec {
	return map[string]Spec{
		"gateway is the last host address of a /30":      {"cidr": "10.0.0.4/30", "gateway": "10.0.0.6"},
		"a /31 has no broadcast address":                 {"cidr": "10.0.0.0/31", "gateway": "10.0.0.1"},
		"an IPv6 gateway written long-hand":              {"cidr": "fd00:10::/64", "gateway": "fd00:10:0:0::1"},
		"no gateway field: the first host":               {"cidr": v4},
		"no gateway at all":                              {"cidr": v4, "noGateway": true},
		"publishes into a ConfigMap of the longest name": {"cidr": v4, "writeConfigMapToRef": map[string]any{"name": strings.Repeat("a", 253)}},
		"noGateway false beside a gateway":               {"cidr": v4, "gateway": "192.168.0.1", "noGateway": false},
		"every option, IPv4": {"cidr": v4, "gateway": "192.168.0.1", "mtu": int64(1400), "enableDHCP": true,
			"dnsNameservers":  []any{"192.168.0.53", "192.168.0.54", "192.168.0.55", "192.168.0.56", "192.168.0.57"},
			"hostRoutes":      routes(20),
			"allocationPools": []any{map[string]any{"start": "192.168.0.10", "end": "192.168.0.99"}, map[string]any{"start": "192.168.1.0", "end": "192.168.1.255"}}},
		"every option, IPv6": {"cidr": v6, "gateway": "fd00:10::1", "mtu": int64(1280),
			"ipv6AddressMode": "dhcpv6-stateful", "ipv6RAMode": "dhcpv6-stateful",
			"dnsNameservers":  []any{"fd00:10::53"},
			"hostRoutes":      []any{map[string]any{"destination": "fd00:20::/64", "nextHop": "fd00:10::fe"}},
			"allocationPools": []any{map[string]any{"start": "fd00:10::100", "end": "fd00:10::1ff"}}},
		"SLAAC on a /64 with only the RA mode": {"cidr": v6, "ipv6RAMode": "slaac"},
		"DHCP off":                             {"cidr": v4, "enableDHCP": false},
		"one next hop for two destinations": {"cidr": v4, "hostRoutes": []any{
			map[string]any{"destination": "10.0.0.0/8", "nextHop": "192.168.0.254"},
			map[string]any{"destination": "172.16.0.0/12", "nextHop": "192.168.0.254"}}},
		"32 allocation pools":             {"cidr": v4, "allocationPools": pools(32)},
		"deletionPolicy Orphan":           {"cidr": v4, "deletionPolicy": "Orphan"},
		"a range from a pool":             {"subnetPool": "pool", "prefixLength": int64(26), "dnsNameservers": []any{"10.0.0.53"}},
		"a range from a pool, no gateway": {"subnetPool": "6f0b9f6e-6a3c-4bb0-9c55-1f2e3d4c5b6a", "noGateway": true},
		"adopt a network by ID":           {"cidr": v4, "adopt": map[string]any{"networkID": "6f0b9f6e-6a3c-4bb0-9c55-1f2e3d4c5b6a"}},
		"credentials of the namespace, the longest Secret name": {"cidr": v4,
			"cloudCredentialsRef": map[string]any{"secretName": longestSecretName(), "cloudName": "team"}},
		"a router by ID":               {"cidr": v4, "router": map[string]any{"id": routerID}},
		"a router by the longest name": {"cidr": v4, "router": map[string]any{"name": strings.Repeat("r", 255)}},
		"an IPv6 network on a router":  {"cidr": v6, "ipv6AddressMode": "slaac", "ipv6RAMode": "slaac", "router": map[string]any{"name": "edge"}},
	}
}

// The cidrs most cases use.
const (
	v4 = "192.168.0.0/16"
	v6 = "fd00:10::/64"
)

// routes returns n distinct IPv4 host routes through 192.168.0.254.
func routes(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"destination": fmt.Sprintf("10.%d.0.0/16", i), "nextHop": "192.168.0.254"}
	}
	return out
}

// pools returns n disjoint IPv4 allocation pools inside v4.
func pools(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"start": fmt.Sprintf("192.168.%d.10", i+1), "end": fmt.Sprintf("192.168.%d.20", i+1)}
	}
	return out
}

// ValidUpdates are changes the API accepts.
func ValidUpdates() []Update {
	return []Update{
		{Name: "gateway moves inside the same cidr",
			Old: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.1"},
			New: Spec{"cidr": "192.168.0.0/16", "gateway": "192.168.0.254"}},
		{Name: "every mutable option changes",
			Old: Spec{"cidr": v4, "gateway": "192.168.0.1", "mtu": int64(1400), "dnsNameservers": []any{"192.168.0.53"}},
			New: Spec{"cidr": v4, "noGateway": true, "mtu": int64(1300), "enableDHCP": false,
				"dnsNameservers": []any{"192.168.0.54"}, "hostRoutes": routes(2), "allocationPools": pools(1)}},
		{Name: "deletionPolicy changes",
			Old: Spec{"cidr": v4, "deletionPolicy": "Delete"},
			New: Spec{"cidr": v4, "deletionPolicy": "Orphan"}},
		{Name: "a router set, and the gateway moved, in one update",
			Old: Spec{"cidr": v4, "gateway": "192.168.0.1"},
			New: Spec{"cidr": v4, "gateway": "192.168.0.254", "router": map[string]any{"name": "edge"}}},
		{Name: "a router removed, and the gateway moved, in one update",
			Old: Spec{"cidr": v4, "gateway": "192.168.0.1", "router": map[string]any{"name": "edge"}},
			New: Spec{"cidr": v4, "gateway": "192.168.0.254"}},
		{Name: "the subnet moved to another router",
			Old: Spec{"cidr": v4, "gateway": "192.168.0.1", "router": map[string]any{"name": "edge"}},
			New: Spec{"cidr": v4, "gateway": "192.168.0.1", "router": map[string]any{"id": routerID}}},
		{Name: "IPv6 modes kept on update",
			Old: Spec{"cidr": v6, "ipv6AddressMode": "slaac"},
			New: Spec{"cidr": v6, "ipv6AddressMode": "slaac", "dnsNameservers": []any{"fd00:10::53"}}},
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

// longestSecretName is a Secret name of 253 characters, the longest a DNS
// subdomain, and so a Secret's name, may be.
func longestSecretName() string {
	label := strings.Repeat("a", 63)
	return label + "." + label + "." + label + "." + strings.Repeat("a", 61)
}
