// Package crdschema validates an object as kube-apiserver validates a
// custom resource against one version of its CustomResourceDefinition:
// defaults, then the OpenAPI schema, the list types and the CEL rules,
// transition rules (oldSelf) included when there is an old object. It is
// apiextensions-apiserver's own code, fed the CRD, so that what it refuses
// cannot drift from what the API server refuses.
//
// The conversion webhook uses it on what a v1 write carries that v1's
// schema cannot see (pkg/controller/conversion), and the CRD's tests on
// what a v2 client may write.
package crdschema

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Schema is one version's schema of a CRD, compiled: building one compiles
// every CEL rule, so it is built once per CRD generation and reused.
type Schema struct {
	schema     apiservervalidation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

// New compiles the schema of version of crd, as the API server serving
// that CRD does.
func New(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Schema, error) {
	in := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(in)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(in, internal, nil); err != nil {
		return nil, fmt.Errorf("reading CRD %s: %w", crd.Name, err)
	}
	props := versionSchema(internal, version)
	if props == nil {
		return nil, fmt.Errorf("CRD %s has no schema for version %s", crd.Name, version)
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, version, err)
	}
	structural, err := structuralschema.NewStructural(props)
	if err != nil {
		return nil, fmt.Errorf("CRD %s version %s is not structural: %w", crd.Name, version, err)
	}
	return &Schema{schema: sv, structural: structural, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
}

// versionSchema is version's schema; the internal API keeps a schema that
// every version shares in spec.validation instead.
func versionSchema(crd *apiextensions.CustomResourceDefinition, version string) *apiextensions.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	if crd.Spec.Validation != nil {
		return crd.Spec.Validation.OpenAPIV3Schema
	}
	return nil
}

// Default sets the schema's defaults in obj, a decoded JSON object, as the
// API server does before it validates.
func (s *Schema) Default(obj map[string]any) { structuraldefaulting.Default(obj, s.structural) }

// Validate is what the API server answers for creating obj (old nil) or
// updating old to obj, both decoded JSON objects already defaulted
// (Default): the list types, the schema and, where the schema's types
// hold, the CEL rules within the API server's cost budget.
func (s *Schema) Validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	errs := listtype.ValidateListSetsAndMaps(nil, s.structural, obj)
	if old == nil {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, s.schema)...)
	} else {
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, s.schema)...)
	}
	// As the API server (hasBlockingErr): no CEL rule runs on an object
	// of the wrong types or values outside an enum. Nor on a list over its
	// maxItems or a string over its maxLength, which the object is refused
	// for already: CEL's cost estimates assume those bounds, and past them
	// a rule only burns the runtime budget (seconds of CPU for thousands of
	// subnets, in a webhook slot every namespace shares).
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeTypeInvalid, field.ErrorTypeNotSupported:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		case field.ErrorTypeTooMany, field.ErrorTypeTooLong:
			return errs
		}
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, remaining := s.cel.Validate(ctx, nil, s.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)
	if remaining < 0 {
		errs = append(errs, field.Invalid(nil, nil, fmt.Sprintf("validation ran over the API server's CEL cost budget by %d", -remaining)))
	}
	return errs
}
