#!/bin/sh
# What the README's first command does after installing and building: profile the demo into a
# flame graph and a report. The graph's stacks reach main.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

demo=${BUILDDIR:?}/demo
cd "$dir"
"$HOTSTACK" record -q -o hotstack.svg -o hotstack.txt -o hotstack.pb.gz -- "$demo" 2 >/dev/null || fail "record failed"
grep -q '</svg>' hotstack.svg || fail "no complete SVG"
grep -q "Top functions by self" hotstack.txt || fail "no report"
"$HOTSTACK" convert hotstack.pb.gz -o d.folded || fail "convert failed"
awk '{ n = $NF; t += n; if ($0 ~ /;main(;| )/) m += n } END { printf "%d %d\n", m, t }' d.folded >stats
read -r main total <stats
echo "demo: $main of $total samples reach main"
[ "$total" -gt 300 ] || fail "only $total samples"
[ $((main * 100)) -ge $((total * 95)) ] || fail "only $main of $total samples reach main"
for fn in merge_sort compare_words generate_words hash_word; do
	grep -q "<title>$fn (" hotstack.svg || fail "the flame graph has no $fn"
done
exit 0
