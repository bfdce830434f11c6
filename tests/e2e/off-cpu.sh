#!/bin/sh
# Off-CPU profiles: offcpu-nofp (-O2 -fomit-frame-pointer) spends each round 10 ms asleep in
# main -> sleeper -> nap -> nanosleep and 10 ms busy in main -> spinner -> spin (run_rounds,
# inlined into main, shows as an inline frame where debug information is read). Recorded with
# --off-cpu:
#  - the off-CPU value holds the sleeping path: the blocking kernel path at the top (schedule,
#    under do_nanosleep), the user stack below it complete down to main (DWARF: no frame
#    pointers), no pseudo frame;
#  - the wall-clock view (--wall, per thread) gives the sleeping path 50% of the thread's time,
#    within 10 points, and the spinning path the other half, as the workload measured them
#    itself (to 5 points: on-CPU samples weigh the time the thread ran since its previous
#    sample, so a late timer interrupt loses nothing); with a second thread, each of the two;
#  - system-wide (-a), the blocked time of the sleeping path is 90-100% of the time the workload
#    measured in sleeper() (less the share of samples hotstack says it lost);
#  - --off-cpu-min drops short blocks: with 100 us naps under brief -> short_nap each round, a
#    5 ms minimum keeps the 10 ms naps and only periods of 5 ms or more.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

W="$WORKLOADS/offcpu-nofp"
expect_status 0 "$HOTSTACK" record --off-cpu -o "$dir/rec.pb.gz" -- "$W" 50
cp "$dir/.err" "$dir/rec.err"
# each of the 50 naps is a blocked period; start-up and exit may block too, and a nap woken
# early (a busy machine) goes back to sleep: a period more
periods=$(sed -n 's/.*off-CPU: \([0-9]*\) blocked periods.*/\1/p' "$dir/rec.err")
[ -n "$periods" ] && [ "$periods" -ge 50 ] && [ "$periods" -le 75 ] ||
	fail "the summary does not count the 50 naps (50 to 75 blocked periods): $(cat "$dir/rec.err")"

"$HOTSTACK" convert "$dir/rec.pb.gz" --value off-cpu -o "$dir/off.folded"
"$HOTSTACK" convert "$dir/rec.pb.gz" --wall -o "$dir/wall.folded"
"$HOTSTACK" convert "$dir/rec.pb.gz" -o "$dir/cpu.folded"

# the sleeping path, root to leaf: the user stack down to main, then the kernel's
sleep_re=';_start;__libc_start_main;__libc_start_call_main;main;(run_rounds;)?sleeper;nap;(__nanosleep;)?(__)?clock_nanosleep;'
sleep_re="$sleep_re"'entry_SYSCALL_64[a-z_]*_\[k\];.*do_nanosleep_\[k\];(__)?schedule_\[k\] [0-9]+$'
awk -v re="$sleep_re" '
{ n = $NF; total += n; if ($0 ~ re) good += n; else if ($0 ~ /;sleeper;/) bad = bad $0 "\n" }
END { printf "%d %d\n", total, good; printf "%s", bad > "/dev/stderr" }' "$dir/off.folded" \
	>"$dir/off.stats" 2>"$dir/off.bad"
read -r off_total off_sleep <"$dir/off.stats"
[ "$off_total" -gt 0 ] || fail "no off-CPU time recorded"
[ ! -s "$dir/off.bad" ] || fail "sleeping stacks not complete, or not blocked in schedule:
$(head -n 5 "$dir/off.bad")"
# nearly all blocked time is in the naps (the rest: start-up, exit)
[ $((off_sleep * 100)) -ge $((off_total * 90)) ] ||
	fail "only $off_sleep of $off_total ns off the CPU are in the sleeping path:
$(sort -t' ' -k2 -nr "$dir/off.folded" | head -n 5)"
echo "off-cpu: off-CPU time $off_total ns, $off_sleep ns of it in the sleeping path"

# The wall-clock view, per thread: each thread's sleeping and spinning paths against the time
# the workload itself measured around sleeper() and spinner() (it prints them at its end), to
# 5 points; and 50% of the thread's wall time to the sleeping path, within 10 points, whenever
# the machine let the workload spend about half its time there (on a loaded machine, spin()
# overruns its 10 ms while preempted).
check_wall() { # FOLDED WORKLOAD-STDERR WHAT [rounds: the 50% of the time in the rounds only]
	awk -v what="$3" -v rounds="${4:-}" '
	FNR == NR { if ($1 == "offcpu-nofp:") { truth_sleep[$3] = $5; truth_spin[$3] = $7 }; next }
	{
		split($1, f, ";"); root = f[1]; n = $NF; total[root] += n
		if (root !~ /^offcpu-(nofp|worker)-[0-9]+\/[0-9]+$/) other = other root " "
	}
	/;(main|worker);(run_rounds;)?sleeper;nap;/ { sleep[root] += n }
	/;(main|worker);(run_rounds;)?spinner;spin/ { spin[root] += n }
	END {
		if (other != "") { print "roots not per thread: " other; exit 1 }
		for (r in total) {
			if (total[r] < 100000000) continue # a thread before it named itself
			tid = r; sub(/.*\//, "", tid)
			if (!(tid in truth_sleep)) { print "thread " r " printed no times"; exit 1 }
			pct = 100 * sleep[r] / (sleep[r] + spin[r])
			want = 100 * truth_sleep[tid] / (truth_sleep[tid] + truth_spin[tid])
			share = 100 * sleep[r] / total[r]
			printf "off-cpu: %s: thread %s: sleeping path %.1f%% of its wall time (%.1f%% of sleeping + spinning; the workload measured %.1f%%)\n", what, r, share, pct, want > "/dev/stderr"
			if (rounds != "") share = pct # a main thread waits for its worker in pthread_join
			if (pct - want > 5 || want - pct > 5) { printf "%s: %.1f%% of the time in sleeping + spinning is in the sleeping path, the workload measured %.1f%%\n", r, pct, want; exit 1 }
			if (want >= 40 && want <= 60 && (share < 40 || share > 60)) { printf "%s: the sleeping path has %.1f%% of the wall time, not 50%% within 10 points\n", r, share; exit 1 }
			if (want < 40 || want > 60) printf "off-cpu: %s: the machine kept spin() running over: the 50%% check left out\n", what > "/dev/stderr"
			checked++
		}
		if (!checked) { print "no thread in the wall view"; exit 1 }
	}' "$2" "$1" 2>"$dir/wall.note" >"$dir/wall.fail" || true
	cat "$dir/wall.note"
	cat "$dir/wall.note" >>"$dir/wall.log"
	[ ! -s "$dir/wall.fail" ] || fail "$3: $(cat "$dir/wall.fail")
$(sort -t' ' -k2 -nr "$1" | head -n 5)"
}
check_wall "$dir/wall.folded" "$dir/rec.err" "one thread"
grep -qE ';main;(run_rounds;)?sleeper;nap;' "$dir/wall.folded" || fail "--wall has no sleeping path"
grep -qE ';main;(run_rounds;)?spinner;spin' "$dir/wall.folded" || fail "--wall has no spinning path"

# the on-CPU view is the default, and has no time of the naps
grep -qE ';main;(run_rounds;)?spinner;spin' "$dir/cpu.folded" || fail "no on-CPU samples in spin"
# (a timer sample can land in schedule() itself just before the switch: a few, never the naps)
in_sched=$(awk '/;do_nanosleep_\[k\];schedule_\[k\]/ { s += $NF } END { print s + 0 }' "$dir/cpu.folded")
cpu_total=$(awk '{ s += $NF } END { print s + 0 }' "$dir/cpu.folded")
[ $((in_sched * 100)) -le $((cpu_total * 2)) ] ||
	fail "the default (on-CPU) view counts blocked stacks ($in_sched of $cpu_total samples)"

# --wall on record records with --off-cpu (it would have no wall values otherwise) and writes
# the wall view: both paths, each thread's own root
expect_status 0 "$HOTSTACK" record --wall -o "$dir/rec-wall.folded" -- "$W" 20
grep -q 'off-CPU: [0-9]* blocked periods' "$dir/.err" || fail "record --wall recorded no off-CPU time: $(cat "$dir/.err")"
grep -qE '^offcpu-nofp-[0-9]+/[0-9]+;.*;main;(run_rounds;)?sleeper;nap;' "$dir/rec-wall.folded" ||
	fail "record --wall wrote no sleeping path per thread: $(head -n 3 "$dir/rec-wall.folded")"
grep -qE ';main;(run_rounds;)?spinner;spin' "$dir/rec-wall.folded" || fail "record --wall wrote no spinning path"

# views other than folded take the value too
"$HOTSTACK" report "$dir/rec.pb.gz" --value off-cpu >"$dir/report.txt"
grep -Eq '^# [0-9.]+ (ns|us|ms|s) off-cpu \([0-9]+ nanoseconds\)' "$dir/report.txt" || fail "report --value off-cpu: $(head -n 3 "$dir/report.txt")"
"$HOTSTACK" flame "$dir/rec.pb.gz" --wall -o "$dir/wall.svg"
grep -q 'sleeper' "$dir/wall.svg" || fail "the --wall flame graph has no sleeper frame"

# threads: a worker does the same rounds beside the main thread; each thread's wall time as
# above, its sleeping stack complete down to its start
"$HOTSTACK" record -q --off-cpu -o "$dir/threads.pb.gz" -- "$W" 30 0 1 2>"$dir/threads.err"
"$HOTSTACK" convert "$dir/threads.pb.gz" --wall -o "$dir/threads.folded"
"$HOTSTACK" convert "$dir/threads.pb.gz" --value off-cpu --root tid -o "$dir/threads-off.folded"
check_wall "$dir/threads.folded" "$dir/threads.err" "two threads" rounds
[ "$(grep -c 'two threads: thread' "$dir/wall.log")" -eq 2 ] || fail "not 2 threads in the wall view: $(cat "$dir/wall.log")"
worker_re='^offcpu-worker-[0-9]+/[0-9]+;clone3;start_thread;worker;(run_rounds;)?sleeper;nap;.*;do_nanosleep_\[k\];schedule_\[k\] [0-9]+$'
grep -qE "$worker_re" "$dir/threads-off.folded" ||
	fail "no complete sleeping stack of the worker: $(grep worker "$dir/threads-off.folded" | head -n 3)"
! grep -E '^offcpu-worker-[0-9]+/[0-9]+;.*;sleeper;nap;' "$dir/threads-off.folded" | grep -vqE "$worker_re" ||
	fail "worker sleeping stacks not complete: $(grep ';sleeper;' "$dir/threads-off.folded" | grep -vE "$worker_re" | head -n 3)"

# system-wide (-a: one event per CPU, PERF_RECORD_SWITCH_CPU_WIDE): the workload's blocked time
# lies within its sleeper() calls and is nearly all of them
"$HOTSTACK" record -a --off-cpu -o "$dir/system.pb.gz" -- "$W" 20 2>"$dir/system.err"
"$HOTSTACK" convert "$dir/system.pb.gz" --comm '^offcpu-nofp$' --value off-cpu -o "$dir/system.folded"
measured=$(awk '$1 == "offcpu-nofp:" { print $5 }' "$dir/system.err")
blocked=$(awk -v re="$sleep_re" '$0 ~ re { s += $NF } END { print s + 0 }' "$dir/system.folded")
# every CPU's switches, each with a stack copy: on a busy machine the rings overflow, and the
# share of samples said lost comes off the 90%
lost=$(sed -n 's/^hotstack: warning: lost [0-9]* samples (\([0-9]*\)[.0-9]*%).*/\1/p' "$dir/system.err" | head -n 1)
floor=$((90 - ${lost:-0}))
echo "off-cpu: -a: $blocked ns blocked in the sleeping path, the workload measured $measured ns in sleeper() (${lost:-0}% lost)"
[ -n "$measured" ] || fail "the workload printed no times: $(cat "$dir/system.err")"
[ "$blocked" -gt 0 ] && [ $((blocked * 100)) -ge $((measured * floor)) ] && [ "$blocked" -le "$measured" ] ||
	fail "-a: $blocked ns blocked in the sleeping path, not $floor-100% of the $measured ns measured in sleeper():
$(sort -t' ' -k2 -nr "$dir/system.folded" | head -n 3)"

# --off-cpu-min: every blocked period kept lasted at least the minimum, all twenty 10 ms naps
# are kept, and 100 us naps are left out (counted in the summary) unless the machine kept the
# thread waiting for 5 ms. Each period is a sample of its own with --keep-time.
"$HOTSTACK" record --off-cpu --off-cpu-min 5ms --keep-time -o "$dir/min.pb.gz" -- "$W" 20 100 2>"$dir/min.err"
"$HOTSTACK" script "$dir/min.pb.gz" >"$dir/min.script"
awk '
/ off-cpu:$/ { n = $(NF - 1); periods++; if (n < 5000000) short++; getline; leafish = 1; stack = "" }
leafish && /^\t/ { stack = stack " " $2 }
leafish && /^$/ { if (stack ~ / nap /) naps++; if (stack ~ / short_nap /) brief++; leafish = 0 }
END { printf "%d %d %d %d\n", periods, short, naps, brief }' "$dir/min.script" >"$dir/min.stats"
read -r periods short naps brief <"$dir/min.stats"
dropped=$(sed -n 's/.*; \([0-9]*\) shorter than --off-cpu-min left out.*/\1/p' "$dir/min.err")
echo "off-cpu: --off-cpu-min 5ms: $periods periods kept ($naps 10 ms naps, $brief 100 us naps), ${dropped:-0} left out"
[ "$periods" -gt 0 ] && [ "$short" -eq 0 ] || fail "$short of $periods periods kept are shorter than 5 ms"
# (a nap woken early and put back to sleep can leave two periods of 5 ms or more)
[ "$naps" -ge 20 ] && [ "$naps" -le 24 ] || fail "$naps periods of the 20 naps of 10 ms kept with --off-cpu-min 5ms"
[ "${dropped:-0}" -ge 1 ] || fail "no blocked period under 5 ms was left out: $(cat "$dir/min.err")"
[ "$brief" -lt 20 ] || fail "every 100 us nap was kept"

# errors
expect_status 2 "$HOTSTACK" record --off-cpu-min 1ms -o "$dir/x.folded" -- true
expect_stderr 'off-cpu-min goes with --off-cpu'
expect_status 2 "$HOTSTACK" record --off-cpu --off-cpu-min 5parsecs -o "$dir/x.folded" -- true
expect_stderr 'invalid duration'
expect_status 2 "$HOTSTACK" record --off-cpu -e page-faults -o "$dir/x.folded" -- true
expect_stderr 'CPU-time event'
expect_status 1 "$HOTSTACK" report --wall "$dir/cpu.folded"
expect_stderr 'no wall-clock values'
expect_status 2 "$HOTSTACK" record --off-cpu -g lbr -o "$dir/x.folded" -- true
expect_stderr 'does not go with -g lbr'
# where kernel samples are refused to a user (perf_event_paranoid 2), --off-cpu says why
if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$HOTSTACK" --version >/dev/null 2>&1; then
	expect_status 1 setpriv --reuid=nobody --regid=nogroup --clear-groups "$HOTSTACK" record --off-cpu \
		-o /tmp/hs-off-cpu-nobody.folded -- true
	expect_stderr '^hotstack: --off-cpu needs kernel samples'
	rm -f /tmp/hs-off-cpu-nobody.folded
fi
exit 0
