#!/bin/bash
# The cost of recording with DWARF stacks, in one run on one machine: `hotstack record -g dwarf`
# against `perf record --call-graph dwarf` followed by `perf script`, on the same workload
# (bench/record-workload, which prints its own throughput), at the same frequency. Exits 77
# with a reason where perf or the permission to sample is missing.
#
#   bench/record-cost.sh                 # BUILD=build DURATION=2 RUNS=5 FREQ=999
#   KEEP=1 bench/record-cost.sh          # keep the outputs (their directory is printed)
#   VERBOSE=1 bench/record-cost.sh       # also every run's figures
# shellcheck disable=SC2034 # the result arrays are read through median()'s nameref
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
workload=$build/bench/record-workload
secs=${DURATION:-2}
runs=${RUNS:-5}
freq=${FREQ:-999}

skip() {
	echo "record-cost: skipped: $*" >&2
	exit 77
}

command -v perf >/dev/null || skip "perf not found (apt-get install linux-perf)"
if [ ! -x "$hotstack" ] || [ ! -x "$workload" ]; then
	echo "record-cost: $hotstack or $workload missing: build first (ninja -C build)" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/hotstack-record-cost.XXXXXX)
if [ "${KEEP:-0}" = 1 ]; then
	echo "outputs kept in $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

perf record -q -F 99 --call-graph dwarf -o "$tmp/probe.data" -- true >"$tmp/probe.log" 2>&1 ||
	skip "perf record cannot sample: $(grep -m1 -iE 'error|permission|denied|paranoid' "$tmp/probe.log")"
"$hotstack" record -q -g dwarf -o "$tmp/probe.folded" -- true >"$tmp/probe.log" 2>&1 ||
	skip "hotstack record cannot sample: $(head -n1 "$tmp/probe.log")"

# ---- one measurement ----
# Each sets, for variant $1 in run $2: THR (iterations/s), CPU (profiler CPU seconds: the
# command's user+sys, children included, minus the workload's own), BYTES (the output file),
# and in run 1 SAMPLES and MAIN (samples whose stack reaches main).
declare -A THR CPU BYTES SAMPLES MAIN

# timed DIR NAME OUT command...: runs the command (standard output to OUT, errors to DIR/NAME.err)
# and writes the
# user+sys seconds of it and its children to DIR/NAME.cpu (bash's times: milliseconds, where
# /usr/bin/time rounds to 10 ms)
timed() {
	local d=$1 name=$2 out=$3
	shift 3
	(
		"$@" >"$out" 2>"$d/$name.err"
		rc=$?
		times >"$d/$name.times"
		exit $rc
	) || return
	awk 'function s(t) { split(t, a, /[ms]/); return a[1] * 60 + a[2] }
		NR == 2 { printf "%.3f", s($1) + s($2) }' "$d/$name.times" >"$d/$name.cpu"
}

cpu_of() { # DIR NAME -> the profiler's CPU seconds: the command's, less the workload's own
	awk -v w="$(sed -n 's/.*cpu_s: \([0-9.]*\).*/\1/p' "$1/$2.out")" '{ printf "%.3f", $1 - w }' "$1/$2.cpu"
}

thr_of() {
	sed -n 's/^iterations\/s: \([0-9.]*\).*/\1/p' "$1"
}

# folded stacks -> "samples samples-with-main"
folded_main() {
	awk '{
		n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack)
		total += n; k = split(stack, f, ";")
		for (i = 1; i <= k; i++) if (f[i] == "main") { with += n; break }
	} END { print total + 0, with + 0 }' "$1"
}

# perf script output -> "samples samples-with-main"
script_main() {
	awk 'function done() { if (in_sample) { n++; if (m) k++ } in_sample = 0; m = 0 }
		/^[^ \t]/ { done(); in_sample = 1; next }
		/^[ \t]+[0-9a-f]+ / { s = $2; sub(/\+0x[0-9a-f]+$/, "", s); if (s == "main") m = 1; next }
		/^[ \t]*$/ { done() }
		END { done(); print n + 0, k + 0 }' "$1"
}

fail() {
	echo "record-cost: $1 failed:" >&2
	cat "$2" >&2
	exit 1
}

run_alone() {
	local d=$tmp/alone.$2
	mkdir -p "$d"
	timed "$d" run "$d/run.out" "$workload" "$secs" || fail "the workload" "$d/run.err"
	THR[$1,$2]=$(thr_of "$d/run.out")
}

run_hotstack() { # variant run stack-size
	local d=$tmp/$1.$2
	mkdir -p "$d"
	timed "$d" run "$d/run.out" \
		"$hotstack" record -q -F "$freq" -g "dwarf,$3" -o "$d/out.pb.gz" -- "$workload" "$secs" ||
		fail "hotstack record" "$d/run.err"
	THR[$1,$2]=$(thr_of "$d/run.out")
	CPU[$1,$2]=$(cpu_of "$d" run)
	BYTES[$1,$2]=$(stat -c %s "$d/out.pb.gz")
	if [ "$2" = 1 ]; then
		"$hotstack" convert "$d/out.pb.gz" -o "$d/out.folded" 2>>"$d/run.err" || fail "hotstack convert" "$d/run.err"
		read -r "SAMPLES[$1]" "MAIN[$1]" < <(folded_main "$d/out.folded")
	fi
	rm -f "$d/out.folded"
}

run_perf() { # variant run stack-size
	local d=$tmp/$1.$2 rec scr
	mkdir -p "$d"
	timed "$d" run "$d/run.out" \
		perf record -q -F "$freq" --call-graph "dwarf,$3" -o "$d/perf.data" -- "$workload" "$secs" ||
		fail "perf record" "$d/run.err"
	timed "$d" script /dev/null perf script -i "$d/perf.data" || fail "perf script" "$d/script.err"
	THR[$1,$2]=$(thr_of "$d/run.out")
	rec=$(cpu_of "$d" run)
	scr=$(cat "$d/script.cpu")
	CPU[$1,$2]=$(awk -v a="$rec" -v b="$scr" 'BEGIN { printf "%.3f", a + b }')
	CPU[$1.script,$2]=$scr
	BYTES[$1,$2]=$(stat -c %s "$d/perf.data")
	if [ "$2" = 1 ]; then # the share that reaches main, from a second, untimed perf script
		perf script -i "$d/perf.data" >"$d/script.txt" 2>>"$d/script.err" || fail "perf script" "$d/script.err"
		read -r "SAMPLES[$1]" "MAIN[$1]" < <(script_main "$d/script.txt")
		rm -f "$d/script.txt"
	fi
	rm -f "$d/perf.data"
}

variants="alone hs64 hs32 hs8 perf8 perf32"
declare -A LABEL=(
	[alone]="workload alone"
	[hs64]="hotstack -g dwarf (64 KiB)"
	[hs32]="hotstack -g dwarf,32768"
	[hs8]="hotstack -g dwarf,8192"
	[perf8]="perf dwarf (8 KiB) + script"
	[perf32]="perf dwarf,32768 + script"
)

start=$(date +%s)
for r in $(seq 1 "$runs"); do # round-robin, so that drift in the machine hits every variant
	run_alone alone "$r"
	run_hotstack hs64 "$r" 65528
	run_hotstack hs32 "$r" 32768
	run_hotstack hs8 "$r" 8192
	run_perf perf8 "$r" 8192
	run_perf perf32 "$r" 32768
done

median() { # variant array-name
	local -n arr=$2
	local r vals=()
	for r in $(seq 1 "$runs"); do
		[ -n "${arr[$1,$r]:-}" ] && vals+=("${arr[$1,$r]}")
	done
	[ ${#vals[@]} = 0 ] && return
	printf '%s\n' "${vals[@]}" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A M_THR M_CPU M_BYTES M_SLOW M_SCRIPT
for v in $variants; do
	M_THR[$v]=$(median "$v" THR)
	M_CPU[$v]=$(median "$v" CPU)
	M_BYTES[$v]=$(median "$v" BYTES)
	M_SCRIPT[$v]=$(median "$v.script" CPU)
	M_SLOW[$v]=$(awk -v a="${M_THR[alone]}" -v b="${M_THR[$v]}" 'BEGIN { printf "%.1f", (a / b - 1) * 100 }')
done

echo "record-cost: $workload $secs s, -F $freq, median of $runs runs; $(nproc) CPUs, $(uname -r);" \
	"$(perf --version); $(date -u +%Y-%m-%d)"
printf '%-30s %9s %9s %12s %14s %8s %11s\n' \
	variant "iter/s" slowdown "profiler cpu" "bytes written" samples "reach main"
for v in $variants; do
	if [ "$v" = alone ]; then
		printf '%-30s %9.1f %9s %12s %14s %8s %11s\n' "${LABEL[$v]}" "${M_THR[$v]}" - - - - -
		continue
	fi
	printf '%-30s %9.1f %8.1f%% %11.3fs %14d %8d %10.1f%%\n' "${LABEL[$v]}" "${M_THR[$v]}" "${M_SLOW[$v]}" \
		"${M_CPU[$v]}" "${M_BYTES[$v]}" "${SAMPLES[$v]}" \
		"$(awk -v a="${MAIN[$v]}" -v b="${SAMPLES[$v]}" 'BEGIN { print b ? 100 * a / b : 0 }')"
done
if [ "${VERBOSE:-0}" = 1 ]; then
	for v in $variants; do
		printf '  %-28s' "${LABEL[$v]}:"
		for r in $(seq 1 "$runs"); do printf ' %7.1f/s %6ss' "${THR[$v,$r]}" "${CPU[$v,$r]:--}"; done
		echo
	done
fi
noise=$(for r in $(seq 1 "$runs"); do echo "${THR[alone,$r]}"; done | sort -g |
	awk '{ v[NR] = $1 } END { printf "%.0f-%.0f iter/s, %.0f%% apart", v[1], v[NR], (v[NR] / v[1] - 1) * 100 }')
echo "(noise: the workload alone ran at $noise across runs)"
echo "(perf's profiler cpu includes perf script: ${M_SCRIPT[perf8]} s at 8 KiB, ${M_SCRIPT[perf32]} s at 32 KiB)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3g", a / b }'; }
echo
echo "ratios hotstack/perf: profiler cpu and bytes (lower: hotstack cheaper), the target's throughput"
echo "under each (higher: hotstack slows it less), the share of stacks that reach main:"
for pair in "hs8 perf8 8 KiB" "hs32 perf32 32 KiB" "hs64 perf8 defaults (64 KiB vs 8 KiB)"; do
	# shellcheck disable=SC2086 # split on purpose
	set -- $pair
	h=$1 p=$2
	shift 2
	printf '  %-28s cpu %-7s bytes %-9s throughput %-7s reach-main %s\n' "$*:" \
		"$(ratio "${M_CPU[$h]}" "${M_CPU[$p]}")" "$(ratio "${M_BYTES[$h]}" "${M_BYTES[$p]}")" \
		"$(ratio "${M_THR[$h]}" "${M_THR[$p]}")" \
		"$(ratio "$(ratio "${MAIN[$h]}" "${SAMPLES[$h]}")" "$(ratio "${MAIN[$p]}" "${SAMPLES[$p]}")")"
done
echo "(slowdowns of a few percent are within this machine's run-to-run noise; took $(($(date +%s) - start)) s)"
