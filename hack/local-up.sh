#!/usr/bin/env bash
# Brings up the local stack for a person and leaves it running in the
# background: etcd and kube-apiserver (built from Go modules) with the
# Network CRD installed, neutron-server with ML2/OVN on MariaDB (Debian
# packages), and a real node (kubelet, containerd, kube-proxy,
# kube-controller-manager, kube-scheduler) that `make deploy` runs the
# project's images on. LOCAL_NODE=0 leaves the node out. It applies no
# Network: the CRD stores samplecrd.k8s.io/v2 and names the in-cluster
# conversion webhook, so a v1 Network is refused until the controller
# serves the webhook (make run points the CRD at it and applies the
# example: hack/local-run.sh).
#
# First run on a fresh machine: about 6 min to build kube-apiserver and
# the node's components from Go modules, the package install (root needed
# for apt) beside it; afterwards ~30 s. docs/operations.md has the figures.
# Stop it with hack/local-down.sh (make down).
set -euo pipefail
# Go 1.27.3 for every go command below, fetched from the module proxy when
# the machine's Go is older (the Makefile and .ci/run export the same).
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${root}"
state="${root}/.local"
pidfile="${state}/local-stack.pid"
mkdir -p "${state}"

if [[ -f "${pidfile}" ]] && kill -0 "$(cat "${pidfile}")" 2>/dev/null && [[ -f "${state}/env" ]]; then
	echo "local stack already running (pid $(cat "${pidfile}"))"
else
	hack/install-packages.sh
	node=true
	if [[ ${LOCAL_NODE:-1} == 0 ]]; then
		node=false
		hack/build-controlplane.sh controlplane
	else
		hack/build-controlplane.sh
		# The node's sandbox image, and the images make deploy runs.
		hack/build-images.sh
	fi
	go build -o bin/local-stack ./hack/local-stack

	echo "starting the local stack (log: .local/local-stack.log)"
	rm -f "${state}/env"
	# setsid: the stack outlives this script and the terminal's Ctrl-C.
	setsid bin/local-stack --dir "${state}" --node="${node}" >"${state}/local-stack.log" 2>&1 </dev/null &
	echo $! >"${pidfile}"

	deadline=$((SECONDS + 180))
	until [[ -f "${state}/env" ]]; do
		if ! kill -0 "$(cat "${pidfile}")" 2>/dev/null; then
			echo "the local stack failed to start:" >&2
			tail -n 40 "${state}/local-stack.log" >&2
			exit 1
		fi
		if ((SECONDS > deadline)); then
			echo "the local stack is not ready after 180s; see .local/local-stack.log" >&2
			exit 1
		fi
		sleep 0.5
	done
fi

# shellcheck source=/dev/null
source "${state}/env"

cat <<MSG

The local stack is running.
  kube-apiserver:  export KUBECONFIG=${KUBECONFIG}
  Keystone:        OS_CLOUD=${OS_CLOUD} in OS_CLIENT_CONFIG_FILE=${OS_CLIENT_CONFIG_FILE}
                   (the controller's project and user; neutron-server through the catalog)
  neutron-server:  ${NEUTRON_ENDPOINT} (a second one without auth: an operator's view)
  OVN Northbound:  ovn-nbctl --db=${OVN_NB_DB} show
  etcd:            ${ETCD_ENDPOINTS}
  all of the above: source .local/env

The controller is not part of the stack: \`make run\` (hack/local-run.sh)
runs it in the foreground on this stack with the CRD's conversion webhook,
and applies the example Network. Then, in another terminal:
  source .local/env
  kubectl get networks.samplecrd.k8s.io -o wide
  ovn-nbctl --db=\$OVN_NB_DB show
Stop the stack with: make down
MSG
