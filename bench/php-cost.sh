#!/bin/bash
# The cost of PHP frames, in one run on one machine: a busy PHP process (php-workload.php) under
# Debian's php8.2 (PHP=... for another) run alone, under `hotstack record --no-php` (the engine's
# native stacks), under `hotstack record` (PHP frames read at each sample by the BPF program),
# and under `perf record -g` for scale; and a native program (record-workload) alone and under
# `hotstack record`, all at the same frequency. Prints, as medians of RUNS runs: each workload's
# slowdown against running alone, hotstack's own CPU time per sample (its user + system less the
# workload's, between a SHORT and a DURATION run, over the samples between them) and what a
# recording costs once, the ratios of PHP frames' cost per sample to --no-php's and to the
# native program's, and the BPF programs' time per sample. Exits 77 with a reason where PHP or
# the permission to sample is missing.
#
#   bench/php-cost.sh                  # BUILD=build DURATION=5 SHORT=1 RUNS=3 FREQ=999 PHP=/usr/bin/php8.2
#   VERBOSE=1 bench/php-cost.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
php=${PHP:-/usr/bin/php8.2}
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}
native=$build/bench/record-workload
rc_name="php-cost"
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

[ -x "$php" ] || rc_skip "$php not found"
rc_setup
[ -x "$native" ] || { echo "php-cost: $native missing: build first (ninja -C build)" >&2; exit 1; }
rc_workload=("$php" -n "$here/php-workload.php" @SECS@)
rc_bpf_setup
rc_runtime_bench "php-cost: $("$php" -n -r 'echo "PHP ", PHP_VERSION;'), $secs s, $freq Hz, median of $runs runs (one busy PHP process)" \
	--no-php "PHP frames" "PHP frames" ';(rec|Runner::round|\{closure\})[;:_ ]' "php-workload.php's functions"
exit 0
