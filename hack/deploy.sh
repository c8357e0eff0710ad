#!/usr/bin/env bash
# make deploy: runs the project in cluster on the local stack's node, from
# the images built here. After `make up`:
#   1. builds the images (hack/build-images.sh) and imports them into the
#      node's containerd (no registry is involved);
#   2. applies the CRD, which names the controller's conversion webhook
#      (the Service network-controller-conversion) but holds no caBundle,
#      and makes the webhook's serving certificate and sets the caBundle
#      (hack/conversion-certs.sh); until the Pods serve it, v1 requests
#      are refused, never stored;
#   3. installs the chart charts/network-controller (helm upgrade
#      --install) with the stack's generated
#      clouds.yaml in the cloud Secret and its cloud's name, so the
#      controller in its Pod authenticates to the stack's Keystone and
#      reaches Neutron through Keystone's catalog, exactly as with a real
#      cloud;
#   4. installs charts/envoy-injector, with its serving certificate
#      (hack/injector-certs.sh), which also signs the certificate of the
#      controller's /metrics (the Secret network-controller-metrics-tls,
#      which the controller's Pods wait for);
#   5. waits until the three Deployments are rolled out (the controller,
#      its conversion webhook, the injector).
# The kustomizations (artifacts/deploy, artifacts/injector) render the same
# objects (test/charts); `kubectl apply -k` works as well as this.
# KUBECONFIG, OS_CLIENT_CONFIG_FILE, OS_CLOUD and CONTAINERD_ADDRESS come
# from .local/env, or from the environment when DEPLOY_ENV=0 (the e2e
# tests' own stack).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
if [[ ${DEPLOY_ENV:-1} != 0 ]]; then
	if [[ ! -f .local/env ]]; then
		echo "no local stack: run make up first" >&2
		exit 1
	fi
	# shellcheck source=/dev/null
	source .local/env
fi
if [[ -z ${CONTAINERD_ADDRESS:-} ]]; then
	echo "the local stack runs without a node (LOCAL_NODE=0): make down && make up" >&2
	exit 1
fi
if [[ ! -r ${OS_CLIENT_CONFIG_FILE:-} || -z ${OS_CLOUD:-} ]]; then
	echo "OS_CLIENT_CONFIG_FILE and OS_CLOUD must name the stack's clouds.yaml and cloud" >&2
	exit 1
fi
hack/build-controlplane.sh helm >/dev/null
helm=bin/helm

hack/build-images.sh
for archive in bin/images/*.tar; do
	ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io images import "${archive}" >/dev/null
done

# Helm leaves namespaces to the installer: both components' meet the
# restricted Pod Security Standard, and say so.
for ns in network-controller-system envoy-injector; do
	kubectl create namespace "${ns}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
	kubectl label namespace "${ns}" pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
done
# The CRD is applied apart as well: Helm installs crds/ only on a first
# install and never upgrades them (Helm's own advice for CRDs).
# A url that `make run` set (hack/local-run.sh) cannot stand beside the
# Service the file names: the API server refuses a webhook with both. Put
# the file's Service back first (v1 requests are refused until the
# script's caBundle and the Pods are there: nothing is lost meanwhile).
if kubectl get crd networks.samplecrd.k8s.io >/dev/null 2>&1; then
	kubectl patch crd networks.samplecrd.k8s.io --type=merge -p '{"spec":{"conversion":{"webhook":{"clientConfig":{"url":null,"service":{"namespace":"network-controller-system","name":"network-controller-conversion","path":"/convert"}}}}}}' >/dev/null
fi
kubectl apply -k artifacts/crd
NAMESPACE=network-controller-system hack/conversion-certs.sh >/dev/null
"${helm}" upgrade --install network-controller charts/network-controller --namespace network-controller-system \
	--set-file cloud.cloudsYaml="${OS_CLIENT_CONFIG_FILE}" --set cloud.cloud="${OS_CLOUD}"
"${helm}" upgrade --install envoy-injector charts/envoy-injector --namespace envoy-injector
hack/injector-certs.sh >/dev/null
kubectl -n network-controller-system rollout status deployment/network-controller --timeout=120s
kubectl -n network-controller-system rollout status deployment/network-controller-conversion --timeout=120s
kubectl -n envoy-injector rollout status deployment/envoy-injector --timeout=120s
