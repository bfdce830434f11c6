#!/bin/bash
# The cost of Python frames, in one run on one machine: a Python workload (python-workload.py,
# one busy thread) under Debian's python3.11 (PY=... for another), run alone, under
# `hotstack record --no-python` (native stacks only), under `hotstack record` (Python frames
# read at each sample by the BPF program), and under `perf record -g` for scale, all at the same
# frequency. Prints, as medians of RUNS runs: the workload's slowdown against running alone, and
# hotstack's own CPU time per sample (its user + system, less the workload's), with the ratio of
# each variant to --no-python. Exits 77 with a reason where the permission to sample is missing.
#
#   bench/python-cost.sh                  # BUILD=build DURATION=5 RUNS=3 FREQ=999 PY=/usr/bin/python3.11
#   VERBOSE=1 bench/python-cost.sh        # also every run's figures
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
py=${PY:-/usr/bin/python3.11}
workload=$here/python-workload.py
secs=${DURATION:-5}
runs=${RUNS:-3}
freq=${FREQ:-999}

skip() {
	echo "python-cost: skipped: $*" >&2
	exit 77
}

[ -x "$hotstack" ] || { echo "python-cost: $hotstack missing: build first (ninja -C build)" >&2; exit 1; }
[ -x "$py" ] || skip "$py not found"
tmp=$(mktemp -d /tmp/hotstack-python-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$hotstack" record -q -o "$tmp/probe.folded" -- true >"$tmp/probe.log" 2>&1 ||
	skip "hotstack record cannot sample: $(head -n1 "$tmp/probe.log")"
grep -q 'Python frames needs' "$tmp/probe.log" && skip "no permission to load BPF programs (run as root)"

# run NAME command...: the workload under the command; sets THR (iterations/s), OWN (the
# workload's CPU s), ALL (the command's CPU s, children included), SAMPLES (hotstack's)
run() {
	local name=$1 t0 t1 out
	shift
	t0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
	out=$("$@" "$py" "$workload" "$secs" 2>"$tmp/$name.err")
	t1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
	read -r THR OWN <<<"$out"
	ALL=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN {print (b - a) / hz}')
	SAMPLES=$(awk '{s += $NF} END {print s + 0}' "$tmp/$name.folded" 2>/dev/null)
	[ -n "${VERBOSE:-}" ] && echo "  $name: $THR it/s, workload $OWN s, all $ALL s, $SAMPLES samples" >&2
	return 0
}

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

bpftool=$(command -v bpftool || ls /usr/sbin/bpftool 2>/dev/null || true)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
if [ -n "$bpftool" ] && echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null; then
	trap 'echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
else
	bpftool=
fi
: >"$tmp/bpf.ns"

declare -A thr us
for variant in alone native python perf; do
	: >"$tmp/$variant.thr"
	: >"$tmp/$variant.us"
done
for ((i = 1; i <= runs; i++)); do
	run alone env
	echo "$THR" >>"$tmp/alone.thr"
	for variant in native python; do
		flag=--no-python
		[ $variant = python ] && flag=
		if [ $variant = python ] && [ -n "$bpftool" ]; then
			# the program's own time, as the kernel counts it, read just before the end
			(sleep "$(awk -v s="$secs" 'BEGIN {print s - 0.5}')"
			 "$bpftool" prog show name hs_py_read_frames 2>/dev/null |
				awk '/run_time_ns/ {for (i = 1; i < NF; i++) {if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") n = $(i + 1)}} END {if (n) print t / n}' >>"$tmp/bpf.ns") &
		fi
		# shellcheck disable=SC2086 # no flag is no word
		run $variant "$hotstack" record -q $flag -F "$freq" -o "$tmp/$variant.folded" --
		wait
		echo "$THR" >>"$tmp/$variant.thr"
		awk -v all="$ALL" -v own="$OWN" -v n="$SAMPLES" 'BEGIN {print n ? (all - own) / n * 1e6 : 0}' >>"$tmp/$variant.us"
	done
	if command -v perf >/dev/null; then
		run perf perf record -q -g -F "$freq" -o "$tmp/perf.data" --
		echo "$THR" >>"$tmp/perf.thr"
	fi
done
for variant in alone native python perf; do
	thr[$variant]=$(median <"$tmp/$variant.thr")
	us[$variant]=$(median <"$tmp/$variant.us")
done
echo "python-cost: $py, $secs s, $freq Hz, median of $runs runs (one busy Python thread)"
printf '%-34s %12s %10s %14s\n' "" "iterations/s" "slowdown" "hotstack us/sample"
for variant in alone native python perf; do
	[ -n "${thr[$variant]}" ] || continue
	case $variant in
	alone) label="alone" ;;
	native) label="hotstack record --no-python" ;;
	python) label="hotstack record (Python frames)" ;;
	perf) label="perf record -g (for scale)" ;;
	esac
	slow=$(awk -v a="${thr[alone]}" -v b="${thr[$variant]}" 'BEGIN {printf "%.1f%%", (1 - b / a) * 100}')
	cost=${us[$variant]:-}
	[ -n "$cost" ] && cost=$(awk -v c="$cost" 'BEGIN {printf "%.1f", c}')
	printf '%-34s %12s %10s %14s\n' "$label" "${thr[$variant]}" "$slow" "$cost"
done
awk -v a="${us[native]}" -v b="${us[python]}" 'BEGIN {if (a > 0) printf "Python frames cost %.2fx the CPU per sample of native stacks alone\n", b / a}'
[ -s "$tmp/bpf.ns" ] && echo "the BPF program: $(median <"$tmp/bpf.ns" | awk '{printf "%.0f", $1}') ns per sample in the kernel (kernel.bpf_stats_enabled)"
