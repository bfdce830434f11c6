#!/bin/bash
# The cost of Python frames, in one run on one machine: a Python workload (python-workload.py,
# one busy thread) under Debian's python3.11 (PY=... for another), run alone, under
# `hotstack record --no-python` (native stacks only), under `hotstack record` (Python frames
# read at each sample by the BPF program), and under `perf record -g` for scale, all at the same
# frequency. Prints, as medians of RUNS runs: the workload's slowdown against running alone, and
# hotstack's own CPU time per sample (its user + system less the workload's, between a SHORT and
# a DURATION run, over the samples between them) and what a recording costs once, with the
# ratio of each variant's cost per sample to --no-python's. Exits 77 with a reason where the permission to sample is missing.
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
rc_name=python-cost
rc_workload=("$py" "$here/python-workload.py" @SECS@)
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

[ -x "$py" ] || rc_skip "$py not found"
rc_setup
rc_bpf_setup

declare -A thr us once
for variant in alone native python perf; do
	: >"$tmp/$variant.thr"
	: >"$tmp/$variant.us"
	: >"$tmp/$variant.once"
done
for ((i = 1; i <= runs; i++)); do
	rc_run alone env
	echo "$THR" >>"$tmp/alone.thr"
	rc_record_pair native --no-python python
	if command -v perf >/dev/null; then
		rc_run perf perf record -q -g -F "$freq" -o "$tmp/perf.data" --
		echo "$THR" >>"$tmp/perf.thr"
	fi
done
rc_medians alone native python perf
echo "python-cost: $py, $secs s, $freq Hz, median of $runs runs (one busy Python thread)"
rc_header "iterations/s"
rc_row "alone" alone alone
rc_row "hotstack record --no-python" native alone
rc_row "hotstack record (Python frames)" python alone
rc_row "perf record -g (for scale)" perf alone
awk -v a="${us[native]}" -v b="${us[python]}" 'BEGIN {if (a > 0) printf "Python frames cost %.2fx the CPU per sample of native stacks alone\n", b / a}'
rc_bpf_line "Python frames"
exit 0
