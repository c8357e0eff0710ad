#!/usr/bin/env bash
# Builds the real Kubernetes components from Go modules into bin/:
#   hack/controlplane: etcd, etcdctl, kube-apiserver;
#   hack/node:         kubelet, kube-controller-manager, kube-scheduler,
#                      kube-proxy, and the node's pause binary;
#   hack/helm:         helm (Debian 12 has no package), about a minute.
# Each is rebuilt only when missing or when the module that pins it
# changed, so a warm run costs a hash and nothing else. On 2 cores, the
# first build of the control plane takes about 12 minutes, and the node's
# about 10 more (3 when the Go build cache is warm from kube-apiserver).
# `$0 controlplane`, `$0 node` or `$0 helm` builds one module only.
set -euo pipefail
# Go 1.27.3 for every go command below, fetched from the module proxy when
# the machine's Go is older (the Makefile and .ci/run export the same).
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="${BIN_DIR:-${root}/bin}"
mkdir -p "${bin}"

# build_module builds the named commands of hack/<module>. The stamp is a
# hash of everything that decides what gets built.
build_module() {
	local src="${root}/hack/$1"
	shift
	local stamp kube_version minor ldflags
	stamp=$(cd "${src}" && cat go.mod go.sum $(find . -name '*.go' | sort) | sha256sum | cut -d' ' -f1)
	kube_version=$(cd "${src}" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
	minor=$(echo "${kube_version}" | cut -d. -f2)
	local version_pkg=k8s.io/component-base/version
	ldflags="-s -w -X ${version_pkg}.gitVersion=${kube_version} -X ${version_pkg}.gitMajor=1 -X ${version_pkg}.gitMinor=${minor} -X ${version_pkg}.gitTreeState=clean"
	for name in "$@"; do
		if [[ -x "${bin}/${name}" && "$(cat "${bin}/.${name}.stamp" 2>/dev/null)" == "${stamp}" ]]; then
			echo "${name}: up to date"
			continue
		fi
		echo "${name}: building (first build takes minutes)"
		local start=${SECONDS}
		# pause runs in a FROM scratch image, so it must be static; the
		# rest run on the host and are built as upstream builds them.
		local cgo=${CGO_ENABLED:-1}
		[[ ${name} == pause ]] && cgo=0
		(cd "${src}" && CGO_ENABLED=${cgo} go build -trimpath -ldflags "${ldflags}" -o "${bin}/${name}" "./${name}")
		echo "${stamp}" >"${bin}/.${name}.stamp"
		echo "${name}: built in $((SECONDS - start))s"
	done
}

# build_helm builds helm from hack/helm's tool directive, stamped with its
# version and with the Kubernetes version of its client libraries, as
# helm's own Makefile does (helm template assumes that version).
build_helm() {
	local src="${root}/hack/helm" stamp version k8s minor
	stamp=$(cd "${src}" && cat go.mod go.sum | sha256sum | cut -d' ' -f1)
	if [[ -x "${bin}/helm" && "$(cat "${bin}/.helm.stamp" 2>/dev/null)" == "${stamp}" ]]; then
		echo "helm: up to date"
		return
	fi
	echo "helm: building"
	local start=${SECONDS}
	version=$(cd "${src}" && go list -m -f '{{.Version}}' helm.sh/helm/v3)
	k8s=$(cd "${src}" && go list -m -f '{{.Version}}' k8s.io/client-go)
	minor=$(echo "${k8s}" | cut -d. -f2)
	(cd "${src}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=${version} \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${minor} \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${minor}" \
		-o "${bin}/helm" helm.sh/helm/v3/cmd/helm)
	echo "${stamp}" >"${bin}/.helm.stamp"
	echo "helm: built in $((SECONDS - start))s"
}

what=${1:-all}
if [[ ${what} == all || ${what} == controlplane ]]; then
	build_module controlplane etcd etcdctl kube-apiserver
fi
if [[ ${what} == all || ${what} == node ]]; then
	build_module node kubelet kube-controller-manager kube-scheduler kube-proxy pause
fi
if [[ ${what} == all || ${what} == helm ]]; then
	build_helm
fi
