#!/bin/bash
# hotstack's CPU time per sample, as a user pays it: the recorder's own user + sys time (its
# start, its reading of the kernel's symbols, its unwinding and symbolizing, its output) divided
# by the samples it wrote, attached with -p for DURATION seconds at FREQ Hz to a busy program
# built without frame pointers (bench/record-workload), kernel stacks on. For -g dwarf and -g fp,
# attached and system-wide (-a), beside the same figure for perf record (alone, and followed by
# perf script, the pipeline a flame graph needs) measured in the same run.
#
#   bench/sample-cost.sh                  # BUILD=build DURATION=10 RUNS=3 FREQ=999
#   NO_PERF=1 DURATION=600 RUNS=1 bench/sample-cost.sh   # a 10-minute recording: flat?
#   MODES="dwarf fp" bench/sample-cost.sh      # leave out -a (dwarf-a fp-a)
#   NO_PERF=1 bench/sample-cost.sh             # hotstack alone (perf's 10-minute files are huge)
# shellcheck disable=SC2034 # the result arrays are read through median()'s nameref
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
workload=$build/bench/record-workload
secs=${DURATION:-10}
runs=${RUNS:-3}
freq=${FREQ:-999}
modes=${MODES:-dwarf fp dwarf-a fp-a}

skip() {
	echo "sample-cost: skipped: $*" >&2
	exit 77
}

if [ ! -x "$hotstack" ] || [ ! -x "$workload" ]; then
	echo "sample-cost: $hotstack or $workload missing: build first (ninja -C build)" >&2
	exit 1
fi
have_perf=1
command -v perf >/dev/null || have_perf=0
[ "${NO_PERF:-0}" = 1 ] && have_perf=0

tmp=$(mktemp -d /tmp/hotstack-sample-cost.XXXXXX)
wl=""
trap 'kill $wl 2>/dev/null; rm -rf "$tmp"' EXIT
"$hotstack" record -q -g fp -o "$tmp/probe.folded" -- true >"$tmp/probe.log" 2>&1 ||
	skip "hotstack record cannot sample: $(head -n1 "$tmp/probe.log")"
if [ "$have_perf" = 1 ] && ! perf record -q -F 99 -g -o "$tmp/probe.data" -- true >"$tmp/probe.log" 2>&1; then
	echo "sample-cost: perf record cannot sample, perf's figures left out: $(head -n1 "$tmp/probe.log")" >&2
	have_perf=0
fi

# cpu_of COMMAND...: runs it, its output to $tmp/out, and prints the user + sys seconds of it
# and its children (bash's times, in milliseconds)
cpu_of() {
	(
		"$@" >"$tmp/out" 2>"$tmp/err" || {
			echo "sample-cost: $* failed: $(tail -n 3 "$tmp/err")" >&2
			exit 1
		}
		times >"$tmp/times"
	) || exit 1
	awk 'function s(t) { split(t, a, /[ms]/); return a[1] * 60 + a[2] }
		NR == 2 { printf "%.3f", s($1) + s($2) }' "$tmp/times"
}

folded_samples() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

# per_sample CPU SAMPLES: microseconds
per_sample() { awk -v c="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", c * 1e6 / n; else print "n/a" }'; }

declare -A HS PR PS HN PN
# measure MODE RUN: the workload started afresh, each tool attached to it in turn
measure() {
	local mode=$1 r=$2 g=${1%-a} target cpu n pcmd
	"$workload" $((secs * 3 + 30)) >/dev/null &
	wl=$!
	sleep 0.5
	if [ "$mode" = "$g" ]; then target=(-p "$wl"); else target=(-a); fi
	cpu=$(cpu_of "$hotstack" record -q -F "$freq" -g "$g" "${target[@]}" -d "$secs" -o "$tmp/hs.folded")
	n=$(folded_samples "$tmp/hs.folded")
	HS[$mode,$r]=$(per_sample "$cpu" "$n")
	HN[$mode,$r]=$n
	if [ "$have_perf" = 1 ]; then
		if [ "$g" = dwarf ]; then pcmd=(--call-graph dwarf); else pcmd=(--call-graph fp); fi
		cpu=$(cpu_of perf record -q -F "$freq" "${pcmd[@]}" "${target[@]}" -o "$tmp/perf.data" -- sleep "$secs")
		n=$(perf script -i "$tmp/perf.data" -F tid 2>/dev/null | wc -l)
		PR[$mode,$r]=$(per_sample "$cpu" "$n")
		cpu=$(awk -v a="$cpu" -v b="$(cpu_of perf script -i "$tmp/perf.data")" 'BEGIN { print a + b }')
		PS[$mode,$r]=$(per_sample "$cpu" "$n")
		PN[$mode,$r]=$n
		rm -f "$tmp/perf.data"
	fi
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null
	wl=""
}

median() { # MODE ARRAY
	local -n arr=$2
	local r vals=()
	for r in $(seq 1 "$runs"); do
		[ -n "${arr[$1,$r]:-}" ] && [ "${arr[$1,$r]}" != n/a ] && vals+=("${arr[$1,$r]}")
	done
	[ ${#vals[@]} = 0 ] && { echo n/a; return; }
	printf '%s\n' "${vals[@]}" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

start=$(date +%s)
for r in $(seq 1 "$runs"); do
	for m in $modes; do
		[ -t 2 ] && printf '\rsample-cost: run %d of %d, %-8s' "$r" "$runs" "$m" >&2
		measure "$m" "$r"
	done
done
[ -t 2 ] && printf '\r%60s\r' "" >&2

echo "sample-cost: record-workload attached (-p) or system-wide (-a), $secs s at -F $freq, kernel" \
	"stacks on, median of $runs; $(nproc) CPUs, $(uname -r)$([ "$have_perf" = 1 ] && echo "; $(perf --version)")"
printf '%-10s %14s %9s %16s %20s %9s %10s\n' mode "hotstack us" samples "perf record us" \
	"perf record+script" samples "ratio"
for m in $modes; do
	h=$(median "$m" HS)
	p=$(median "$m" PR)
	s=$(median "$m" PS)
	printf '%-10s %14s %9s %16s %20s %9s %10s\n' "-g ${m%-a}$([ "$m" != "${m%-a}" ] && echo " -a")" "$h" \
		"$(median "$m" HN)" "$p" "$s" "$(median "$m" PN)" \
		"$(awk -v a="$h" -v b="$s" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.3g", a / b; else print "n/a" }')"
	if [ "${VERBOSE:-0}" = 1 ]; then
		for r in $(seq 1 "$runs"); do printf '    run %d: %s us (%s samples)\n' "$r" "${HS[$m,$r]}" "${HN[$m,$r]}"; done
	fi
done
echo "(us: microseconds of the tool's CPU time per sample written; ratio: hotstack's against perf"
echo " record + perf script; took $(($(date +%s) - start)) s)"
