#!/bin/sh
# libhotstack-jit's files are accepted by perf: the toy JIT (tests/workloads/toy-jit.c) recorded
# by `perf record -k 1` (CLOCK_MONOTONIC, the jitdump's clock), `perf inject --jit` turns its
# jitdump into ELF files, and `perf report` names jit_alpha and jit_beta, about 2/3 and 1/3. The
# same perf.data read by hotstack without the inject step names them too (the jitdump read
# natively, time-aware since perf recorded with CLOCK_MONOTONIC).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$WORKLOADS/toy-jit" ] || skip "the toy JIT is built on x86-64 only"
command -v perf >/dev/null 2>&1 || skip "perf is not installed (apt-get install linux-perf)"
require_perf_events
export HOME="$dir" # perf inject keeps what it makes under ~/.debug
(cd "$dir" && perf record -q -k 1 -o "$dir/perf.data" -- "$WORKLOADS/toy-jit" 0.4 >/dev/null 2>"$dir/record.err") ||
	skip "perf record -k 1 does not work here: $(head -n1 "$dir/record.err")"
(cd "$dir" && perf inject --jit -i "$dir/perf.data" -o "$dir/perf.jit.data" 2>"$dir/inject.err") ||
	fail "perf inject --jit: $(cat "$dir/inject.err")"
perf report -i "$dir/perf.jit.data" --stdio --sort sym 2>"$dir/report.err" | grep -v '^#' >"$dir/report.txt" ||
	fail "perf report: $(cat "$dir/report.err")"
# "    65.79%  [.] jit_alpha"
pct() {
	awk -v s="$1" '$NF == s { sub(/%/, "", $1); printf "%d\n", $1; found = 1 } END { if (!found) print -1 }' "$dir/report.txt"
}
alpha=$(pct jit_alpha)
beta=$(pct jit_beta)
echo "jit-perf-inject: perf report: jit_alpha ${alpha}%, jit_beta ${beta}%"
[ "$alpha" -ge 0 ] && [ "$beta" -ge 0 ] || fail "perf report does not name the JIT code: $(head -5 "$dir/report.txt")"
[ "$alpha" -ge 45 ] && [ "$beta" -ge 20 ] || fail "unexpected split: $(head -5 "$dir/report.txt")"
ls "$dir"/jitted-*.so >/dev/null 2>&1 || fail "perf inject made no ELF files"

"$HOTSTACK" convert "$dir/perf.data" -o "$dir/native.folded" 2>"$dir/convert.err" || fail "convert: $(cat "$dir/convert.err")"
grep -q 'jit_alpha_\[j\]' "$dir/native.folded" && grep -q 'jit_beta_\[j\]' "$dir/native.folded" ||
	fail "hotstack does not name the JIT code of perf.data: $(head -3 "$dir/native.folded")"
echo "jit-perf-inject: hotstack names them from the same perf.data without the inject step"
exit 0
