#!/usr/bin/env bash
# The lint gate: golangci-lint, at the version hack/lint/go.mod pins, with
# the root's .golangci.yml, over the root module and the course's own
# modules (docs/learn/controller-runtime and each step of chapter 13), for
# a learner copies them. Exits non-zero on any finding.
#
# `$0 build` only builds bin/golangci-lint: .ci/run does it beside the
# control plane's build, so that make test's lint only lints.
set -euo pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="${BIN_DIR:-${root}/bin}"
mkdir -p "${bin}"

# Built from hack/lint's tool directive; the build cache makes a second
# build cost a link at most.
go -C "${root}/hack/lint" build -o "${bin}/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint
if [[ ${1:-} == build ]]; then
	exit 0
fi

status=0
for module in "${root}" "${root}"/docs/learn/controller-runtime "${root}"/docs/learn/build-your-own/step-*; do
	echo "golangci-lint: .${module#"${root}"}/"
	(cd "${module}" && "${bin}/golangci-lint" run --config "${root}/.golangci.yml" ./...) || status=1
done
exit "${status}"
