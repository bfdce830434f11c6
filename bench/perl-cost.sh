#!/bin/bash
# The cost of Perl frames, in one run on one machine: a busy perl (perl-workload.pl: the call
# tree of tests/workloads/calltree.pl in one thread) run alone, under `hotstack record --no-perl`
# (perl's native stacks only), under `hotstack record` (Perl frames read at each sample by the
# BPF program), and under `perf record -g` for scale; and a native program (record-workload)
# alone and under `hotstack record`, all at the same frequency. Prints, as medians of RUNS runs:
# each workload's slowdown against running alone, hotstack's own CPU time per sample (its user +
# system less the workload's, between a SHORT and a DURATION run, over the samples between them)
# and what a recording costs once, the ratios of Perl frames' cost per sample to --no-perl's and
# to the native program's, and the BPF programs' time per sample. Exits 77 with a reason where
# perl or the permission to sample is missing.
#
#   bench/perl-cost.sh                  # BUILD=build DURATION=5 SHORT=1 RUNS=3 FREQ=999 PERL=/usr/bin/perl
#   VERBOSE=1 bench/perl-cost.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
perl=${PERL:-/usr/bin/perl}
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}
native=$build/bench/record-workload
rc_name="perl-cost"
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

[ -x "$perl" ] || rc_skip "$perl not found"
rc_setup
[ -x "$native" ] || { echo "perl-cost: $native missing: build first (ninja -C build)" >&2; exit 1; }
rc_workload=("$perl" "$here/perl-workload.pl" @SECS@)
rc_bpf_setup
rc_runtime_bench "perl-cost: $("$perl" -e 'printf "perl %vd", $^V'), $secs s, $freq Hz, median of $runs runs (one busy Perl thread)" \
	--no-perl "Perl frames" "Perl frames" ';main::(leaf|rec)[; ]' "perl-workload.pl's subs"
exit 0
