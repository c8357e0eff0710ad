#!/usr/bin/env bash
# Stops the local stack that hack/local-up.sh started, and removes its data.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
state="${root}/.local"
pidfile="${state}/local-stack.pid"

if [[ -f "${pidfile}" ]] && pid=$(cat "${pidfile}") && kill -0 "${pid}" 2>/dev/null; then
	kill -TERM "${pid}"
	deadline=$((SECONDS + 120))
	while kill -0 "${pid}" 2>/dev/null; do
		if ((SECONDS > deadline)); then
			echo "the local stack did not stop in 120s; killing it" >&2
			kill -KILL "${pid}" 2>/dev/null || true
			# What its node left on the host goes too.
			"${root}/bin/local-stack" --cleanup || true
			break
		fi
		sleep 0.2
	done
	echo "local stack stopped"
else
	echo "no local stack running"
fi
if [[ -f "${state}/injector.pid" ]]; then
	kill "$(cat "${state}/injector.pid")" 2>/dev/null || true
fi
if [[ -f "${state}/prometheus/pid" ]]; then
	kill "$(cat "${state}/prometheus/pid")" 2>/dev/null || true
fi
rm -rf "${state}"
