#!/bin/bash
# Reading what perf records, in one run on one machine:
#  1. a DWARF-mode perf.data to folded stacks: `hotstack convert perf.data -o x.folded` against
#     `perf script -i perf.data | stackcollapse-perf.pl` (target: at least 10x faster);
#  2. perf script text to folded stacks: `hotstack collapse` against stackcollapse-perf.pl on the
#     same text (target: at least 20x faster).
# Needs perf and a FlameGraph checkout (FLAMEGRAPH=dir, default /tmp/FlameGraph); exits 77 with
# a reason without them.
#
#   FLAMEGRAPH=~/src/FlameGraph bench/perf-data-convert.sh      # BUILD=build DURATION=5 RUNS=3
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
workload=$build/bench/record-workload
fg=${FLAMEGRAPH:-/tmp/FlameGraph}
secs=${DURATION:-5}
runs=${RUNS:-3}

skip() {
	echo "perf-data-convert: skipped: $*" >&2
	exit 77
}
command -v perf >/dev/null || skip "perf not found (apt-get install linux-perf)"
[ -f "$fg/stackcollapse-perf.pl" ] || skip "no stackcollapse-perf.pl in $fg (set FLAMEGRAPH)"
[ -x "$hotstack" ] && [ -x "$workload" ] || { echo "build first (ninja -C build)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/hotstack-perf-data.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
perf record -q --call-graph dwarf -F 999 -o "$tmp/perf.data" -- "$workload" "$secs" >/dev/null 2>"$tmp/rec.err" ||
	skip "perf record failed: $(head -1 "$tmp/rec.err")"

# seconds of wall time of a command line, best of $runs
best() {
	local t0 t1 t b=""
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N)
		bash -c "$1" >/dev/null 2>&1
		t1=$(date +%s.%N)
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
	done
	echo "$b"
}

size=$(stat -c %s "$tmp/perf.data")
samples=$(perf script -i "$tmp/perf.data" -F ip 2>/dev/null | grep -c '^$' || true)
hs=$(best "'$hotstack' convert '$tmp/perf.data' -o '$tmp/hs.folded'")
pf=$(best "perf script -i '$tmp/perf.data' 2>/dev/null | perl '$fg/stackcollapse-perf.pl' > '$tmp/perf.folded'")
echo "perf.data (--call-graph dwarf, ${secs} s at 999 Hz): $((size / 1048576)) MiB, about $samples samples"
printf '  hotstack convert                     %8.2f s\n' "$hs"
printf '  perf script | stackcollapse-perf.pl  %8.2f s\n' "$pf"
awk -v a="$pf" -v b="$hs" 'BEGIN { r = b > 0 ? a / b : 0; printf "  ratio %.1fx (target >= 10x: %s)\n", r, (r >= 10 ? "met" : "not met") }'

perf script -i "$tmp/perf.data" 2>/dev/null >"$tmp/script.txt"
for _ in 1 2 3; do cat "$tmp/script.txt"; done >"$tmp/script3.txt"
tsize=$(stat -c %s "$tmp/script3.txt")
hc=$(best "'$hotstack' collapse '$tmp/script3.txt' > '$tmp/hc.folded'")
pc=$(best "perl '$fg/stackcollapse-perf.pl' '$tmp/script3.txt' > '$tmp/pc.folded'")
cmp -s "$tmp/hc.folded" "$tmp/pc.folded" && same=identical || same=DIFFERENT
echo "perf script text: $((tsize / 1048576)) MiB (outputs $same)"
awk -v t="$tsize" -v s="$hc" 'BEGIN { printf "  hotstack collapse      %8.2f s  %8.1f MB/s\n", s, (s > 0 ? t / s / 1e6 : 0) }'
awk -v t="$tsize" -v s="$pc" 'BEGIN { printf "  stackcollapse-perf.pl  %8.2f s  %8.1f MB/s\n", s, (s > 0 ? t / s / 1e6 : 0) }'
awk -v a="$pc" -v b="$hc" 'BEGIN { r = b > 0 ? a / b : 0; printf "  ratio %.1fx (target >= 20x: %s)\n", r, (r >= 20 ? "met" : "not met") }'
