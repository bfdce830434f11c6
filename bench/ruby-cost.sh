#!/bin/bash
# The cost of Ruby frames, in one run on one machine: a Ruby workload (ruby-workload.rb, one busy
# thread) under Debian's ruby (RUBY=... for another) run alone, under `hotstack record --no-ruby`
# (native stacks only), under `hotstack record` (Ruby frames read at each sample by the BPF
# program), and under `perf record -g` for scale; and a native program (record-workload) alone
# and under `hotstack record`, all at the same frequency. Prints, as medians of RUNS runs: each
# workload's slowdown against running alone, hotstack's own CPU time per sample (its user +
# system less the workload's, between a SHORT and a DURATION run, over the samples between them)
# and what a recording costs once, the ratios of Ruby frames' cost per sample to --no-ruby's and
# to the native program's, and the BPF programs' time per sample. Exits 77 with a reason where
# ruby or the permission to sample is missing.
#
#   bench/ruby-cost.sh                  # BUILD=build DURATION=5 SHORT=1 RUNS=3 FREQ=999 RUBY=ruby
#   VERBOSE=1 bench/ruby-cost.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
ruby=${RUBY:-ruby}
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}
native=$build/bench/record-workload
rc_name="ruby-cost"
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

command -v "$ruby" >/dev/null || rc_skip "no $ruby"
rc_setup
[ -x "$native" ] || { echo "ruby-cost: $native missing: build first (ninja -C build)" >&2; exit 1; }
rc_workload=("$ruby" "$here/ruby-workload.rb" @SECS@)
rc_bpf_setup
rc_runtime_bench "ruby-cost: $("$ruby" -e 'print RUBY_DESCRIPTION'), $secs s, $freq Hz, median of $runs runs" \
	--no-ruby "Ruby frames" "Ruby frames" ';Tree#(rec|leaf)[;_ ]' "ruby-workload.rb's methods"
exit 0
