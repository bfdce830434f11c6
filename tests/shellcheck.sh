#!/bin/sh
# Runs shellcheck (warnings and errors; .shellcheckrc at the top) over every shell script of the
# source tree: the files git tracks in a checkout, every file otherwise (a release tarball). A
# shell script is a *.sh file or a file whose first line starts sh, bash, dash or ksh.
#   SHELLCHECK=/usr/bin/shellcheck SRCDIR=. tests/shellcheck.sh
set -eu
: "${SRCDIR:?SRCDIR must name the source tree}"
sc=${SHELLCHECK:-shellcheck}
if ! command -v "$sc" >/dev/null 2>&1; then
	echo "shellcheck: SKIP: $sc is not installed (scripts/install-deps --test)" >&2
	exit 77
fi
cd "$SRCDIR"
list=$(mktemp "${TMPDIR:-/tmp}/hs-shellcheck.XXXXXX")
trap 'rm -f "$list"' EXIT

if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	git ls-files >"$list"
else
	find . \( -path ./.git -o -path './build*' -o -name node_modules \) -prune -o -type f -print |
		sed 's|^\./||' | sort >"$list"
fi

is_shell() {
	case $1 in *.sh) return 0 ;; esac
	head -c 128 "$1" | head -n 1 | grep -qaE '^#![[:space:]]*/[^[:space:]]*/(env[[:space:]]+)?(ba|da|k)?sh([[:space:]]|$)'
}

set --
while IFS= read -r f; do
	if [ -f "$f" ] && is_shell "$f"; then
		set -- "$@" "$f"
	fi
done <"$list"
if [ $# -eq 0 ]; then
	echo "shellcheck: no shell scripts found under $SRCDIR" >&2
	exit 1
fi
echo "shellcheck: $# scripts"
"$sc" -x -S warning "$@"
