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
rc_workload=(node "$here/node-bench.js" @SECS@ "$rounds")
rc_bpf_setup
rc_runtime_bench "node-cost: node $(node --version), $secs s after $rounds rounds, $freq Hz, median of $runs runs" \
	--no-js "JavaScript frames" "JS frames" ';(work|fib|shapes)[;_ ]' "hot.js's functions"
exit 0
