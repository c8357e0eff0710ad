#!/usr/bin/env bash
# Makes the serving certificate of envoy-injector in a cluster: a private CA
# and a certificate for envoy-injector.envoy-injector.svc, stored as the
# Secret envoy-injector-tls, and the CA set as the webhook's caBundle. Run it
# after `kubectl apply -k artifacts/injector`, and again to rotate (the
# webhook reloads the files). Needs openssl and kubectl.
set -euo pipefail
ns=${NAMESPACE:-envoy-injector}
svc=envoy-injector
dir=$(mktemp -d)
trap 'rm -rf "${dir}"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
	-subj "/CN=envoy-injector CA" -keyout "${dir}/ca.key" -out "${dir}/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=${svc}.${ns}.svc" \
	-keyout "${dir}/tls.key" -out "${dir}/tls.csr" 2>/dev/null
openssl x509 -req -in "${dir}/tls.csr" -CA "${dir}/ca.crt" -CAkey "${dir}/ca.key" -CAcreateserial -days 365 \
	-extfile <(printf 'subjectAltName=DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\n' "${svc}" "${ns}" "${svc}" "${ns}") \
	-out "${dir}/tls.crt" 2>/dev/null

kubectl -n "${ns}" create secret tls envoy-injector-tls --cert="${dir}/tls.crt" --key="${dir}/tls.key" \
	--dry-run=client -o yaml | kubectl apply -f -
ca=$(base64 -w0 <"${dir}/ca.crt")
kubectl patch mutatingwebhookconfiguration envoy-injector --type=json -p "[
  {\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"${ca}\"},
  {\"op\":\"add\",\"path\":\"/webhooks/1/clientConfig/caBundle\",\"value\":\"${ca}\"}]"
