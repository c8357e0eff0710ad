#!/usr/bin/env bash
# Regenerates the deepcopy functions of api/ and the clientset, listers and
# informers under generated/ from the API types, with k8s.io/code-generator's
# kube_codegen.sh at the version go.mod's tool lines pin. The same script as
# the repository's own hack/update-codegen.sh, without the apply
# configurations (the tutorial writes status with UpdateStatus).
set -o errexit
set -o nounset
set -o pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
module=$(go list -m)

# kube_codegen.sh `go install`s the generators: keep them out of GOBIN.
export GOBIN="${CODEGEN_BIN:-${root}/bin}"
mkdir -p "${GOBIN}"

go mod download k8s.io/code-generator
codegen_pkg=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
# shellcheck source=/dev/null
source "${codegen_pkg}/kube_codegen.sh"

boilerplate="${root}/hack/boilerplate.go.txt"

kube::codegen::gen_helpers \
	--boilerplate "${boilerplate}" \
	"${root}/api"

kube::codegen::gen_client \
	--with-watch \
	--output-dir "${root}/generated" \
	--output-pkg "${module}/generated" \
	--boilerplate "${boilerplate}" \
	"${root}/api"
