#!/usr/bin/env bash
# Fails when the controller, the webhook or any other package of the root
# module, or the controller-runtime example (docs/learn/controller-runtime,
# a module of its own), calls code with a known vulnerability: govulncheck
# in its default (source) mode, which reports only what the call graph
# reaches and exits non-zero when it finds any.
#
# Offline: the database is not fetched from vuln.go.dev (this project's CI
# reaches only the Go module proxy and Debian's apt). It is built from the
# module golang.org/x/vulndb, which the module proxy serves and whose
# data/osv holds every entry as an OSV file, by that module's cmd/indexdb,
# into bin/vulndb; it is rebuilt only when the pinned vulndb version
# changes (bin/.vulndb.stamp). Both tools, and so the database's version,
# are pinned in one place: hack/tools/go.mod
# (`cd hack/tools && go get golang.org/x/vulndb@latest` moves it forward).
#
# A clean answer is trusted only from a database that sees: before the
# project's modules, govulncheck scans hack/vulncheck-canary, a program
# that calls a known vulnerable function on purpose, and the check fails
# unless it finds that vulnerability (an empty or stale database, a
# broken build of it, or a govulncheck that reads none would otherwise
# pass everything). The output names the database's date: its version's.
# VULNCHECK_DB, when set, is a database to scan with instead, used as it
# is (test/supplychain gives it an empty one).
set -euo pipefail
# Go 1.27.3 for every go command below, fetched from the module proxy when
# the machine's Go is older (the Makefile and .ci/run export the same).
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="${BIN_DIR:-${root}/bin}"
tools="${root}/hack/tools"
mkdir -p "${bin}"

# Built from hack/tools' tool directives; the build cache makes a second
# build cost a link at most.
go -C "${tools}" build -o "${bin}/govulncheck" golang.org/x/vuln/cmd/govulncheck

db="${VULNCHECK_DB:-${bin}/vulndb}"
version=$(go -C "${tools}" list -m -f '{{.Version}}' golang.org/x/vulndb)
if [[ -z "${VULNCHECK_DB:-}" && (! -d "${db}" || "$(cat "${bin}/.vulndb.stamp" 2>/dev/null)" != "${version}") ]]; then
	echo "vulndb: building the database of golang.org/x/vulndb ${version}"
	start=${SECONDS}
	go -C "${tools}" mod download golang.org/x/vulndb
	src=$(go -C "${tools}" list -m -f '{{.Dir}}' golang.org/x/vulndb)
	go -C "${tools}" build -o "${bin}/indexdb" golang.org/x/vulndb/cmd/indexdb
	# Written beside the old one and swapped in whole, so an interrupted
	# build never leaves a half database under a current stamp.
	rm -rf "${db}.new"
	"${bin}/indexdb" -vulns "${src}/data/osv" -out "${db}.new"
	rm -rf "${db}"
	mv "${db}.new" "${db}"
	echo "${version}" >"${bin}/.vulndb.stamp"
	echo "vulndb: built in $((SECONDS - start))s"
fi
# `$0 db` stops here: .ci/run builds the tools and the database beside the
# control plane's build, so that make test's vulncheck only scans.
if [[ ${1:-} == db ]]; then
	exit 0
fi

# The database's date is its version's: a pseudo-version's timestamp.
stamp=${version#v0.0.0-}
stamp=${stamp%%-*}
dated="${stamp:0:4}-${stamp:4:2}-${stamp:6:2}"
canary=GO-2022-1059
echo "govulncheck: database golang.org/x/vulndb ${version}, dated ${dated}${VULNCHECK_DB:+ (VULNCHECK_DB=${db})}"
canary_out=$("${bin}/govulncheck" -db "file://${db}" -C "${root}/hack/vulncheck-canary" ./... 2>&1) || true
if ! grep -q "${canary}" <<<"${canary_out}"; then
	echo "govulncheck: the database is blind: it does not find ${canary} in hack/vulncheck-canary, which calls it on purpose; no clean answer of it is trusted" >&2
	echo "${canary_out}" | tail -20 >&2
	exit 1
fi
echo "govulncheck: the database sees ${canary} in the canary"

status=0
for module in . docs/learn/controller-runtime; do
	echo "govulncheck: ${module} (database golang.org/x/vulndb ${version}, dated ${dated})"
	"${bin}/govulncheck" -db "file://${db}" -C "${root}/${module}" ./... || status=$?
done
exit "${status}"
