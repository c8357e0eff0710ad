#!/usr/bin/env bash
# Runs Debian's Prometheus beside the local stack, after `make deploy`: it
# scrapes both programs' Pods over HTTPS with the token of the
# ServiceAccount monitoring/prometheus (artifacts/prometheus/rbac.yaml),
# which the API server authorizes to get /metrics, after verifying each
# serving certificate against the CA of hack/injector-certs.sh (the
# webhooks' caBundle: the CA, and during a --rotate-ca the old one too),
# and evaluates the alert
# rules of artifacts/prometheus/rules.yaml. Run it again after the Pods
# changed: it rewrites their list, which Prometheus rereads by itself.
# hack/local-down.sh stops it.
# Environment as hack/deploy.sh's (.local/env, or DEPLOY_ENV=0);
# PROMETHEUS_DIR (.local/prometheus) and PROMETHEUS_PORT (9090);
# PROMETHEUS_CA_FILE, a CA to trust instead (cert-manager's, or a wrong
# one, to see every scrape refused).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
if [[ ${DEPLOY_ENV:-1} != 0 ]]; then
	if [[ ! -f .local/env ]]; then
		echo "no local stack: run make up and make deploy first" >&2
		exit 1
	fi
	# shellcheck source=/dev/null
	source .local/env
fi
dir=${PROMETHEUS_DIR:-${root}/.local/prometheus}
port=${PROMETHEUS_PORT:-9090}
mkdir -p "${dir}/targets" "${dir}/data"

kubectl apply -f artifacts/prometheus/rbac.yaml >/dev/null
kubectl -n monitoring create token prometheus --duration=24h >"${dir}/token"
# What the API server trusts the injector by signs the controller's
# certificate as well; Prometheus rereads the file when it changes.
kubectl get mutatingwebhookconfiguration envoy-injector -o jsonpath='{.webhooks[0].clientConfig.caBundle}' |
	base64 -d >"${dir}/ca.crt.new"
if [[ ! -s ${dir}/ca.crt.new ]]; then
	echo "the webhook envoy-injector has no caBundle: run hack/injector-certs.sh" >&2
	exit 1
fi
mv "${dir}/ca.crt.new" "${dir}/ca.crt"

# targets writes the file_sd list of the Ready Pods of app $2 in namespace
# $1, at port $3.
targets() {
	local first=true
	echo "["
	while read -r name ip; do
		[[ -z ${ip} ]] && continue
		${first} || echo ","
		first=false
		printf '{"targets": ["%s:%s"], "labels": {"pod": "%s"}}\n' "${ip}" "$3" "${name}"
	done < <(kubectl -n "$1" get pods -l "app.kubernetes.io/name=$2" \
		-o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.podIP}{"\n"}{end}')
	echo "]"
}
targets network-controller-system network-controller 8080 >"${dir}/targets/network-controller.json.new"
targets envoy-injector envoy-injector 8443 >"${dir}/targets/envoy-injector.json.new"
for f in "${dir}"/targets/*.new; do mv "${f}" "${f%.new}"; done

sed -e "s#RULES#${root}/artifacts/prometheus/rules.yaml#" -e "s#TOKEN_FILE#${dir}/token#" -e "s#TARGETS#${dir}/targets#" \
	-e "s#CA_FILE#${PROMETHEUS_CA_FILE:-${dir}/ca.crt}#" \
	artifacts/prometheus/prometheus.yml >"${dir}/prometheus.yml"

if [[ -f ${dir}/pid ]] && kill -0 "$(cat "${dir}/pid")" 2>/dev/null; then
	kill -HUP "$(cat "${dir}/pid")" # the token and the rules, again
else
	nohup prometheus --config.file="${dir}/prometheus.yml" --storage.tsdb.path="${dir}/data" \
		--web.listen-address="127.0.0.1:${port}" >"${dir}/prometheus.log" 2>&1 &
	echo $! >"${dir}/pid"
fi
for _ in $(seq 300); do
	if curl -sf "http://127.0.0.1:${port}/-/ready" >/dev/null; then
		echo "Prometheus: http://127.0.0.1:${port} (targets: /targets, alerts: /alerts)"
		exit 0
	fi
	sleep 0.1
done
echo "Prometheus did not become ready; see ${dir}/prometheus.log" >&2
exit 1
