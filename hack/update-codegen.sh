#!/usr/bin/env bash
# Regenerates everything under pkg/generated and the zz_generated files of
# pkg/apis from the API types, with k8s.io/code-generator's kube_codegen.sh
# at the version go.mod pins. Works from any clone in any directory: no
# GOPATH layout and no vendor directory are needed.
#
# What it generates, in order:
#   deepcopy        pkg/apis/samplecrd/v1/zz_generated.deepcopy.go
#   openapi         pkg/generated/openapi (input for the apply configurations)
#   applyconfig     pkg/generated/applyconfiguration
#   clientset       pkg/generated/clientset/versioned (+ fake)
#   listers         pkg/generated/listers
#   informers       pkg/generated/informers
set -o errexit
set -o nounset
set -o pipefail
# Go 1.27.3 for every go command below, fetched from the module proxy when
# the machine's Go is older (the Makefile and .ci/run export the same).
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
module=$(go list -m)

# kube_codegen.sh `go install`s the generators; keep them out of the user's
# GOBIN and let them be cached between runs.
export GOBIN="${CODEGEN_BIN:-${root}/bin/codegen}"
mkdir -p "${GOBIN}"

# On a fresh machine the module is not in the module cache yet, and
# `go list -m` would print no directory for it.
go mod download k8s.io/code-generator
codegen_pkg=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
if [[ ! -f "${codegen_pkg}/kube_codegen.sh" ]]; then
	echo "kube_codegen.sh not found in k8s.io/code-generator (${codegen_pkg:-not downloaded})" >&2
	exit 1
fi
# shellcheck source=/dev/null
source "${codegen_pkg}/kube_codegen.sh"

boilerplate="${root}/hack/boilerplate.go.txt"

kube::codegen::gen_helpers \
	--boilerplate "${boilerplate}" \
	"${root}/pkg/apis"

kube::codegen::gen_openapi \
	--output-dir "${root}/pkg/generated/openapi" \
	--output-pkg "${module}/pkg/generated/openapi" \
	--report-filename "${root}/hack/api-rule-violations.list" \
	--update-report \
	--boilerplate "${boilerplate}" \
	"${root}/pkg/apis"

schema=$(mktemp)
trap 'rm -f "${schema}"' EXIT
go run ./hack/openapi-schema >"${schema}"

kube::codegen::gen_client \
	--with-watch \
	--with-applyconfig \
	--applyconfig-openapi-schema "${schema}" \
	--output-dir "${root}/pkg/generated" \
	--output-pkg "${module}/pkg/generated" \
	--boilerplate "${boilerplate}" \
	"${root}/pkg/apis"
