#!/bin/bash
# The cost of JavaScript frames, in one run on one machine: a busy node (node-bench.js: the call
# tree of tests/workloads/node/hot.js, warmed up first) run alone, under `hotstack record --no-js`
# (node's native stacks, its JavaScript code unnamed), under `hotstack record` (JavaScript frames
# read at each sample by the BPF program), and under `perf record -g` for scale; and a native
# program (record-workload) alone and under `hotstack record`, all at the same frequency. Prints,
# as medians of RUNS runs: each workload's slowdown against running alone, hotstack's own CPU time
# per sample (its user + system less the workload's, between a SHORT and a DURATION run, over the
# samples between them) and what a recording costs once, the ratios of JavaScript frames' cost
# per sample to --no-js's and to the native program's, and the BPF programs' time per sample. Exits 77 with a
# reason where node or the permission to sample is missing.
#
#   bench/node-cost.sh                  # BUILD=build DURATION=5 SHORT=1 RUNS=3 FREQ=999 ROUNDS=20
#   VERBOSE=1 bench/node-cost.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}
rounds=${ROUNDS:-20}
native=$build/bench/record-workload
rc_name=node-cost
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

command -v node >/dev/null || rc_skip "no node"
rc_setup
[ -x "$native" ] || { echo "node-cost: $native missing: build first (ninja -C build)" >&2; exit 1; }
js=(node "$here/node-bench.js" @SECS@ "$rounds")
rc_bpf_setup

declare -A thr us once
for variant in alone nojs js perf native-alone native; do
	: >"$tmp/$variant.thr"
	: >"$tmp/$variant.us"
	: >"$tmp/$variant.once"
done
js_share=()
for ((i = 1; i <= runs; i++)); do
	rc_workload=("${js[@]}")
	rc_run alone env
	echo "$THR" >>"$tmp/alone.thr"
	rc_record_pair nojs --no-js js
	# that the reader did read: the share of node's samples with hot.js's functions named
	js_share+=("$(awk '{n += $NF} /;(work|fib|shapes)[;_ ]/ {h += $NF} END {printf "%.0f%%", n ? h / n * 100 : 0}' "$tmp/js.folded")")
	if command -v perf >/dev/null; then
		rc_run perf perf record -q -g -F "$freq" -o "$tmp/perf.data" --
		echo "$THR" >>"$tmp/perf.thr"
	fi
	rc_workload=("$native" @SECS@)
	rc_run native-alone env
	echo "$THR" >>"$tmp/native-alone.thr"
	rc_record native
done
rc_medians alone nojs js perf native-alone native
echo "node-cost: node $(node --version), $secs s after $rounds rounds, $freq Hz, median of $runs runs"
rc_header "rounds/s"
rc_row "alone" alone alone
rc_row "hotstack record --no-js" nojs alone
rc_row "hotstack record (JS frames)" js alone
rc_row "perf record -g (for scale)" perf alone
printf '%-34s %12s\n' "native program (record-workload)" "iterations/s"
rc_row "alone" native-alone native-alone
rc_row "hotstack record" native native-alone
echo "samples of node with hot.js's functions named, with JavaScript frames: ${js_share[*]}"
awk -v a="${us[nojs]}" -v b="${us[js]}" -v c="${us[native]}" 'BEGIN {
	if (a > 0)
		printf "JavaScript frames cost %.2fx the CPU per sample of the same recording with --no-js\n", b / a
	if (c > 0)
		printf "JavaScript frames cost %.2fx the CPU per sample of a native program'\''s recording (target: 2x at most)\n", b / c
}'
rc_bpf_line "JavaScript frames"
exit 0
