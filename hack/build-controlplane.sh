#!/usr/bin/env bash
# Builds the real etcd, etcdctl and kube-apiserver from hack/controlplane into bin/.
# Each is rebuilt only when missing or when the module that pins them
# changed, so a warm run costs a hash and nothing else. The first build on
# 2 cores takes about 12 minutes (kube-apiserver is most of it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src="${root}/hack/controlplane"
bin="${BIN_DIR:-${root}/bin}"
mkdir -p "${bin}"

# The stamp is a hash of everything that decides what gets built.
stamp=$(cd "${src}" && cat go.mod go.sum $(find . -name '*.go' | sort) | sha256sum | cut -d' ' -f1)

kube_version=$(cd "${src}" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "${kube_version}" | cut -d. -f2)
version_pkg=k8s.io/component-base/version
ldflags="-s -w -X ${version_pkg}.gitVersion=${kube_version} -X ${version_pkg}.gitMajor=1 -X ${version_pkg}.gitMinor=${minor} -X ${version_pkg}.gitTreeState=clean"

build() {
	local name=$1
	if [[ -x "${bin}/${name}" && "$(cat "${bin}/.${name}.stamp" 2>/dev/null)" == "${stamp}" ]]; then
		echo "${name}: up to date"
		return
	fi
	echo "${name}: building (first build takes minutes)"
	local start=${SECONDS}
	(cd "${src}" && go build -trimpath -ldflags "${ldflags}" -o "${bin}/${name}" "./${name}")
	echo "${stamp}" >"${bin}/.${name}.stamp"
	echo "${name}: built in $((SECONDS - start))s"
}

build etcd
build etcdctl
build kube-apiserver
