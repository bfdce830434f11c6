#!/bin/sh
# -g fp on a program with frame pointers and a known call tree: at least 99% of its user-mode
# samples carry exactly main;a;b;leaf or main;c;leaf from main down, in the folded output and
# in the SVG drawn from the same recording; no frame of a stack through main falls outside a
# mapping (the dynamic loader's start-up code has no frame pointers: the kernel's walk of a
# sample taken there may well end at an address that is nowhere).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$HOTSTACK" record -q -g fp -o "$dir/t.folded" -o "$dir/t.pb.gz" -o "$dir/t.svg" -- "$WORKLOADS/calltree" 2 ||
	fail "record failed"

# user-mode samples: the leaf frame is not a kernel frame
awk -v out="$dir/stats" '
{
	n = $NF; sub(/ [0-9]+$/, "")
	k = split($0, f, ";")
	if (f[k] ~ /_\[k\]$/) next
	total += n
	chain = ""; seen = 0
	for (i = 2; i <= k; i++) {
		if (f[i] == "main") seen = 1
		if (seen) chain = chain (chain == "" ? "" : ";") f[i]
	}
	if (chain == "main;a;b;leaf" || chain == "main;c;leaf") good += n
	if (seen && $0 ~ /\[unknown\]/) unknown += n
}
END { printf "%d %d %d\n", total, good, unknown > out }
' "$dir/t.folded"
read -r total good unknown <"$dir/stats"
echo "calltree: $good of $total user-mode samples have the exact chain; $unknown with unknown frames"
[ "$total" -ge 200 ] || fail "only $total user-mode samples in 2 s at 999 Hz"
[ $((good * 100)) -ge $((total * 99)) ] || fail "only $good of $total samples have the expected chain: $(cat "$dir/t.folded")"
[ "$unknown" -eq 0 ] || fail "$unknown samples have frames outside every mapping"

# The SVG shows the same tree: b is a child of a, leaf a child of b and of c, and their counts
# add up to the folded counts.
svg_count() { # name parent-chain -> samples in the title of that frame
	grep -o "<title>$1 ([0-9,]* samples" "$dir/t.svg" | sed 's/[^0-9]//g' | awk '{ s += $1 } END { print s + 0 }'
}
[ -s "$dir/t.svg" ] || fail "no SVG written"
leaf_svg=$(svg_count leaf)
leaf_folded=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); if (f[k] == "leaf") s += n } END { print s + 0 }' "$dir/t.folded")
[ "$leaf_svg" -ge "$leaf_folded" ] || fail "SVG leaf frames count $leaf_svg samples, folded $leaf_folded"
for fn in main a b c; do
	grep -q "<title>$fn (" "$dir/t.svg" || fail "SVG has no frame '$fn'"
done
# the saved profile converts to the same folded stacks
"$HOTSTACK" convert "$dir/t.pb.gz" -o "$dir/back.folded" || fail "convert failed"
cmp -s "$dir/t.folded" "$dir/back.folded" || fail "pprof -> folded differs from folded: $(diff "$dir/t.folded" "$dir/back.folded" | head)"

# the saved profile is valid pprof for Go's reader, and its top function is leaf
if command -v go >/dev/null 2>&1; then
	HOME=${HOME:-$dir} PPROF_TMPDIR=$dir go tool pprof -top -symbolize=none "$dir/t.pb.gz" >"$dir/top.txt" 2>"$dir/top.err" ||
		fail "go tool pprof rejected the recording: $(cat "$dir/top.err")"
	awk '$NF == "leaf" { found = 1 } END { exit !found }' "$dir/top.txt" || fail "go tool pprof -top: no leaf: $(cat "$dir/top.txt")"
fi

# --no-kernel: no kernel frame at all, the same user chains
"$HOTSTACK" record -q -g fp --no-kernel -o "$dir/u.folded" -- "$WORKLOADS/calltree" 1 || fail "record --no-kernel failed"
if grep -q '_\[k\]' "$dir/u.folded"; then fail "kernel frames with --no-kernel"; fi
grep -q ';main;a;b;leaf ' "$dir/u.folded" || fail "--no-kernel lost the user chains"
exit 0
