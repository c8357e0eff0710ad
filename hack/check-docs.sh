#!/usr/bin/env bash
# Runs every ```sh block of the docs and the README, in order, on the local
# stack with the controller running, and fails on the first command that
# fails: what the docs tell a newcomer to type must work. Blocks fenced
# ```sh no-run are skipped: `make run`/`make test` (CI runs them), a real
# cluster's install, `make bench` (its results are in docs/benchmarks.md);
# chapter 13's ```sh no-run follow blocks, which `make unit` follows
# (hack/follow-build-your-own.sh).
#
# `make run`, `make up` and `make down` inside the blocks are served by this
# script (the stack is up, the controller runs in the background), so the
# blocks run unattended; `make deploy` stops that controller first, so the
# deployed one is the only writer. A stack this script started is stopped at the end;
# one that was already running is left running (with the docs' changes).
set -euo pipefail
# Go 1.27.3 for every go command below, fetched from the module proxy when
# the machine's Go is older (the Makefile and .ci/run export the same).
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"

# A stack is someone's only when it is running (local-up.sh's own test): an
# env file left by a stack that was killed must not keep this script from
# stopping the one it starts.
stop_stack=true
if [[ -f .local/local-stack.pid ]] && kill -0 "$(cat .local/local-stack.pid)" 2>/dev/null && [[ -f .local/env ]]; then
	echo "using the local stack that is already running"
	stop_stack=false
fi
hack/local-up.sh >/dev/null
# shellcheck source=/dev/null
source .local/env
go build -o bin/network-controller .
# The controller as `make run` starts it (hack/local-run.sh): with the
# Network CRD's conversion webhook, which the v1 reads and writes of the
# docs need, and the example Network applied once the webhook answers.
# local-run.sh stops the controller when it is sent TERM.
hack/local-run.sh --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0 \
	>.local/check-docs-controller.log 2>&1 &
controller=$!
cleanup() {
	kill "${controller}" 2>/dev/null || true
	if [[ "${stop_stack}" == true ]]; then hack/local-down.sh >/dev/null; fi
}
trap cleanup EXIT
deadline=$((SECONDS + 90))
until kubectl get network/example-network >/dev/null 2>&1; do
	if ! kill -0 "${controller}" 2>/dev/null || ((SECONDS > deadline)); then
		cat .local/check-docs-controller.log >&2
		echo "the example Network was not applied: hack/local-run.sh did not get that far" >&2
		exit 1
	fi
	sleep 1
done
kubectl wait network/example-network --for=condition=Ready --timeout=60s >/dev/null

# The order matters where blocks build on each other: the README's tour
# deletes example-network, which the API-organisation page reads.
files=(docs/api-organisation.md docs/declarative-vs-imperative.md docs/informer-path.md
	docs/code-generation.md docs/sidecar-injection.md docs/benchmarks.md README.md docs/operations.md)
blocks=0
for f in "${files[@]}"; do
	n=0
	while IFS= read -r -d $'\0' block; do
		n=$((n + 1))
		blocks=$((blocks + 1))
		echo "=== ${f}, block ${n}"
		printf '%s\n' "${block}" | sed 's/^/    /'
		if ! bash -e -c "
			make() {
				case \"\$1\" in
				run | up | down) echo \"(make \$1: served by hack/check-docs.sh)\" ;;
				# In cluster, the deployed replicas take over from the
				# controller this script runs: never two writers at once.
				deploy) kill ${controller} 2>/dev/null || true; command make deploy ;;
				*) command make \"\$@\" ;;
				esac
			}
			source .local/env
			${block}" >"${root}/.local/check-docs.out" 2>&1; then
			cat "${root}/.local/check-docs.out"
			echo "FAILED: ${f}, block ${n}" >&2
			exit 1
		fi
	done < <(awk '
		/^[ \t]*```sh[ \t]*$/ { inblock = 1; body = ""; next }
		/^[ \t]*```/ { if (inblock) { printf "%s%c", body, 0 }; inblock = 0; next }
		inblock { sub(/^   /, ""); body = body $0 "\n" }
	' "${f}")
done
echo "docs: ${blocks} passed, 0 failed"
