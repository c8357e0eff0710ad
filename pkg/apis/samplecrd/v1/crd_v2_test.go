package v1_test

import (
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/generated/openapi"
)

// This file tests version v2 of the Network CRD the way crd_test.go tests
// v1: the schema against the Go types, and the schema's and CEL's
// validation as kube-apiserver runs it.

// TestCRDVersions: v2 is stored, v1 still served; the file names the
// conversion webhook's in-cluster Service, with no caBundle (the cluster's
// own, set by a step and left alone by a re-apply), so that no install of
// it converts by renaming apiVersion: a v1 request is refused until the
// webhook answers.
func TestCRDVersions(t *testing.T) {
	crd := loadCRD(t)
	got := map[string][2]bool{}
	for _, v := range crd.Spec.Versions {
		got[v.Name] = [2]bool{v.Served, v.Storage}
	}
	if want := map[string][2]bool{"v1": {true, false}, "v2": {true, true}}; len(got) != 2 || got["v1"] != want["v1"] || got["v2"] != want["v2"] {
		t.Errorf("versions (served, storage) %v, want %v", got, want)
	}
	data, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	var raw apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	c := raw.Spec.Conversion
	if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil ||
		c.Webhook.ClientConfig.Service == nil || c.Webhook.ClientConfig.URL != nil || len(c.Webhook.ClientConfig.CABundle) != 0 {
		t.Errorf("the file's spec.conversion is %+v: it must name the webhook's Service, with no url and no caBundle", c)
	} else if s := c.Webhook.ClientConfig.Service; s.Namespace != "network-controller-system" || s.Name != "network-controller-conversion" || s.Path == nil || *s.Path != "/convert" {
		t.Errorf("the file's conversion Service is %+v, want network-controller-system/network-controller-conversion at /convert (artifacts/deploy's)", s)
	}
}

// TestV2SchemaMatchesGoTypes is TestSchemaMatchesGoTypes for v2.
func TestV2SchemaMatchesGoTypes(t *testing.T) {
	defs := openapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef(name) })
	goSchema := defs["github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2.Network"].Schema
	compareSchemas(t, "NetworkV2", versionSchema(loadCRD(t), "v2"), &goSchema, defs)
}

// v2Validator validates v2 Networks as kube-apiserver does: defaults
// first (spec.subnets[].cidr defaults to ""), then the schema, then CEL.
type v2Validator struct {
	*networkValidator
}

func newV2Validator(t *testing.T) *v2Validator {
	t.Helper()
	schema := versionSchema(loadCRD(t), "v2")
	sv, _, err := apiservervalidation.NewSchemaValidator(schema)
	if err != nil {
		t.Fatal(err)
	}
	structural, err := structuralschema.NewStructural(schema)
	if err != nil {
		t.Fatal(err)
	}
	return &v2Validator{&networkValidator{schema: sv, structural: structural, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}}
}

func (v *v2Validator) validateSpecs(t *testing.T, newSpec, oldSpec string) field.ErrorList {
	t.Helper()
	obj := v2Object(t, newSpec)
	structuraldefaulting.Default(obj, v.structural)
	var old map[string]any
	if oldSpec != "" {
		old = v2Object(t, oldSpec)
		structuraldefaulting.Default(old, v.structural)
	}
	// kube-apiserver also refuses a list-map with a key twice.
	errs := listtype.ValidateListSetsAndMaps(nil, v.structural, obj)
	return append(errs, v.validate(t, obj, old)...)
}

func v2Object(t *testing.T, specYAML string) map[string]any {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte("apiVersion: samplecrd.k8s.io/v2\nkind: Network\nmetadata: {name: n}\nspec: " + specYAML))
	if err != nil {
		t.Fatal(err)
	}
	// As the API server decodes: whole numbers are int64, not float64.
	obj := map[string]any{}
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestV2ValidSpecs: what v2 accepts, at its limits.
func TestV2ValidSpecs(t *testing.T) {
	v := newV2Validator(t)
	for _, tc := range []struct{ name, spec, old string }{
		{"one IPv4 subnet", "{subnets: [{cidr: 10.0.0.0/24, gateway: 10.0.0.1}]}", ""},
		{"dual stack", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', ipv6AddressMode: slaac, ipv6RAMode: slaac}], mtu: 1280}", ""},
		{"IPv6 first", "{subnets: [{cidr: 'fd00:10::/64'}, {cidr: 10.0.0.0/24}]}", ""},
		{"the longest CIDRs and gateways of both families", "{subnets: [{cidr: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120', gateway: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe'}, {cidr: 255.255.255.0/24, gateway: 255.255.255.254}]}", ""},
		{"an IPv6 /128 and an IPv4 /32, without gateways", "{subnets: [{cidr: 'fd00:10::1/128', noGateway: true}, {cidr: 10.0.0.1/32, noGateway: true}]}", ""},
		{"the longest IPv6 /64 gateway", "{subnets: [{cidr: 'fd00:ffff:ffff:ffff::/64', gateway: 'fd00:ffff:ffff:ffff:ffff:ffff:ffff:fffe'}]}", ""},
		{"a pool subnet", "{subnets: [{subnetPool: pool4, prefixLength: 24}]}", ""},
		{"a pool subnet and a range", "{subnets: [{subnetPool: pool4}, {cidr: 'fd00:10::/64'}]}", ""},
		{"adding an IPv6 subnet", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64'}]}", "{subnets: [{cidr: 10.0.0.0/24}]}"},
		{"removing a subnet", "{subnets: [{cidr: 10.0.0.0/24}]}", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64'}]}"},
		{"replacing a range (remove and add)", "{subnets: [{cidr: 10.1.0.0/24}]}", "{subnets: [{cidr: 10.0.0.0/24}]}"},
		{"replacing an IPv6 subnet with other modes", "{subnets: [{cidr: 'fd00:20::/64', ipv6AddressMode: dhcpv6-stateful}]}", "{subnets: [{cidr: 'fd00:10::/64', ipv6AddressMode: slaac}]}"},
		{"a new subnet's gateway while a router is attached", "{router: {name: r}, subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', gateway: 'fd00:10::9'}]}", "{router: {name: r}, subnets: [{cidr: 10.0.0.0/24}]}"},
		{"a gateway change without a router", "{subnets: [{cidr: 10.0.0.0/24, gateway: 10.0.0.9}]}", "{subnets: [{cidr: 10.0.0.0/24, gateway: 10.0.0.1}]}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if errs := v.validateSpecs(t, tc.spec, tc.old); len(errs) > 0 {
				t.Errorf("refused: %v", errs.ToAggregate())
			}
		})
	}
}

// TestV2InvalidSpecs: what v2 refuses, one message per mistake.
func TestV2InvalidSpecs(t *testing.T) {
	v := newV2Validator(t)
	for _, tc := range []struct{ name, spec, old, field, message string }{
		{"no subnet", "{subnets: []}", "", "spec.subnets", "should have at least 1 items"},
		{"three subnets", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64'}, {subnetPool: p}]}", "", "spec.subnets", "must have at most 2 items"},
		{"two IPv4 subnets", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 10.1.0.0/24}]}", "", "spec.subnets", "at most one subnet per IP family"},
		{"two IPv6 subnets, a /64 and a /128", "{subnets: [{cidr: 'fd00:10::/64'}, {cidr: 'fd00:20::1/128'}]}", "", "spec.subnets", "at most one subnet per IP family"},
		{"overlapping IPv4 subnets", "{subnets: [{cidr: 10.0.0.0/8}, {cidr: 10.1.0.0/16}]}", "", "spec.subnets", "must not overlap"},
		{"an IPv6 /128 inside the /64", "{subnets: [{cidr: 'fd00:10::/64'}, {cidr: 'fd00:10::1/128'}]}", "", "spec.subnets", "must not overlap"},
		{"one range twice", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 10.0.0.0/24}]}", "", "spec.subnets[1]", "Duplicate value"},
		{"two pool subnets", "{subnets: [{subnetPool: a}, {subnetPool: b}]}", "", "spec.subnets[1]", "Duplicate value"},
		{"not a CIDR", "{subnets: [{cidr: 10.0.0.0/33}]}", "", "spec.subnets[0].cidr", "must be a CIDR"},
		{"not canonical", "{subnets: [{cidr: 'FD00:10::/64'}]}", "", "spec.subnets[0].cidr", "canonical form"},
		{"neither cidr nor pool", "{subnets: [{gateway: 10.0.0.1}]}", "", "spec.subnets[0]", "set exactly one of cidr"},
		{"an IPv4 gateway outside its cidr", "{subnets: [{cidr: 10.0.0.0/24, gateway: 10.0.1.1}]}", "", "spec.subnets[0].gateway", "is not inside cidr"},
		{"an IPv6 gateway outside its /64, next to the IPv4 subnet", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', gateway: 'fd00:11::1'}]}", "", "spec.subnets[1].gateway", "is not inside cidr"},
		{"the gateway of the other family's subnet", "{subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', gateway: 10.0.0.1}]}", "", "spec.subnets[1].gateway", "is not inside cidr"},
		{"a /128 whose gateway is not its address", "{subnets: [{cidr: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', gateway: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe'}]}", "", "spec.subnets[0].gateway", "is not inside cidr"},
		{"the broadcast address", "{subnets: [{cidr: 10.0.0.0/24, gateway: 10.0.0.255}]}", "", "spec.subnets[0].gateway", "broadcast address"},
		{"IPv6 modes on IPv4", "{subnets: [{cidr: 10.0.0.0/24, ipv6AddressMode: slaac}]}", "", "spec.subnets[0].cidr", "only for an IPv6 cidr"},
		{"DNS of the other family", "{subnets: [{cidr: 'fd00:10::/64', dnsNameservers: [10.0.0.53]}]}", "", "spec.subnets[0].dnsNameservers", "IP family"},
		{"an MTU below IPv6's minimum", "{mtu: 1279, subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64'}]}", "", "spec.mtu", "at least 1280"},
		{"a router without a gateway", "{router: {name: r}, subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', noGateway: true}]}", "", "spec.router", "needs a gateway"},
		{"adopt with a pool subnet", "{adopt: {networkID: 0b9c8a8e-1f1e-4c8c-9d3e-0a1b2c3d4e5f}, subnets: [{subnetPool: p}]}", "", "spec.adopt", "adopt needs a cidr"},
		{"a subnet's IPv6 mode changed", "{subnets: [{cidr: 'fd00:10::/64', ipv6AddressMode: dhcpv6-stateful}]}", "{subnets: [{cidr: 'fd00:10::/64', ipv6AddressMode: slaac}]}", "spec.subnets[0].ipv6AddressMode", "immutable"},
		{"a pool changed", "{subnets: [{subnetPool: b}]}", "{subnets: [{subnetPool: a}]}", "spec.subnets[0].subnetPool", "fixed at creation"},
		{"a gateway moved under a router", "{router: {name: r}, subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', gateway: 'fd00:10::9'}]}", "{router: {name: r}, subnets: [{cidr: 10.0.0.0/24}, {cidr: 'fd00:10::/64', gateway: 'fd00:10::1'}]}", "spec.subnets", "gateway is fixed while a router"},
		{"credentials changed", "{cloudCredentialsRef: {secretName: b, cloudName: c}, subnets: [{cidr: 10.0.0.0/24}]}", "{cloudCredentialsRef: {secretName: a, cloudName: c}, subnets: [{cidr: 10.0.0.0/24}]}", "spec.cloudCredentialsRef", "fixed at creation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := v.validateSpecs(t, tc.spec, tc.old)
			if len(errs) == 0 {
				t.Fatalf("accepted; want an error on %s saying %q", tc.field, tc.message)
			}
			if len(errs) > 1 {
				t.Errorf("%d errors for one mistake, want 1: %v", len(errs), errs.ToAggregate())
			}
			for _, e := range errs {
				if e.Field == tc.field && strings.Contains(e.Error(), tc.message) {
					return
				}
			}
			t.Errorf("errors %v; want one on %s saying %q", errs.ToAggregate(), tc.field, tc.message)
		})
	}
}

// TestV2StatusPlaceIsFixed: status.place keeps v1's rule.
func TestV2StatusPlaceIsFixed(t *testing.T) {
	v := newV2Validator(t)
	withPlace := func(project string) map[string]any {
		obj := v2Object(t, "{subnets: [{cidr: 10.0.0.0/24}]}")
		obj["status"] = map[string]any{"place": map[string]any{"authURL": "http://keystone", "projectID": project},
			"subnets": []any{map[string]any{"cidr": "10.0.0.0/24", "usedIPs": int64(3), "freeIPs": "18446744073709551614"}}}
		structuraldefaulting.Default(obj, v.structural)
		return obj
	}
	if errs := v.validate(t, withPlace("a"), withPlace("a")); len(errs) > 0 {
		t.Errorf("an unchanged status is refused: %v", errs.ToAggregate())
	}
	if errs := v.validate(t, withPlace("b"), withPlace("a")); len(errs) == 0 {
		t.Error("status.place moved to another project")
	}
}
