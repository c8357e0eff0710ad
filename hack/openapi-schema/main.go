// Command openapi-schema prints, as an OpenAPI v2 document, the definitions
// that openapi-gen generated from our API types (pkg/generated/openapi).
//
// applyconfiguration-gen reads it (hack/update-codegen.sh) and embeds the
// schema in the apply configurations, which is what lets the generated fake
// clientset perform server-side apply on a Network in unit tests: structured
// merge needs to know that status.conditions is a list-map keyed by type.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/samplecrd/network-controller/pkg/generated/openapi"
)

func main() {
	if err := json.NewEncoder(os.Stdout).Encode(swagger()); err != nil {
		fmt.Fprintf(os.Stderr, "openapi-schema: %v\n", err)
		os.Exit(1)
	}
}

// swagger names every definition the way the apiserver does
// (io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta, ...), because that is the
// naming applyconfiguration-gen expects.
func swagger() *spec.Swagger {
	ref := func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + util.ToRESTFriendlyName(name))
	}
	defs := openapi.GetOpenAPIDefinitions(ref)
	schemas := make(spec.Definitions, len(defs))
	for name, def := range defs {
		schema := def.Schema
		// Types that carry both an OpenAPI v3 and a v2 form keep the v2 one
		// in an extension; this document is v2.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			schema = v2
		}
		schemas[util.ToRESTFriendlyName(name)] = schema
	}
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "network-controller", Version: "v1"}},
		Definitions: schemas,
	}}
}
