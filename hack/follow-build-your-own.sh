#!/usr/bin/env bash
# Follows chapter 13 (docs/learn/13-build-your-own.md) as a learner does,
# in an empty directory: its ```sh no-run follow blocks are run in order,
# each where the one before left off, and what the chapter says to write
# by hand is copied in between from build-your-own/ (step-01's files but
# what the commands generate, then step-09's). It fails unless the API
# module's generated code is exactly the one step-01 checks in, and both
# modules' tests pass: a command the chapter forgot, or one that no
# longer works, fails `make unit`.
#
# The blocks are fenced `sh no-run follow` so that hack/check-docs.sh,
# which runs a stack, leaves them to this script.
set -euo pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chapter="${root}/docs/learn/13-build-your-own.md"
steps="${root}/docs/learn/build-your-own"

work=$(mktemp -d)
trap 'chmod -R u+w "${work}"; rm -rf "${work}"' EXIT # the module cache's files are read-only

mapfile -d '' blocks < <(awk '
	/^[ \t]*```sh no-run follow[ \t]*$/ { inblock = 1; body = ""; next }
	/^[ \t]*```/ { if (inblock) { printf "%s%c", body, 0 }; inblock = 0; next }
	inblock { body = body $0 "\n" }
' "${chapter}")
if [[ ${#blocks[@]} -ne 5 ]]; then
	echo "follow: ${chapter} has ${#blocks[@]} sh no-run follow blocks, want 5 (start the API module, generate, test; start the controller module, test)" >&2
	exit 1
fi

# follow N: runs block N in the directory the block before ended in, as
# one shell session would, and records where it ends.
dir=${work}
follow() {
	echo "follow: block $(($1 + 1)) in ${dir#"${work}"}/"
	printf '%s' "${blocks[$1]}" | sed 's/^/    /'
	dir=$(cd "${dir}" && bash -euo pipefail -c "${blocks[$1]}"$'\n''pwd >&3' 3>&1 1>&2)
}

# by_hand STEP PATHSPEC...: copies what the learner writes by hand from
# STEP: its tracked files that PATHSPEC names, less go.mod, go.sum and
# what the generators write.
by_hand() {
	local step=$1
	shift
	local file
	# Mode 644, as a file the learner writes is: the chapter says what to
	# make executable.
	while IFS= read -r -d '' file; do
		install -D -m 644 "${steps}/${step}/${file}" "${dir}/${file}"
	done < <(cd "${steps}/${step}" && git ls-files -z -- "$@" ':!go.mod' ':!go.sum' ':!generated' ':!*zz_generated*')
}

follow 0 # mkdir greeting, go mod init, the generators' tool lines
by_hand step-01 . ':!*_test.go'
follow 1 # go mod tidy, hack/update-codegen.sh, client-go
for generated in generated api/tutorial/v1/zz_generated.deepcopy.go; do
	if ! diff -r "${dir}/${generated}" "${steps}/step-01/${generated}"; then
		echo "follow: the chapter's commands generate another ${generated} than step-01 checks in" >&2
		exit 1
	fi
done
by_hand step-01 '*_test.go'
follow 2 # go mod tidy for the test's imports, go test
if ! diff "${dir}/go.mod" "${steps}/step-01/go.mod"; then
	echo "follow: the chapter's commands write another go.mod than step-01 checks in" >&2
	exit 1
fi

follow 3 # beside it, the controller module, its replace pointing at the API module
by_hand step-09 .
follow 4 # go mod tidy, go vet, go test
echo "follow: chapter 13 from go mod init ends in passing tests"
