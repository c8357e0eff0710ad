#!/usr/bin/env bash
# Makes a throw-away CA and a serving certificate for 127.0.0.1 with
# openssl, valid one day, for a webhook the local stack's kube-apiserver
# calls: hack/local-certs.sh DIR NAME writes DIR/ca.crt, DIR/ca.key,
# DIR/tls.crt and DIR/tls.key, the CA named "local NAME CA" and the
# certificate NAME. hack/local-run.sh (the conversion webhook) and
# hack/local-injector.sh (the injector) use it; in a cluster,
# hack/conversion-certs.sh and hack/injector-certs.sh make the real ones.
set -euo pipefail
dir="$1"
name="$2"
mkdir -p "${dir}"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj "/CN=local ${name} CA" -keyout "${dir}/ca.key" -out "${dir}/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=${name}" \
	-keyout "${dir}/tls.key" -out "${dir}/tls.csr" 2>/dev/null
openssl x509 -req -in "${dir}/tls.csr" -CA "${dir}/ca.crt" -CAkey "${dir}/ca.key" -CAcreateserial -days 1 \
	-extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') -out "${dir}/tls.crt" 2>/dev/null
