#!/bin/sh
# Off-CPU profiles: offcpu-nofp (-O2 -fomit-frame-pointer) spends each round 10 ms asleep in
# main -> sleeper -> nap -> nanosleep and 10 ms busy in main -> spinner -> spin (run_rounds,
# inlined into main, shows as an inline frame where debug information is read). Recorded with
# --off-cpu:
#  - the off-CPU value holds the sleeping path: the blocking kernel path at the top (schedule,
#    under do_nanosleep), the user stack below it complete down to main (DWARF: no frame
#    pointers), no pseudo frame;
#  - the wall-clock view (--wall, per thread) gives the sleeping path 50% of the thread's time,
#    within 10 points, and the spinning path the other half; with two more threads doing the
#    same, each of the three;
#  - --off-cpu-min drops short blocks: with 100 us naps under brief -> short_nap each round, a
#    5 ms minimum keeps the 10 ms naps and only periods of 5 ms or more.
set -eu
. "$(dirname "$0")/lib.sh"
require_perf_events

W="$WORKLOADS/offcpu-nofp"
expect_status 0 "$HOTSTACK" record --off-cpu -o "$dir/rec.pb.gz" -- "$W" 50
cp "$dir/.err" "$dir/rec.err"
grep -q 'off-CPU: 50 blocked periods' "$dir/rec.err" ||
	fail "the summary does not count the 50 naps: $(cat "$dir/rec.err")"

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

# the wall-clock view: per thread (comm-pid/tid roots), both halves
awk '
{ n = $NF; total += n }
/;main;(run_rounds;)?sleeper;nap;/ { sleep += n }
/;main;(run_rounds;)?spinner;spin/ { spin += n }
$1 !~ /^offcpu-nofp-[0-9]+\/[0-9]+;/ { other = other $1 "\n" }
END {
	printf "%d %d %d %d %d\n", total, sleep, spin, int(100 * sleep / total + 0.5), int(100 * spin / total + 0.5)
	printf "%s", other > "/dev/stderr"
}' "$dir/wall.folded" >"$dir/wall.stats" 2>"$dir/wall.other"
read -r wall_total wall_sleep wall_spin sleep_pct spin_pct <"$dir/wall.stats"
echo "off-cpu: wall time $wall_total ns: sleeping path $sleep_pct% ($wall_sleep ns), spinning path $spin_pct% ($wall_spin ns); off-CPU time $off_total ns, $off_sleep in the sleeping path"
[ ! -s "$dir/wall.other" ] || fail "--wall roots are not per thread: $(head -n 3 "$dir/wall.other")"
[ "$sleep_pct" -ge 40 ] && [ "$sleep_pct" -le 60 ] ||
	fail "the sleeping path has $sleep_pct% of the wall time, not 50% within 10 points:
$(sort -t' ' -k2 -nr "$dir/wall.folded" | head -n 5)"
[ "$spin_pct" -ge 40 ] && [ "$spin_pct" -le 60 ] ||
	fail "the spinning path has $spin_pct% of the wall time, not 50% within 10 points"
# the on-CPU view is the default, and has no time of the naps
grep -qE ';main;(run_rounds;)?spinner;spin' "$dir/cpu.folded" || fail "no on-CPU samples in spin"
! grep -q ';do_nanosleep_\[k\];schedule_\[k\] ' "$dir/cpu.folded" ||
	fail "the default (on-CPU) view counts blocked stacks"

# views other than folded take the value too
"$HOTSTACK" report "$dir/rec.pb.gz" --value off-cpu >"$dir/report.txt"
grep -q 'off-cpu (nanoseconds)' "$dir/report.txt" || fail "report --value off-cpu: $(head -n 3 "$dir/report.txt")"
"$HOTSTACK" flame "$dir/rec.pb.gz" --wall -o "$dir/wall.svg"
grep -q 'sleeper' "$dir/wall.svg" || fail "the --wall flame graph has no sleeper frame"

# threads: two workers do the same rounds beside the main thread; each thread's wall time is
# half asleep, its sleeping stack complete down to its start
"$HOTSTACK" record -q --off-cpu --wall -o "$dir/threads.folded" -- "$W" 30 0 2
awk '
{ split($1, f, ";"); root = f[1]; n = $NF; total[root] += n }
/;sleeper;nap;/ { sleep[root] += n }
/^offcpu-worker-[0-9]+\/[0-9]+;/ && /;sleeper;nap;/ && !/;clone3;start_thread;worker;(run_rounds;)?sleeper;nap;.*;schedule_\[k\] [0-9]+$/ { bad = bad $0 "\n" }
END {
	for (r in total) {
		if (total[r] < 100000000) continue # a thread before it named itself
		printf "%s %d %d\n", r, total[r], int(100 * sleep[r] / total[r] + 0.5)
	}
	printf "%s", bad > "/dev/stderr"
}' "$dir/threads.folded" >"$dir/threads.stats" 2>"$dir/threads.bad"
echo "off-cpu: per thread (root, wall ns, sleeping %): $(tr '\n' ' ' <"$dir/threads.stats")"
[ "$(grep -c . "$dir/threads.stats")" -eq 3 ] || fail "not 3 threads in the wall view: $(cat "$dir/threads.stats")"
[ ! -s "$dir/threads.bad" ] || fail "worker sleeping stacks not complete: $(head -n 3 "$dir/threads.bad")"
while read -r root ns pct; do
	[ "$pct" -ge 40 ] && [ "$pct" -le 60 ] || fail "thread $root: $pct% of its wall time asleep, not 50% within 10 points"
done <"$dir/threads.stats"

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
[ "$naps" -eq 20 ] || fail "$naps of the 20 naps of 10 ms kept with --off-cpu-min 5ms"
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
exit 0
