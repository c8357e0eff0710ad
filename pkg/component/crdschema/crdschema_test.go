package crdschema_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/component/crdschema"
)

func networkSchema(t *testing.T) *crdschema.Schema {
	t.Helper()
	data, err := os.ReadFile("../../../artifacts/crd/networks.samplecrd.k8s.io.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	s, err := crdschema.New(crd, "v2")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func network(subnets ...any) map[string]any {
	return map[string]any{"apiVersion": "samplecrd.k8s.io/v2", "kind": "Network",
		"metadata": map[string]any{"name": "n", "namespace": "ns"}, "spec": map[string]any{"subnets": subnets}}
}

// TestValidate: what the API server refuses, with its messages; and no
// CEL rule runs on an object refused for its schema's bounds or types, as
// the API server runs none, so that thousands of subnets cost no CEL
// budget.
func TestValidate(t *testing.T) {
	many := make([]any, 9000)
	for i := range many {
		many[i] = map[string]any{"cidr": fmt.Sprintf("fd%02x:%x::/64", i/4096, i%4096)}
	}
	for _, tc := range []struct {
		name string
		obj  map[string]any
		// want is a part of the errors, "" for none; noneOf are what a
		// CEL rule that ran would say.
		want   string
		noneOf []string
	}{
		{name: "a dual-stack Network", obj: network(map[string]any{"cidr": "10.0.0.0/24"}, map[string]any{"cidr": "fd00::/64"})},
		{name: "two IPv4 subnets: a CEL rule", obj: network(map[string]any{"cidr": "10.0.0.0/24"}, map[string]any{"cidr": "10.1.0.0/24"}),
			want: "at most one subnet per IP family"},
		{name: "9,000 subnets: over maxItems, and no CEL", obj: network(many...), want: "Too many",
			noneOf: []string{"overlap", "IP family", "cost budget"}},
		{name: "a cidr of the wrong type: no CEL", obj: network(map[string]any{"cidr": int64(7)}, map[string]any{"cidr": "10.0.0.0/24"}),
			want: "must be of type", noneOf: []string{"must be a CIDR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := networkSchema(t)
			s.Default(tc.obj)
			errs := s.Validate(context.Background(), tc.obj, nil)
			msg := errs.ToAggregate()
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", msg)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(msg.Error(), tc.want)):
				t.Fatalf("errors %.500v, want one saying %q", msg, tc.want)
			}
			for _, not := range tc.noneOf {
				if msg != nil && strings.Contains(msg.Error(), not) {
					t.Errorf("errors %.500v say %q: a CEL rule ran", msg, not)
				}
			}
		})
	}
}
