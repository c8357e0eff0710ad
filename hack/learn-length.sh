#!/usr/bin/env bash
# Prints what a learner reads on the learning path (README's "Learn the
# pattern" leads there): each chapter of docs/learn and controller.go, in
# lines and words, and the total. README states the total; test/docs fails
# when the two drift apart.
set -o errexit
set -o nounset
set -o pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
total_lines=0
total_words=0
printf '%-40s %6s %6s\n' file lines words
for f in docs/learn/[0-9][0-9]-*.md controller.go; do
	read -r lines words _ < <(wc -lw "${f}")
	printf '%-40s %6d %6d\n' "${f}" "${lines}" "${words}"
	total_lines=$((total_lines + lines))
	total_words=$((total_words + words))
done
printf '%-40s %6d %6d\n' total "${total_lines}" "${total_words}"
