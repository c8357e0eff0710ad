#!/usr/bin/env bash
# Makes the serving certificate of the controller's conversion webhook in
# a cluster, and sets the installed Network CRD's caBundle to trust it. The
# CRD file (the chart's crds/, artifacts/crd; not templated) already names
# the webhook, the Service network-controller-conversion of
# network-controller-system at /convert, with no caBundle: until this runs,
# every v1 request is refused, naming that Service, and nothing is stored.
# This sets spec.conversion on the installed CRD: strategy Webhook, the
# Service of NAMESPACE (default network-controller-system; set it for a
# controller installed in another namespace) at /convert, and the
# caBundle. It runs with the installer's credentials: the controller has
# no right to patch CRDs (docs/operations.md, "Conversion webhook").
#   $0               a private CA, kept in the Secret
#                    network-controller-conversion-ca, signs a certificate for
#                    network-controller-conversion.NAMESPACE.svc, stored as
#                    the Secret network-controller-conversion-tls that the
#                    Pods mount; the CA is the caBundle. Run it before or
#                    after `kubectl apply -k artifacts/crd` and the
#                    controller's install: the order loses nothing. The
#                    apply leaves the caBundle alone (the file has none),
#                    but names network-controller-system again: with another
#                    NAMESPACE, run this again after it. Run it again to
#                    renew the certificate under the kept CA.
#   $0 --rotate-ca   a new CA: caBundle becomes the old CA and the new one,
#                    and the new certificate is signed by the new CA; run
#                    plain $0 once every replica serves it (the kubelet
#                    updates a Secret volume within a minute or two), which
#                    drops the old CA.
#   $0 --cert-manager  no certificate: the chart's cert-manager Certificate
#                    (conversion.certManager) makes it, and the CRD gets the
#                    annotation cert-manager.io/inject-ca-from, by which
#                    cert-manager's CA injector fills the caBundle and keeps
#                    it current through renewals.
# Needs kubectl (and openssl without --cert-manager). docs/operations.md,
# "Conversion webhook", says why a step and not a Helm hook.
set -euo pipefail
ns=${NAMESPACE:-network-controller-system}
crd=networks.samplecrd.k8s.io
svc=network-controller-conversion
mode=${1:-}
case "${mode}" in
"" | --rotate-ca | --cert-manager) ;;
*)
	echo "usage: $0 [--rotate-ca | --cert-manager]" >&2
	exit 2
	;;
esac

# point_crd sets the CRD's spec.conversion to the Service, with the
# caBundle $1 (base64) unless it is empty. The url a local run may have
# set (hack/local-run.sh) goes: a client config names a url or a Service,
# never both.
point_crd() {
	local bundle=""
	[[ -n $1 ]] && bundle=",\"caBundle\":\"$1\""
	kubectl patch crd "${crd}" --type=merge -p "{\"spec\":{\"conversion\":{\"strategy\":\"Webhook\",\"webhook\":{
		\"conversionReviewVersions\":[\"v1\"],
		\"clientConfig\":{\"url\":null,\"service\":{\"namespace\":\"${ns}\",\"name\":\"${svc}\",\"path\":\"/convert\",\"port\":443}${bundle}}}}}}" >/dev/null
}

if [[ ${mode} == --cert-manager ]]; then
	# The annotation first: the CA injector fills the caBundle of a CRD
	# that names a webhook, which the patch after it does.
	kubectl annotate crd "${crd}" --overwrite "cert-manager.io/inject-ca-from=${ns}/${svc}" >/dev/null
	point_crd ""
	exit 0
fi

dir=$(mktemp -d)
trap 'rm -rf "${dir}"' EXIT
new_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
		-subj "/CN=network-controller conversion CA $(date -u +%Y%m%dT%H%M%S)" -keyout "${dir}/ca.key" -out "${dir}/ca.crt" 2>/dev/null
	kubectl -n "${ns}" create secret tls "${svc}-ca" --cert="${dir}/ca.crt" --key="${dir}/ca.key" \
		--dry-run=client -o yaml | kubectl apply -f - >/dev/null
}
old_ca=""
if kubectl -n "${ns}" get secret "${svc}-ca" >/dev/null 2>&1; then
	kubectl -n "${ns}" get secret "${svc}-ca" -o jsonpath='{.data.tls\.crt}' | base64 -d >"${dir}/ca.crt"
	kubectl -n "${ns}" get secret "${svc}-ca" -o jsonpath='{.data.tls\.key}' | base64 -d >"${dir}/ca.key"
	if [[ ${mode} == --rotate-ca ]]; then
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
# certificate before any Pod can serve it. A CA injector's annotation left
# from --cert-manager would overwrite this caBundle: it goes.
{
	[[ -n ${old_ca} ]] && echo "${old_ca}"
	cat "${dir}/ca.crt"
} >"${dir}/bundle.crt"
kubectl annotate crd "${crd}" "cert-manager.io/inject-ca-from-" >/dev/null 2>&1 || true
point_crd "$(base64 -w0 <"${dir}/bundle.crt")"
kubectl -n "${ns}" create secret tls "${svc}-tls" --cert="${dir}/tls.crt" --key="${dir}/tls.key" \
	--dry-run=client -o yaml | kubectl apply -f -
