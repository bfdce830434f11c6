#!/bin/sh
# report --lines: a recording of prefixed-spin-alpha (built -O2 -g) broken down by source line
# shows rows "function file:line"; the hottest by self is alpha_inner_spin at the line of its
# loop body (prefixed-spin.c: 'sink = sink * 0.999 + i;'), with most of the samples; without
# --lines the rows name functions only.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

src="$SRCDIR/tests/workloads/prefixed-spin.c"
hot=$(grep -n 'sink = sink \* 0.999 + i;' "$src" | cut -d: -f1)
[ -n "$hot" ] || fail "no hot line in $src"
"$HOTSTACK" record -q -o "$dir/rec.pb.gz" -- "$WORKLOADS/prefixed-spin-alpha" 1 || fail "record failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --lines >"$dir/lines.txt" || fail "report --lines failed"
"$HOTSTACK" report "$dir/rec.pb.gz" >"$dir/plain.txt" || fail "report failed"

first=$(sed -n '/^Top functions by self/{n;n;p;q}' "$dir/lines.txt")
echo "hottest: $first"
echo "$first" | grep -Eq "  alpha_inner_spin prefixed-spin\.c:$hot  \[prefixed-spin-alpha\]\$" ||
	fail "the hottest row is not alpha_inner_spin at prefixed-spin.c:$hot: $first"
share=$(echo "$first" | awk '{ sub("%", "", $1); print int($1) }')
[ "$share" -ge 50 ] || fail "the hot line has only $share% of the samples"
grep -q "prefixed-spin\.c:" "$dir/plain.txt" && fail "rows name source lines without --lines"
exit 0
