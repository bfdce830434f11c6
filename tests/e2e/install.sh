#!/bin/sh
# meson install puts a working hotstack and its man page under DESTDIR, and the page has every
# option of every command that the command's --help lists.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${BUILDDIR:?}"
command -v man >/dev/null 2>&1 || skip "no man (apt-get install man-db)"

meson install -C "$BUILDDIR" --destdir "$dir/root" --no-rebuild --quiet >"$dir/install.log" 2>&1 ||
	fail "meson install failed: $(cat "$dir/install.log")"
bin=$(find "$dir/root" -path '*/bin/hotstack' -type f)
page=$(find "$dir/root" -path '*/man1/hotstack.1' -type f)
[ -n "$bin" ] || fail "no bin/hotstack installed: $(find "$dir/root" -type f)"
[ -n "$page" ] || fail "no man1/hotstack.1 installed: $(find "$dir/root" -type f)"
"$bin" --version | grep -q '^hotstack [0-9]' || fail "the installed hotstack does not run"

MANWIDTH=200 man -l "$page" >"$dir/man.txt" 2>"$dir/man.err" || fail "man -l failed: $(cat "$dir/man.err")"
[ ! -s "$dir/man.err" ] || fail "man -l warned: $(cat "$dir/man.err")"
"$bin" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }' >"$dir/commands"
[ "$(wc -l <"$dir/commands")" -ge 7 ] || fail "the command list: $(cat "$dir/commands")"
while read -r cmd; do
	grep -q "^HOTSTACK $(echo "$cmd" | tr a-z A-Z)\$" "$dir/man.txt" || fail "no section for $cmd"
	"$bin" "$cmd" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$dir/opts"
	[ -s "$dir/opts" ] || fail "$cmd --help lists no options"
	while read -r opt; do
		grep -qF -- "$opt" "$dir/man.txt" || fail "the man page lacks $cmd's $opt"
	done <"$dir/opts"
done <"$dir/commands"
echo "install: $(wc -l <"$dir/commands") commands, every option of each in the man page"
