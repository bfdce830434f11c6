#!/bin/bash
# What a process that churns costs the others' samples: `record -a -F FREQ -d DURATION` while
# an unrelated CPU-bound process (the victim, root's) runs, alone and beside each churner, an
# unprivileged process (CHURN_USER) that maps and unmaps libc, starts and joins threads, or forks
# and reaps processes as fast as it can (tests/workloads/churn.c). For each: the victim's
# samples, its CPU time (from /proc/PID/schedstat over the recording), its samples per CPU second
# against the rate asked for ("kept": what the victim's time should have given), the ratio of
# its samples beside the churner to its samples alone (and of "kept"), hotstack's CPU time
# (user+sys) and peak RSS, the records the kernel said were lost, and the churner's own pace.
# Runs alternate between the settings (RUNS rounds) and the median of each is shown, so that a
# machine whose load drifts affects all alike. perf has no comparable mode, so there is no
# ratio against it.
#
#   bench/churn-fairness.sh            # RUNS=3 DURATION=10 FREQ=99 MODES="maps threads procs"
#   RUNS=5 DURATION=20 bench/churn-fairness.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
runs=${RUNS:-3}
secs=${DURATION:-10}
freq=${FREQ:-99}
modes=${MODES:-maps threads procs}
user=${CHURN_USER:-nobody}

[ -x "$hotstack" ] || {
	echo "churn-fairness: $hotstack missing: build first (ninja -C build)" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || {
	echo "churn-fairness: run as root (record -a, and the churner run as $user)" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/hotstack-churn-fairness.XXXXXX)
chmod 755 "$tmp"
victim=""
churner=""
trap 'kill $victim $churner 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
if [ -x "$build/tests/workloads/churn" ]; then
	cp "$build/tests/workloads/churn" "$tmp/churn"
else
	cc -O1 -pthread -o "$tmp/churn" "$here/../tests/workloads/churn.c" || exit 1
fi
cp "$tmp/churn" "$tmp/victim"
# a process's time on a CPU in milliseconds, as the scheduler counts it (utime and stime are
# counted in 10 ms clock ticks)
cpu_ms() { awk '{ printf "%d\n", $1 / 1000000 }' "/proc/$1/schedstat" 2>/dev/null || echo 0; }

# one recording: MODE (none: no churner); appends a line of figures to $tmp/MODE
one() {
	mode=$1
	"$tmp/victim" spin >/dev/null &
	victim=$!
	churner=""
	if [ "$mode" != none ]; then
		setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups "$tmp/churn" "$mode" \
			"$((secs + 2))" >"$tmp/churn.out" &
		churner=$!
	fi
	sleep 0.5
	t0=$(cpu_ms "$victim")
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$hotstack" record -a -F "$freq" -d "$secs" \
		-o "$tmp/out.folded" >"$tmp/rec.out" 2>&1
	t1=$(cpu_ms "$victim")
	kill "$victim" 2>/dev/null
	wait "$victim" 2>/dev/null
	pace=0
	if [ -n "$churner" ]; then
		wait "$churner" 2>/dev/null
		pace=$(awk '{ print $2 }' "$tmp/churn.out")
	fi
	victim=""
	churner=""
	samples=$(awk '/^victim/ { s += $NF } END { print s + 0 }' "$tmp/out.folded")
	total=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/out.folded")
	lost=$(grep -oE 'lost [0-9]+' "$tmp/rec.out" | awk '{ s += $2 } END { print s + 0 }')
	read -r u s rss <"$tmp/time"
	echo "$samples $(((t1 - t0))) $total $lost $u $s $rss $pace" >>"$tmp/$mode"
}

med() { # FILE COLUMN: the median of a column
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}

echo "churn-fairness: record -a -F $freq -d $secs beside a CPU-bound victim, alone and beside" \
	"each churner ($modes) run as $user; $runs rounds, medians"
for r in $(seq "$runs"); do
	for m in none $modes; do
		one "$m"
	done
	echo "  round $r of $runs done (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
base=$(med "$tmp/none" 1)
base_cpu=$(med "$tmp/none" 2)
printf '  %-8s %8s %9s %7s %8s %8s %11s %9s %9s %12s\n' churner victim "cpu s" kept ratio "ratio kept" "hotstack s" "RSS MiB" lost "churn /s"
for m in none $modes; do
	awk -v f="$freq" -v t=1000 -v secs="$secs" -v base="$base" -v base_cpu="$base_cpu" -v m="$m" '
		{ n++; s[n] = $1; c[n] = $2 / t; k[n] = $2 ? $1 / ($2 / t * f) : 0; h[n] = $5 + $6; r[n] = $7 / 1024; l[n] = $4; p[n] = $8 / secs }
		function med(a,   i, j, x, b) {
			for (i = 1; i <= n; i++) b[i] = a[i]
			for (i = 2; i <= n; i++) { x = b[i]; for (j = i - 1; j > 0 && b[j] > x; j--) b[j + 1] = b[j]; b[j + 1] = x }
			return b[int((n + 1) / 2)]
		}
		END {
			bk = base_cpu ? base / (base_cpu / t * f) : 0
			printf "  %-8s %8d %9.2f %6.1f%% %7.1f%% %10.1f%% %11.2f %9.1f %9d %12d\n", m, med(s), med(c), 100 * med(k),
				base ? 100 * med(s) / base : 0, bk ? 100 * med(k) / bk : 0, med(h), med(r), med(l), med(p)
		}' "$tmp/$m"
done
echo "  victim: its samples; cpu s: its CPU time over the recording; kept: its samples over what its"
echo "  CPU time gives at -F $freq; ratio: its samples against alone; ratio kept: the same of kept;"
echo "  hotstack s: user+sys; lost: records the kernel could not write; churn /s: the churner's pace"
