package v1_test

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/generated/openapi"
	"github.com/samplecrd/network-controller/test/cases"
)

const crdPath = "../../../../artifacts/crd/networks.samplecrd.k8s.io.yaml"

// networkValidator checks Network objects the way kube-apiserver does for
// this CRD: OpenAPI schema first, then the CEL rules unless the schema
// already found a value of the wrong type.
type networkValidator struct {
	schema     apiservervalidation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

func loadCRD(t *testing.T) *apiextensions.CustomResourceDefinition {
	t.Helper()
	return loadCRDFrom(t, crdPath)
}

func loadCRDFrom(t *testing.T, crdPath string) *apiextensions.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	v1crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, v1crd); err != nil {
		t.Fatalf("decoding %s: %v", crdPath, err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1crd)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1crd, crd, nil); err != nil {
		t.Fatalf("converting the CRD: %v", err)
	}
	return crd
}

// networkSchema is the CRD's schema. The internal API keeps a schema shared
// by all versions in spec.validation rather than in each version.
func networkSchema(crd *apiextensions.CustomResourceDefinition) *apiextensions.JSONSchemaProps {
	return versionSchema(crd, crd.Spec.Versions[0].Name)
}

// versionSchema is the schema of one version of the CRD; the internal API
// hoists a schema all versions share into spec.validation.
func versionSchema(crd *apiextensions.CustomResourceDefinition, version string) *apiextensions.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return crd.Spec.Validation.OpenAPIV3Schema
}

func newNetworkValidator(t *testing.T) *networkValidator {
	t.Helper()
	return newValidator(t, loadCRD(t))
}

func newValidator(t *testing.T, crd *apiextensions.CustomResourceDefinition) *networkValidator {
	t.Helper()
	schema := networkSchema(crd)
	sv, _, err := apiservervalidation.NewSchemaValidator(schema)
	if err != nil {
		t.Fatal(err)
	}
	structural, err := structuralschema.NewStructural(schema)
	if err != nil {
		t.Fatal(err)
	}
	return &networkValidator{schema: sv, structural: structural, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}
}

// validate returns the errors the API server would give for creating obj,
// or for updating old to obj when old is not nil.
func (v *networkValidator) validate(t *testing.T, obj, old map[string]any) field.ErrorList {
	t.Helper()
	var errs field.ErrorList
	if old == nil {
		errs = apiservervalidation.ValidateCustomResource(nil, obj, v.schema)
	} else {
		errs = apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, v.schema)
	}
	for _, e := range errs {
		if e.Type == field.ErrorTypeInvalid && strings.Contains(e.Detail, "must be of type") {
			return errs
		}
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, remaining := v.cel.Validate(context.Background(), nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	if remaining < 0 {
		t.Fatalf("CEL validation ran over its cost budget by %d", -remaining)
	}
	return append(errs, celErrs...)
}

func TestCRDIsValid(t *testing.T) {
	crd := loadCRD(t)
	// This is the validation kube-apiserver runs when the CRD is created:
	// a structural schema, and every CEL rule compiles and fits the cost
	// limits computed from the schema's maxLength bounds.
	if errs := validation.ValidateCustomResourceDefinition(context.Background(), crd); len(errs) > 0 {
		t.Fatalf("the CRD would be refused: %v", errs.ToAggregate())
	}
	if got, want := crd.Spec.Group+"/"+crd.Spec.Versions[0].Name, "samplecrd.k8s.io/v1"; got != want {
		t.Errorf("group/version = %s, want %s", got, want)
	}
	if crd.Spec.Scope != apiextensions.NamespaceScoped {
		t.Errorf("scope = %s, want Namespaced", crd.Spec.Scope)
	}
	// Like the schema, subresources shared by all versions are hoisted.
	subresources := crd.Spec.Subresources
	if v := crd.Spec.Versions[0].Subresources; v != nil {
		subresources = v
	}
	if subresources == nil || subresources.Status == nil {
		t.Error("the status subresource is not enabled: the controller's status writes would change spec too")
	}
	if crd.Annotations["api-approved.kubernetes.io"] == "" {
		t.Error("a CRD in a *.k8s.io group needs the api-approved.kubernetes.io annotation")
	}
}

func TestExamplesAreValid(t *testing.T) {
	v := newNetworkValidator(t)
	examples, err := cases.Examples("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		t.Run(ex.GetName(), func(t *testing.T) {
			if errs := v.validate(t, ex.Object, nil); len(errs) > 0 {
				t.Errorf("refused: %v", errs.ToAggregate())
			}
		})
	}
	for name, s := range cases.ValidSpecs() {
		t.Run(name, func(t *testing.T) {
			if errs := v.validate(t, cases.Object("n", s).Object, nil); len(errs) > 0 {
				t.Errorf("refused: %v", errs.ToAggregate())
			}
		})
	}
	for _, u := range cases.ValidUpdates() {
		t.Run(u.Name, func(t *testing.T) {
			if errs := v.validate(t, cases.Object("n", u.New).Object, cases.Object("n", u.Old).Object); len(errs) > 0 {
				t.Errorf("refused: %v", errs.ToAggregate())
			}
		})
	}
}

func TestInvalidSpecsAreRefusedWithActionableMessages(t *testing.T) {
	v := newNetworkValidator(t)
	for _, tc := range cases.InvalidSpecs() {
		t.Run(tc.Name, func(t *testing.T) {
			var old map[string]any
			if tc.Old != nil {
				old = cases.Object("n", tc.Old).Object
			}
			errs := v.validate(t, cases.Object("n", tc.Spec).Object, old)
			if len(errs) == 0 {
				t.Fatalf("accepted; want an error on %s saying %q", tc.Field, tc.Message)
			}
			if len(errs) > 1 {
				t.Errorf("%d errors for one mistake, want 1: %v", len(errs), errs.ToAggregate())
			}
			for _, e := range errs {
				if e.Field == tc.Field && strings.Contains(e.Error(), tc.Message) {
					return
				}
			}
			t.Errorf("errors %v; want one on %s saying %q", errs.ToAggregate(), tc.Field, tc.Message)
		})
	}
}

// TestSchemaMatchesGoTypes compares the CRD's schema with the one openapi-gen
// derives from types.go: the same fields, of the same types, required alike,
// with the same list semantics. A field added on one side only fails here.
func TestSchemaMatchesGoTypes(t *testing.T) {
	defs := openapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef(name) })
	for kind, path := range map[string]string{"Network": crdPath, "TenantPolicy": tenantPolicyCRDPath} {
		goSchema := defs["github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1."+kind].Schema
		compareSchemas(t, kind, networkSchema(loadCRDFrom(t, path)), &goSchema, defs)
	}
}

const tenantPolicyCRDPath = "../../../../artifacts/crd/tenantpolicies.samplecrd.k8s.io.yaml"

func compareSchemas(t *testing.T, path string, crd *apiextensions.JSONSchemaProps, goSchema *spec.Schema, defs map[string]common.OpenAPIDefinition) {
	t.Helper()
	if ref := goSchema.Ref.String(); ref != "" {
		// A quantity is an integer or a string on the wire.
		if ref == "k8s.io/apimachinery/pkg/api/resource.Quantity" {
			if !crd.XIntOrString {
				t.Errorf("%s: a resource.Quantity in Go, not x-kubernetes-int-or-string in the CRD", path)
			}
			return
		}
		def, ok := defs[ref]
		if !ok {
			t.Fatalf("%s: no definition for %s", path, ref)
		}
		goSchema = &def.Schema
	}
	goType := ""
	if len(goSchema.Type) > 0 {
		goType = goSchema.Type[0]
	}
	// metav1.Time is a string on the wire; ObjectMeta is left to the API
	// server, which knows it, so the CRD only says "object".
	if strings.HasSuffix(path, ".metadata") && !strings.Contains(path[:len(path)-len(".metadata")], ".") {
		if crd.Type != "object" {
			t.Errorf("%s: type %q, want object", path, crd.Type)
		}
		return
	}
	if crd.Type != goType {
		t.Errorf("%s: CRD type %q, Go type %q", path, crd.Type, goType)
	}
	if crd.Format != goSchema.Format && !(crd.Format == "" && goSchema.Format == "int32") {
		t.Errorf("%s: CRD format %q, Go format %q", path, crd.Format, goSchema.Format)
	}
	if got, want := sortedSet(crd.Required), sortedSet(goSchema.Required); got != want {
		t.Errorf("%s: CRD requires [%s], Go types require [%s]", path, got, want)
	}
	if goListType, _ := goSchema.Extensions.GetString("x-kubernetes-list-type"); crd.Type == "array" {
		crdListType := ""
		if crd.XListType != nil {
			crdListType = *crd.XListType
		}
		if crdListType != goListType {
			t.Errorf("%s: CRD list type %q, Go list type %q", path, crdListType, goListType)
		}
	}
	for name := range goSchema.Properties {
		if _, ok := crd.Properties[name]; !ok {
			t.Errorf("%s.%s: in the Go types but not in the CRD", path, name)
		}
	}
	for name, crdProp := range crd.Properties {
		goProp, ok := goSchema.Properties[name]
		if !ok {
			t.Errorf("%s.%s: in the CRD but not in the Go types", path, name)
			continue
		}
		compareSchemas(t, path+"."+name, &crdProp, &goProp, defs)
	}
	if crd.Items != nil && crd.Items.Schema != nil {
		if goSchema.Items == nil || goSchema.Items.Schema == nil {
			t.Errorf("%s: an array in the CRD only", path)
			return
		}
		compareSchemas(t, path+"[]", crd.Items.Schema, goSchema.Items.Schema, defs)
	}
}

func sortedSet(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, ",")
}

// TestTenantPolicies: the example is accepted, and what a policy may not
// say is refused by the API server.
func TestTenantPolicies(t *testing.T) {
	crd := loadCRDFrom(t, tenantPolicyCRDPath)
	if crd.Spec.Scope != apiextensions.ClusterScoped {
		t.Errorf("scope %q: a TenantPolicy is a cluster administrator's, and cluster-scoped", crd.Spec.Scope)
	}
	v := newValidator(t, crd)
	for _, name := range []string{"tenant-policy.yaml", "default-policy.yaml"} {
		data, err := os.ReadFile("../../../../artifacts/examples/tenancy/" + name)
		if err != nil {
			t.Fatal(err)
		}
		example := map[string]any{}
		if err := yaml.Unmarshal(data, &example); err != nil {
			t.Fatal(err)
		}
		if errs := v.validate(t, example, nil); len(errs) > 0 {
			t.Errorf("the example %s is refused: %v", name, errs.ToAggregate())
		}
	}
	policy := func(spec string) map[string]any {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte("apiVersion: samplecrd.k8s.io/v1\nkind: TenantPolicy\nmetadata: {name: p}\nspec: "+spec), &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	for name, spec := range map[string]string{
		"no namespace selector":          "{routers: [edge]}",
		"an unknown credentials policy":  "{namespaceSelector: {}, credentials: Everyone}",
		"an empty router name":           `{namespaceSelector: {}, routers: [""]}`,
		"In without values":              "{namespaceSelector: {matchExpressions: [{key: team, operator: In}]}}",
		"Exists with values":             "{namespaceSelector: {matchExpressions: [{key: team, operator: Exists, values: [a]}]}}",
		"an operator labels do not know": "{namespaceSelector: {matchExpressions: [{key: team, operator: Like, values: [a]}]}}",
		"a negative cap on Networks":     "{namespaceSelector: {}, maxNetworks: -1}",
		"a cap that is not a number":     "{namespaceSelector: {}, maxNetworks: many}",
		"a default that names labels":    "{default: true, namespaceSelector: {matchLabels: {team: a}}, credentials: Namespace}",
		"a default with an expression":   "{default: true, namespaceSelector: {matchExpressions: [{key: team, operator: Exists}]}}",
	} {
		t.Run(name, func(t *testing.T) {
			if errs := v.validate(t, policy(spec), nil); len(errs) == 0 {
				t.Errorf("accepted %s", spec)
			}
		})
	}
	for _, spec := range []string{
		"{namespaceSelector: {}}",
		"{namespaceSelector: {}, maxNetworks: 0}",
		"{namespaceSelector: {}, maxNetworks: 50}",
		"{default: true, namespaceSelector: {}, credentials: Namespace}",
		"{default: false, namespaceSelector: {matchLabels: {team: a}}}",
	} {
		if errs := v.validate(t, policy(spec), nil); len(errs) > 0 {
			t.Errorf("%s is refused: %v", spec, errs.ToAggregate())
		}
	}
}
