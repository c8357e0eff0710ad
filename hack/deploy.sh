#!/usr/bin/env bash
# make deploy: runs the project in cluster on the local stack's node, from
# the images built here. After `make up`:
#   1. builds the images (hack/build-images.sh) and imports them into the
#      node's containerd (no registry is involved);
#   2. applies artifacts/deploy through a kustomize overlay made for the
#      local stack (.local/deploy): the cloud Secret holds the stack's
#      generated clouds.yaml, and --os-cloud names its cloud, so the
#      controller in its Pod authenticates to the stack's Keystone and
#      reaches Neutron through Keystone's catalog, exactly as with a real
#      cloud;
#   3. applies artifacts/injector unchanged, with its serving certificate
#      (hack/injector-certs.sh);
#   4. waits until both Deployments are rolled out.
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
overlay=${DEPLOY_OVERLAY:-${root}/.local/deploy}

hack/build-images.sh
for archive in bin/images/*.tar; do
	ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io images import "${archive}" >/dev/null
done

mkdir -p "${overlay}"
chmod 700 "${overlay}" # the kustomization holds the cloud's password
base=$(realpath --relative-to="${overlay}" "${root}/artifacts/deploy")
cat >"${overlay}/kustomization.yaml" <<YAML
# Made by hack/deploy.sh for the local stack: artifacts/deploy, with the
# stack's clouds.yaml in the cloud Secret and its cloud's name.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ${base}
patches:
- target:
    kind: Secret
    name: network-controller-cloud
  patch: |
    - op: replace
      path: /stringData
      value:
        clouds.yaml: |
$(sed 's/^/          /' "${OS_CLIENT_CONFIG_FILE}")
- target:
    kind: Deployment
    name: network-controller
  patch: |
    # The last --os-cloud wins.
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --os-cloud=${OS_CLOUD}
YAML
# The CRD first and apart: the deploy kustomization never holds it, so
# that removing the controller can never remove every Network.
kubectl apply -k artifacts/crd
kubectl apply -k "${overlay}"
kubectl apply -k artifacts/injector
hack/injector-certs.sh >/dev/null
kubectl -n network-controller-system rollout status deployment/network-controller --timeout=120s
kubectl -n envoy-injector rollout status deployment/envoy-injector --timeout=120s
