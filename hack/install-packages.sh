#!/usr/bin/env bash
# Installs the Debian packages behind the local stack: OVN's databases
# (ovn-central), an OVN chassis for e2e hosts on Networks (openvswitch-switch
# and ovn-host: test/framework/chassis.go), neutron-server (ML2/OVN), MariaDB and Keystone; for the real node,
# containerd, the CNI plugins and iptables; and podman to build the images
# without a Docker engine; Prometheus (and promtool) to scrape both programs
# and test the alert rules. Packages already present are not touched, so a
# second run costs one dpkg query.
#
# Debian's packages start their own services on their default ports when a
# service manager is present; a policy-rc.d that answers 101 ("action
# forbidden") stops that for the length of the install. The project starts
# every daemon itself, on free loopback ports (test/framework, hack/local-up.sh).
set -euo pipefail

packages=(ovn-central openvswitch-switch ovn-host neutron-server python3-pymysql mariadb-server-core mariadb-client-core
	keystone containerd containernetworking-plugins runc iptables podman prometheus)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("${p}")
	fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "stack packages: already installed"
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "installing ${missing[*]} needs root (apt-get)" >&2
	exit 1
fi

policy=/usr/sbin/policy-rc.d
created_policy=false
if [[ ! -e "${policy}" ]]; then
	printf '#!/bin/sh\nexit 101\n' >"${policy}"
	chmod +x "${policy}"
	created_policy=true
fi
trap '[[ ${created_policy} == true ]] && rm -f "${policy}"' EXIT

echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "stack packages: installed"
