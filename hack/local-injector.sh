#!/usr/bin/env bash
# Runs the envoy-injector webhook against the local stack (make up) and
# registers it with the local kube-apiserver, for the README's demo:
#   hack/local-injector.sh
#   kubectl apply -f artifacts/examples/injector/pod-with-envoy.yaml
#   kubectl get pod web -o yaml     # an envoy container and volume appeared
# It makes a throw-away CA and a serving certificate for 127.0.0.1 with
# openssl (hack/local-certs.sh), applies the design documents' ConfigMap to the default namespace,
# labels that namespace envoy-injection=enabled (the selector of
# artifacts/injector/webhook.yaml, used here too),
# and stops with the stack (hack/local-down.sh).
set -euo pipefail
# Go 1.27.3 for every go command below, fetched from the module proxy when
# the machine's Go is older (the Makefile and .ci/run export the same).
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
state="${root}/.local"
if [[ ! -f "${state}/env" ]]; then
	echo "the local stack is not running: make up" >&2
	exit 1
fi
# shellcheck source=/dev/null
source "${state}/env"
certs="${state}/injector"
hack/local-certs.sh "${certs}" "injector"

go build -o bin/envoy-injector ./cmd/envoy-injector
port=18443
if [[ -f "${state}/injector.pid" ]]; then kill "$(cat "${state}/injector.pid")" 2>/dev/null || true; fi
setsid bin/envoy-injector --kubeconfig="${KUBECONFIG}" --bind-address=127.0.0.1:${port} \
	--tls-cert-file="${certs}/tls.crt" --tls-private-key-file="${certs}/tls.key" \
	--configmap-namespace=default >"${state}/injector.log" 2>&1 </dev/null &
echo $! >"${state}/injector.pid"

# Without kube-controller-manager nobody makes the default ServiceAccount,
# which the ServiceAccount admission plugin wants for every Pod.
kubectl create serviceaccount default --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -f artifacts/injector/envoy-initializer.yaml
kubectl label namespace default envoy-injection=enabled --overwrite >/dev/null

cat <<YAML | kubectl apply -f -
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: envoy-injector-local
webhooks:
- name: envoy.injector.samplecrd.k8s.io
  clientConfig:
    url: https://127.0.0.1:${port}/mutate
    caBundle: $(base64 -w0 <"${certs}/ca.crt")
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods"]
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  timeoutSeconds: 5
  # The same selector as artifacts/injector/webhook.yaml: a namespace
  # takes part by its label, here and in a cluster.
  namespaceSelector:
    matchExpressions:
    - key: envoy-injection
      operator: In
      values: ["enabled"]
YAML

deadline=$((SECONDS + 30))
until curl -sf --cacert "${certs}/ca.crt" "https://127.0.0.1:${port}/readyz" >/dev/null; do
	if ((SECONDS > deadline)); then
		echo "envoy-injector is not ready; see .local/injector.log" >&2
		exit 1
	fi
	sleep 0.5
done
echo "envoy-injector is serving on 127.0.0.1:${port} (log: .local/injector.log)"
echo "Try: kubectl apply -f artifacts/examples/injector/pod-with-envoy.yaml && kubectl get pod web -o yaml"
