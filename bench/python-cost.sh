#!/bin/bash
# The cost of Python frames, in one run on one machine: a Python workload (python-workload.py,
# one busy thread) under Debian's python3.11 (PY=... for another), run alone, under
# `hotstack record --no-python` (native stacks only), under `hotstack record` (Python frames
# read at each sample by the BPF program), and under `perf record -g` for scale; and a native
# program (record-workload) alone and under `hotstack record`, all at the same frequency. Prints,
# as medians of RUNS runs: each workload's slowdown against running alone, hotstack's own CPU
# time per sample (its user + system less the workload's, between a SHORT and a DURATION run,
# over the samples between them) and what a recording costs once, the ratios of Python frames'
# cost per sample to --no-python's and to the native program's, and the BPF programs' time per
# sample. Exits 77 with a reason where the permission to sample is missing.
#
#   bench/python-cost.sh                  # BUILD=build DURATION=5 SHORT=1 RUNS=3 FREQ=999 PY=/usr/bin/python3.11
#   VERBOSE=1 bench/python-cost.sh        # also every run's figures
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
py=${PY:-/usr/bin/python3.11}
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}
native=$build/bench/record-workload
rc_name="python-cost"
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

[ -x "$py" ] || rc_skip "$py not found"
rc_setup
[ -x "$native" ] || { echo "python-cost: $native missing: build first (ninja -C build)" >&2; exit 1; }
rc_workload=("$py" "$here/python-workload.py" @SECS@)
rc_bpf_setup
rc_runtime_bench "python-cost: $py, $secs s, $freq Hz, median of $runs runs (one busy Python thread)" \
	--no-python "Python frames" "Python frames" ';(rec|leaf_work)[; ]' "python-workload.py's functions"
exit 0
