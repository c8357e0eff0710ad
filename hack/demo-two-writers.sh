#!/usr/bin/env bash
# Shows, on the local stack, how two writers share one Network:
#   1. a user applies the spec (server-side apply, field manager "alice"),
#      the controller applies the status and its finalizer (its own managers);
#   2. a second user's apply of a field alice owns is a conflict, not a
#      silent overwrite, until it is forced;
#   3. kubectl replace, by contrast, writes the whole object and drops what
#      it did not say: the controller's finalizer.
# Needs the local stack and its controller: `make run` in another terminal.
# It starts no controller of its own: a second one over the same namespace
# would be a second writer of every status, and the point of the demo is
# to show exactly who writes what. See docs/declarative-vs-imperative.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
# shellcheck source=/dev/null
source .local/env
ns=demo-two-writers
step() { printf '\n\033[1m## %s\033[0m\n' "$*"; }

kubectl create namespace "${ns}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null

step "alice applies a Network (server-side apply, field manager alice)"
# The first write already needs the controller: it serves the CRD's
# conversion webhook, through which every v1 write is stored as v2.
# Without it (a stack that make up started, before make run) the API
# server refuses the v1 file, naming the webhook's Service, and stores
# nothing (the CRD names its webhook from the start).
hint="is the controller running (make run, in another terminal)?"
if ! kubectl -n "${ns}" apply --server-side --field-manager=alice -f artifacts/examples/example-network.yaml; then
	echo "alice's apply failed: ${hint}" >&2
	exit 1
fi
if ! kubectl -n "${ns}" wait network/example-network --for=condition=Ready --timeout=60s; then
	echo "the Network is not Ready after 60s: ${hint}" >&2
	exit 1
fi

step "who owns what: alice the spec; the controller the finalizer and the status"
owners() {
	kubectl -n "${ns}" get network example-network --show-managed-fields \
		-o jsonpath='{range .metadata.managedFields[*]}{.manager}{"\t"}{.operation}{"\t"}{.subresource}{"\t"}{.fieldsV1}{"\n"}{end}'
}
owners

step "bob applies another gateway: a conflict with alice, nothing is overwritten"
sed 's/192.168.0.1$/192.168.0.254/' artifacts/examples/example-network.yaml |
	kubectl -n "${ns}" apply --server-side --field-manager=bob -f - || true
gateways() {
	kubectl -n "${ns}" get networks.v2.samplecrd.k8s.io example-network \
		-o jsonpath='spec.gateway {.spec.subnets[0].gateway}, in Neutron {.status.subnets[0].gateway}{"\n"}'
}
gateways

step "bob forces it: he takes the field from alice; the status is untouched"
sed 's/192.168.0.1$/192.168.0.254/' artifacts/examples/example-network.yaml |
	kubectl -n "${ns}" apply --server-side --field-manager=bob --force-conflicts -f -
kubectl -n "${ns}" wait network/example-network --for=jsonpath='{.status.observedGeneration}'=2 --timeout=60s
gateways
owners

step "kubectl replace writes the whole object: the controller's finalizer is gone"
# The object as the replace left it (the controller puts the finalizer
# back a moment later, because the replace also changed the spec).
# kubectl reads the object's resourceVersion and PUTs the file with it: if
# anyone (the controller's status) wrote in between, the PUT is refused
# with a Conflict rather than overwriting what it never read. That is
# optimistic concurrency, and the answer to it is to read and try again.
for attempt in 1 2 3 4 5; do
	if out=$(kubectl -n "${ns}" replace -f artifacts/examples/example-network.yaml \
		-o jsonpath='finalizers after replace: {.metadata.finalizers}{"\n"}' 2>&1); then
		echo "${out}"
		break
	fi
	[[ "${out}" == *Conflict* && ${attempt} -lt 5 ]] || { echo "${out}" >&2; exit 1; }
	echo "(attempt ${attempt}: a write came between kubectl's read and its PUT, a Conflict; reading again)"
done

step "the controller's next sync: its finalizer is back, and Neutron has the file's gateway again"
kubectl -n "${ns}" wait network/example-network --for=jsonpath='{.status.observedGeneration}'=3 --timeout=60s
kubectl -n "${ns}" get network example-network -o jsonpath='finalizers: {.metadata.finalizers}{"\n"}'
gateways

step "clean up: the delete waits for the controller to delete Neutron's side"
kubectl -n "${ns}" delete network example-network --wait=true
