#!/bin/sh
# -a -d 2: samples of more than one process and of kernel code, never of hotstack itself (on the
# CPU, blocked, or at a scheduler tracepoint).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

# something to sample besides whatever the machine runs
"$WORKLOADS/threads" 1 5 >/dev/null &
busy=$!
trap 'kill $busy 2>/dev/null || true; rm -rf "$dir"' EXIT
"$HOTSTACK" record -q -a -d 2 -o "$dir/a.folded" -o "$dir/a.pb.gz" --root pid &
rec=$!
wait "$rec" || fail "record -a failed"
procs=$(cut -d';' -f1 "$dir/a.folded" | sed 's/.*-//' | sort -u | wc -l)
[ "$procs" -ge 2 ] || fail "only $procs processes sampled system-wide"
grep -q "_\[k\]" "$dir/a.folded" || fail "no kernel frames in a system-wide profile"
grep -q "^spin-0-$busy;" "$dir/a.folded" || fail "the busy process was not sampled"
if grep -q "^[^;]*-$rec;" "$dir/a.folded"; then
	fail "hotstack sampled itself: $(grep "^[^;]*-$rec;" "$dir/a.folded" | head -3)"
fi
# hotstack's own threads (its ring reader blocks in epoll_wait, wakes every few ms) are in no
# view: not on the CPU, not blocked (--wall), not at a scheduler tracepoint. (Another hotstack
# running beside it, as tests do, is another process, and is profiled.)
own_threads() { # FOLDED PID
	grep -E "^[^;]*-$2;" "$1" | head -n 3
}
"$HOTSTACK" record -q -a -d 1 --wall --root pid -o "$dir/wall.folded" &
rec=$!
wait "$rec" || fail "record -a --wall failed"
[ -z "$(own_threads "$dir/wall.folded" "$rec")" ] ||
	fail "hotstack's own threads in the wall view: $(own_threads "$dir/wall.folded" "$rec")"
"$HOTSTACK" record -q -a -d 1 -e sched:sched_switch --root pid -o "$dir/switch.folded" 2>"$dir/switch.err" &
rec=$!
if wait "$rec"; then
	[ -z "$(own_threads "$dir/switch.folded" "$rec")" ] ||
		fail "hotstack's own threads at sched_switch: $(own_threads "$dir/switch.folded" "$rec")"
else
	grep -qi 'tracefs\|tracepoint' "$dir/switch.err" || fail "record -a -e sched:sched_switch failed: $(cat "$dir/switch.err")"
fi
"$HOTSTACK" report "$dir/a.pb.gz" >"$dir/report.txt" || fail "report failed"
grep -q "processes" "$dir/report.txt" || fail "no report header"
exit 0
