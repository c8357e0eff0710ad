#!/usr/bin/env bash
# Builds the images the local node runs and writes each as an OCI archive
# into bin/images/, which the framework imports into the node's containerd
# (no registry is reachable here, and none is needed):
#   - the project's image (make image: both binaries, FROM scratch), under
#     the name and tag of artifacts/deploy/kustomization.yaml;
#   - the node's pause image (hack/node/pause), containerd's sandbox image;
#   - a stand-in for the Envoy sidecar of artifacts/injector's template,
#     under that template's image name: the pause binary at the template's
#     command path (/usr/local/bin/envoy); it ignores Envoy's arguments and
#     runs until stopped, so an injected Pod really starts.
# Uses docker where a Docker engine runs, else podman (make image's rule).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
bin="${BIN_DIR:-${root}/bin}"
out="${bin}/images"
mkdir -p "${out}"
# --no-print-directory: under a parent make, -w would put "Entering
# directory" lines into the captured values.
tool=$(make -s --no-print-directory container-tool)

make -s image
image=$(make -s --no-print-directory image-name)
pause=localhost/pause:local
# Fully qualified, as the kubelet asks containerd for it.
envoy=$(awk '/image:/ {print $2; exit}' artifacts/injector/envoy-initializer.yaml)
[[ ${envoy} == */*/* ]] || envoy=docker.io/${envoy}

[[ -x "${bin}/pause" ]] || hack/build-controlplane.sh node
ctx=$(mktemp -d)
trap 'rm -rf "${ctx}"' EXIT
cp "${bin}/pause" hack/node/pause/Dockerfile "${ctx}/"
"${tool}" build -q -t "${pause}" "${ctx}" >/dev/null
cat >"${ctx}/Dockerfile" <<DOCKERFILE
FROM scratch
COPY pause /usr/local/bin/envoy
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/envoy"]
DOCKERFILE
"${tool}" build -q -t "${envoy}" "${ctx}" >/dev/null

save() {
	rm -f "${out}/$2.tar"
	"${tool}" save --format oci-archive -o "${out}/$2.tar" "$1" 2>/dev/null ||
		"${tool}" save -o "${out}/$2.tar" "$1" # docker: its own archive format, which ctr also imports
	echo "images: $1 -> ${out}/$2.tar"
}
save "${image}" network-controller
save "${pause}" pause
save "${envoy}" envoy-standin
