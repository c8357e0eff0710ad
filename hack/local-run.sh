#!/usr/bin/env bash
# Runs the controller in the foreground on the local stack (make run, after
# make up and make build), with the Network CRD's conversion webhook, as
# the API server needs it to serve Networks stored as samplecrd.k8s.io/v2
# as v1 (and the other way round):
#   1. makes a throw-away CA and a serving certificate for 127.0.0.1 with
#      openssl (hack/local-certs.sh), in .local/conversion;
#   2. patches the installed CRD's spec.conversion to strategy Webhook at
#      https://127.0.0.1:PORT/convert with that CA as its caBundle, in
#      place of the in-cluster Service that artifacts/crd names (which
#      this stack has no Pod behind: until this patch, v1 requests are
#      refused, never stored with fields dropped);
#   3. starts bin/network-controller with --conversion-bind-address and the
#      certificate, waits until the webhook answers, and applies the example
#      Network (through v1, which the webhook converts), then waits for the
#      controller. Ctrl-C stops it.
# A second controller started by hand (another --health-probe-bind-address
# and --metrics-bind-address) may serve the webhook too; the CRD names
# only this one.
# CONVERSION_PORT chooses the port (default 19443).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
state="${root}/.local"
if [[ ! -f "${state}/env" ]]; then
	echo "the local stack is not running: make up" >&2
	exit 1
fi
# shellcheck source=/dev/null
source "${state}/env"
port="${CONVERSION_PORT:-19443}"
certs="${state}/conversion"
hack/local-certs.sh "${certs}" "conversion webhook"

# The same change as test/framework's UseConversionWebhook.
kubectl patch crd networks.samplecrd.k8s.io --type=merge -p "$(
	cat <<JSON
{"spec": {"conversion": {"strategy": "Webhook", "webhook": {
  "conversionReviewVersions": ["v1"],
  "clientConfig": {"service": null, "url": "https://127.0.0.1:${port}/convert", "caBundle": "$(base64 -w0 <"${certs}/ca.crt")"}}}}}
JSON
)" >/dev/null

bin/network-controller --kubeconfig="${KUBECONFIG}" --os-cloud="${OS_CLOUD}" \
	--conversion-bind-address="127.0.0.1:${port}" \
	--conversion-tls-cert-file="${certs}/tls.crt" --conversion-tls-key-file="${certs}/tls.key" "$@" &
pid=$!
trap 'kill -TERM "${pid}" 2>/dev/null || true; wait "${pid}" || true' INT TERM

# The webhook answers a GET with 405 once it serves.
deadline=$((SECONDS + 60))
until [[ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "${certs}/ca.crt" "https://127.0.0.1:${port}/convert" || true)" == 405 ]]; do
	if ! kill -0 "${pid}" 2>/dev/null; then
		wait "${pid}"
		exit $?
	fi
	if ((SECONDS > deadline)); then
		echo "the conversion webhook does not answer on 127.0.0.1:${port} after 60s" >&2
		kill -TERM "${pid}"
		exit 1
	fi
	sleep 0.5
done
kubectl apply -f artifacts/examples/example-network.yaml
wait "${pid}"
