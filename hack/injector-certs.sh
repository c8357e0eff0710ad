#!/usr/bin/env bash
# Makes the serving certificate of envoy-injector in a cluster: a private CA,
# kept in the Secret envoy-injector-ca, and a certificate for
# envoy-injector.envoy-injector.svc that it signs, stored as the Secret
# envoy-injector-tls; the CA is the webhooks' caBundle. Run it after
# `kubectl apply -k artifacts/injector`, and again to rotate. Needs openssl
# and kubectl.
#
# The same CA signs the certificate of the controller's /metrics, for
# network-controller-metrics.network-controller-system.svc (what Prometheus
# verifies: server_name in artifacts/prometheus/prometheus.yml), stored as
# the Secret network-controller-metrics-tls that its Deployment mounts,
# when the controller's namespace (CONTROLLER_NAMESPACE) exists: install
# the controller first, or run this again after. Prometheus trusts the
# webhooks' caBundle (hack/local-prometheus.sh), which covers both
# certificates through a rotation as it does for the API server.
#
# Rotation never refuses a Pod. A Pod serves the old certificate until the
# kubelet has updated its Secret volume (up to a minute or two), so what the
# API server trusts must cover the old certificate and the new one at once:
#   $0               a new certificate under the kept CA; caBundle unchanged.
#   $0 --rotate-ca   a new CA: caBundle becomes the old CA and the new one,
#                    and the new certificate is signed by the new CA. Run
#                    plain $0 once every replica serves the new certificate
#                    (its envoy_injector_serving_certificate_expiration_timestamp_seconds
#                    moved), which drops the old CA from caBundle.
# In production cert-manager does all of this (docs/sidecar-injection.md).
set -euo pipefail
ns=${NAMESPACE:-envoy-injector}
controller_ns=${CONTROLLER_NAMESPACE:-network-controller-system}
svc=envoy-injector
rotate_ca=false
[[ ${1:-} == --rotate-ca ]] && rotate_ca=true
dir=$(mktemp -d)
trap 'rm -rf "${dir}"' EXIT

new_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
		-subj "/CN=envoy-injector CA $(date -u +%Y%m%dT%H%M%S)" -keyout "${dir}/ca.key" -out "${dir}/ca.crt" 2>/dev/null
	kubectl -n "${ns}" create secret tls envoy-injector-ca --cert="${dir}/ca.crt" --key="${dir}/ca.key" \
		--dry-run=client -o yaml | kubectl apply -f - >/dev/null
}

# The CA: the kept one, unless there is none or a new one is asked for.
old_ca=""
if kubectl -n "${ns}" get secret envoy-injector-ca >/dev/null 2>&1; then
	kubectl -n "${ns}" get secret envoy-injector-ca -o jsonpath='{.data.tls\.crt}' | base64 -d >"${dir}/ca.crt"
	kubectl -n "${ns}" get secret envoy-injector-ca -o jsonpath='{.data.tls\.key}' | base64 -d >"${dir}/ca.key"
	if ${rotate_ca}; then
		old_ca=$(cat "${dir}/ca.crt")
		new_ca
	fi
else
	new_ca
fi

# sign writes ${dir}/$1.crt and $1.key: a serving certificate for the
# DNS names $2 and $3, signed by the CA.
sign() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" \
		-keyout "${dir}/$1.key" -out "${dir}/$1.csr" 2>/dev/null
	openssl x509 -req -in "${dir}/$1.csr" -CA "${dir}/ca.crt" -CAkey "${dir}/ca.key" -CAcreateserial -days 365 \
		-extfile <(printf 'subjectAltName=DNS:%s,DNS:%s\nextendedKeyUsage=serverAuth\n' "$2" "$3") \
		-out "${dir}/$1.crt" 2>/dev/null
}
sign tls "${svc}.${ns}.svc" "${svc}.${ns}.svc.cluster.local"

# caBundle first, the certificate after: the API server trusts the new
# certificate before any Pod can serve it.
{
	[[ -n ${old_ca} ]] && echo "${old_ca}"
	cat "${dir}/ca.crt"
} >"${dir}/bundle.crt"
bundle=$(base64 -w0 <"${dir}/bundle.crt")
kubectl patch mutatingwebhookconfiguration envoy-injector --type=json -p "[
  {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"${bundle}\"},
  {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"${bundle}\"}]" >/dev/null
kubectl -n "${ns}" create secret tls envoy-injector-tls --cert="${dir}/tls.crt" --key="${dir}/tls.key" \
	--dry-run=client -o yaml | kubectl apply -f -

# The controller's, once it is installed; not into a namespace on its way
# out (kubectl delete -k artifacts/deploy).
if [[ $(kubectl get namespace "${controller_ns}" -o jsonpath='{.status.phase}' 2>/dev/null) == Active ]]; then
	sign metrics "network-controller-metrics.${controller_ns}.svc" "network-controller-metrics.${controller_ns}.svc.cluster.local"
	kubectl -n "${controller_ns}" create secret tls network-controller-metrics-tls --cert="${dir}/metrics.crt" --key="${dir}/metrics.key" \
		--dry-run=client -o yaml | kubectl apply -f -
fi
