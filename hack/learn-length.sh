#!/usr/bin/env bash
# Prints what a learner reads on the learning path (README's "Learn the
# pattern" leads there): docs/learn/README.md, each chapter of docs/learn
# up to 12 (13, building your own, is typing, not reading), the READMEs
# under docs/learn a chapter sends the learner to (controller-runtime/'s,
# from chapter 12), and the code the chapters send the learner to, in
# lines and words, and the total. The chapters after 13 (14, API versions
# and conversion) are beyond the hour: they follow the total with a figure
# of their own, their chapters and the code they name that the path has
# not already counted. README states both figures; test/docs runs this
# script and fails when they drift apart.
#
# What a chapter sends the learner to is each link above the chapter's
# "Beyond the path" heading (what is below it is further reading) to a .go
# file, or to a README.md under docs/learn. A link whose text is a declared
# name in code font, [`Name`](file.go) or [`Type.Method`](file.go), is
# that declaration alone, its doc comment included, and the generator
# markers (// +genclient) a blank line above that comment, which the
# generators read as the type's; any other link to a .go file is the whole
# file, and a declaration in a file counted whole is not counted again.
# The READMEs are counted whole; their own links are an index of what the
# chapters name, and are not followed. Each is counted once, however many
# chapters name it.
set -o errexit
set -o nounset
set -o pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

row() {
	printf '%-72s %6d %6d\n' "$1" "$2" "$3"
	lines_sum=$((lines_sum + $2))
	words_sum=$((words_sum + $3))
}

# declaration prints the declaration of name in file, its doc comment
# included: a func, a method (Type.Method, its receiver named or not, as
# func (Webhook) ServeHTTP is) or a type, up to the closing brace at the
# start of a line (gofmt's layout). A block of generator markers (lines
# // +...) one blank line above the doc comment is printed too, with the
# blank line: k8s.io/code-generator reads it as the type's
# (SecondClosestCommentLines), and chapters 1 and 13 teach +genclient
# there. go doc -src does it for a package's code, not for a test file's
# fixture such as newFixture.
declaration() {
	local file=$1 name=$2 start
	if [[ "${name}" == *.* ]]; then
		start="^func \\(([A-Za-z_]+ )?\\*?${name%%.*}\\) ${name#*.}\\("
	else
		start="^(func ${name}\\(|type ${name} )"
	fi
	awk -v start="${start}" '
		/^\/\// {
			if (doc == "") { onlymarkers = 1 }
			if ($0 !~ /^\/\/ \+/) { onlymarkers = 0 }
			doc = doc $0 "\n"
			next
		}
		!found && $0 ~ start { found = 1; printf "%s%s", markers, doc }
		# A marker block and the blank line after it wait for the doc
		# comment below them; anything else drops them.
		{ markers = ($0 == "" && doc != "" && onlymarkers) ? doc "\n" : ""; doc = "" }
		found { print; if ($0 == "}") exit }
	' "${file}"
}

# measure prints a row for each chapter given (a README.md given is a page:
# counted, its links not followed), each README under docs/learn they link
# to, and each piece of code they name that no chapter measured before has
# named (seen), and leaves their sums in lines_sum, words_sum and code_sum.
declare -A seen=()
measure() {
	local chapter text target file name unit lines words src label
	local units=() pages=()
	lines_sum=0 words_sum=0 code_sum=0
	for chapter in "$@"; do
		seen[${chapter}]=1
		read -r lines words _ < <(wc -lw "${chapter}")
		row "${chapter}" "${lines}" "${words}"
		if [[ "${chapter}" == */README.md ]]; then
			continue
		fi
		# The links of the chapter's path: everything above "Beyond the path".
		while IFS=$'\t' read -r text target; do
			file=$(realpath --relative-to=. "docs/learn/${target%%#*}")
			name=${text//\`/}
			if [[ "${file}" == *.md ]]; then
				if [[ "${file}" == docs/learn/*README.md && -z "${seen[${file}]:-}" ]]; then
					seen[${file}]=1
					pages+=("${file}")
				fi
				continue
			fi
			if [[ "${text}" == \`*\` && "${name}" =~ ^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$ ]]; then
				unit="${file} ${name}"
			else
				unit="${file}"
			fi
			if [[ -z "${seen[${unit}]:-}" ]]; then
				seen[${unit}]=1
				units+=("${unit}")
			fi
		done < <(sed '/^## Beyond the path/,$d' "${chapter}" |
			grep -oE '\[[^]]+\]\([^)]+\.(go|md)(#[^)]*)?\)' |
			sed -E 's/^\[([^]]+)\]\(([^)]+)\)$/\1\t\2/')
	done
	for file in "${pages[@]}"; do
		read -r lines words _ < <(wc -lw "${file}")
		row "${file}" "${lines}" "${words}"
	done
	for unit in "${units[@]}"; do
		read -r file name <<<"${unit}"
		if [[ -n "${name:-}" ]]; then
			src=$(declaration "${file}" "${name}")
			if [[ -z "${src}" ]]; then
				echo "${file} declares no ${name}" >&2
				exit 1
			fi
			# Read already: its file is counted whole.
			if [[ -n "${seen[${file}]:-}" ]]; then
				continue
			fi
			lines=$(printf '%s\n' "${src}" | wc -l)
			words=$(printf '%s\n' "${src}" | wc -w)
			label="${file} ${name}"
		else
			read -r lines words _ < <(wc -lw "${file}")
			label="${file}"
		fi
		row "${label}" "${lines}" "${words}"
		code_sum=$((code_sum + lines))
	done
}

# The path is docs/learn/README.md, where README's "Learn the pattern"
# leads, and the chapters before 13, which is building time, not reading:
# its steps are typed. The chapters after 13 are beyond the hour.
path=(docs/learn/README.md)
beyond=()
for chapter in docs/learn/[0-9][0-9]-*.md; do
	number=${chapter#docs/learn/}
	number=$((10#${number%%-*}))
	if ((number < 13)); then
		path+=("${chapter}")
	elif ((number > 13)); then
		beyond+=("${chapter}")
	fi
done

printf '%-72s %6s %6s\n' "chapter, or code a chapter names" lines words
measure "${path[@]}"
printf '%-72s %6d\n' "of which code" "${code_sum}"
printf '%-72s %6d %6d\n' total "${lines_sum}" "${words_sum}"
measure "${beyond[@]}"
printf '%-72s %6d\n' "beyond the hour, of which code" "${code_sum}"
printf '%-72s %6d %6d\n' "beyond the hour" "${lines_sum}" "${words_sum}"
