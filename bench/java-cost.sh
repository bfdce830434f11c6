#!/bin/bash
# The cost of Java frames, in one run on one machine: a busy JVM (HotBench.java: the call tree of
# tests/workloads/java/Hot.java in two threads, warmed up first) run alone, under `hotstack
# record --no-java` (the JVM's native stacks, its code named by nothing but its perf map), under
# `hotstack record` (Java frames read at each sample by the BPF program), and under `perf record
# -g` for scale; and a native program (record-workload) alone and under `hotstack record`, all at
# the same frequency. Prints, as medians of RUNS runs: each workload's slowdown against running
# alone, hotstack's own CPU time per sample (its user + system less the workload's, between a
# SHORT and a DURATION run, over the samples between them) and what a recording costs once, the
# ratios of Java frames' cost per sample to --no-java's and to the native program's, and the
# BPF programs' time per sample. Exits 77 with a reason where the JDK or the permission to sample
# is missing.
#
#   bench/java-cost.sh                  # BUILD=build DURATION=5 SHORT=1 RUNS=3 FREQ=999 ROUNDS=300
#   JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 VERBOSE=1 bench/java-cost.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
jdk=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}
rounds=${ROUNDS:-300}
native=$build/bench/record-workload
rc_name=java-cost
# shellcheck source=bench/runtime-cost-lib.sh
. "$here/runtime-cost-lib.sh"

{ [ -x "$jdk/bin/java" ] && [ -x "$jdk/bin/javac" ]; } || rc_skip "no JDK in $jdk (JAVA_HOME)"
rc_setup
[ -x "$native" ] || { echo "java-cost: $native missing: build first (ninja -C build)" >&2; exit 1; }
"$jdk/bin/javac" -d "$tmp/classes" "$here/../tests/workloads/java/Hot.java" "$here/HotBench.java" ||
	{ echo "java-cost: cannot compile the workload" >&2; exit 1; }
rc_workload=("$jdk/bin/java" -cp "$tmp/classes" HotBench @SECS@ "$rounds")
rc_bpf_setup
rc_runtime_bench "java-cost: $("$jdk/bin/java" -version 2>&1 | head -n1), $secs s after $rounds rounds, $freq Hz, median of $runs runs (two busy Java threads)" \
	--no-java "Java frames" "Java frames" 'Hot\\.(work|fib)' "Hot's methods"
exit 0
