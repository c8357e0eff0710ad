#!/usr/bin/env bash
# Makes the serving certificate of envoy-injector in a cluster: a private CA,
# kept in the Secret envoy-injector-ca, and a certificate for
# envoy-injector.envoy-injector.svc that it signs, stored as the Secret
# envoy-injector-tls; the CA is the webhooks' caBundle. Run it after
# `kubectl apply -k artifacts/injector`, and again to rotate. Needs openssl
# and kubectl.
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

openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=${svc}.${ns}.svc" \
	-keyout "${dir}/tls.key" -out "${dir}/tls.csr" 2>/dev/null
openssl x509 -req -in "${dir}/tls.csr" -CA "${dir}/ca.crt" -CAkey "${dir}/ca.key" -CAcreateserial -days 365 \
	-extfile <(printf 'subjectAltName=DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\n' "${svc}" "${ns}" "${svc}" "${ns}") \
	-out "${dir}/tls.crt" 2>/dev/null

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
