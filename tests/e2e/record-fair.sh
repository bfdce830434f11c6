#!/bin/sh
# A process that churns cannot blind a system-wide recording: beside an unprivileged process
# (nobody's) that maps and unmaps libc as fast as it can, record -a -F 99 gives an unrelated
# CPU-bound process (root's) at least 80% of the samples per second of its CPU time (over the
# recording, from /proc/PID/schedstat) that a recording of the same process without the churner
# gives it, in the same run. Before, the reader thread opened each mapping's file,
# fell behind, and the rings overflowed: the unrelated process kept half to two thirds. The
# churner is still profiled, not dropped: its samples reach its main, its mappings read again
# from /proc when it is over its budget.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
[ "$(id -u)" = 0 ] || skip "the churner is run as nobody, which needs root"
id nobody >/dev/null 2>&1 || skip "no user nobody to run the churner as"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv (util-linux) to run the churner as nobody"

chmod 755 "$dir"
cp "$WORKLOADS/churn" "$dir/victim"
cp "$WORKLOADS/churn" "$dir/churn"
victim=""
churner=""
trap 'kill $victim $churner 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
# the victim at a higher priority: enough CPU time for enough samples on a busy machine (what is
# asserted is its samples against its own CPU time, whatever that is)
nice -n -10 "$dir/victim" spin >/dev/null &
victim=$!

# the victim's time on a CPU, in milliseconds (its first field: nanoseconds, as the scheduler
# counts them; utime and stime are counted in clock ticks, 10 ms each)
ms_run() {
	awk '{ printf "%d\n", $1 / 1000000 }' "/proc/$victim/schedstat"
}
# record -a -F 99 for 3 s into $dir/NAME.folded; sets n, the victim's samples, and e, the
# samples its time on a CPU is worth
record() { # NAME
	t0=$(ms_run)
	"$HOTSTACK" record -v -a -F 99 -d 3 -o "$dir/$1.folded" 2>"$dir/$1.err" ||
		fail "record -a failed: $(cat "$dir/$1.err")"
	t1=$(ms_run)
	e=$(((t1 - t0) * 99 / 1000))
	n=$(awk '/^victim;/ { s += $NF } END { print s + 0 }' "$dir/$1.folded")
	echo "record-fair: $1: the victim's samples: $n of the $e its time on a CPU is worth;" \
		"$(grep -E 'records,|budget|could not write' "$dir/$1.err" | tr '\n' ' ')"
}
# a recording beside the churner, which runs for it only
beside() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$dir/churn" maps >>"$dir/churn.out" &
	churner=$!
	sleep 0.5
	record beside
	kill "$churner"
	wait "$churner" || fail "the churner failed: $(cat "$dir/churn.out")"
	churner=""
	n_beside=$((n_beside + n))
	e_beside=$((e_beside + e))
}
alone() {
	record alone
	n_alone=$((n_alone + n))
	e_alone=$((e_alone + e))
}

# alone, beside the churner twice, alone again: the same victim in the same run, so that what the
# machine's load costs the recording, and how it changes, weighs on both alike
n_alone=0 e_alone=0 n_beside=0 e_beside=0
sleep 0.5
alone
beside
beside
alone
if [ "$e_alone" -lt 100 ] || [ "$e_beside" -lt 100 ]; then
	skip "the machine is too busy: the victim's time on a CPU is worth $e_alone and $e_beside samples"
fi
maps=$(awk '$1 == "maps" { s += $2 } END { print s + 0 }' "$dir/churn.out")
churned=$(awk '/^churn;/ { s += $NF } END { print s + 0 }' "$dir/beside.folded")
echo "record-fair: the churner: $maps mappings, $churned samples in the last recording"
[ "$maps" -ge 40000 ] || skip "the machine is too busy: the churner made only $maps mappings"
# the samples per second on a CPU beside the churner: at least 80% of those alone
[ $((n_beside * e_alone * 10)) -ge $((n_alone * e_beside * 8)) ] ||
	fail "beside the churner the victim got $n_beside of the $e_beside samples its time on a CPU is worth," \
		"alone $n_alone of $e_alone"
# the churner's own profile: its loop, named
grep -q '^churn;.*;main;' "$dir/beside.folded" ||
	fail "no sample of the churner reaches its main: $(grep '^churn;' "$dir/beside.folded" | head -3)"
exit 0
