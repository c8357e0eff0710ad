#!/usr/bin/env bash
# Fails when the generated code is not what hack/update-codegen.sh would
# produce from the current API types: it regenerates into a scratch copy of
# the tree and compares. The working tree is never modified.
set -o errexit
set -o nounset
set -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT

# Everything but build output and git's own files, so the copy builds as the
# original does.
tar -C "${root}" --exclude=./bin --exclude=./.git -cf - . | tar -C "${scratch}" -xf -

# Share the generator binaries with the real tree: they are a cache only.
CODEGEN_BIN="${root}/bin/codegen" "${scratch}/hack/update-codegen.sh" >/dev/null

status=0
for path in pkg hack/api-rule-violations.list; do
	if ! diff -Naupr "${root}/${path}" "${scratch}/${path}"; then
		status=1
	fi
done
if [[ ${status} -ne 0 ]]; then
	echo "generated code is out of date: run hack/update-codegen.sh" >&2
	exit 1
fi
echo "generated code is up to date"
