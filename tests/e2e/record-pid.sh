#!/bin/sh
# -p on a running multi-threaded process with -d 2: every thread is sampled, each in its own
# function, and the recording ends after the duration while the process keeps running.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$WORKLOADS/threads" 4 30 >"$dir/ready" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do
	grep -q ready "$dir/ready" 2>/dev/null && break
	sleep 0.1
done
"$HOTSTACK" record -q -p "$pid" -d 2 -o "$dir/p.folded" --root tid || fail "record -p failed"
kill -0 "$pid" || fail "the target died"
for i in 0 1 2 3; do
	grep -q "^spin-$i-$pid/[0-9]*;.*spin_thread_$i" "$dir/p.folded" ||
		fail "thread spin-$i was not sampled in spin_thread_$i: $(cut -d';' -f1 "$dir/p.folded" | sort -u)"
done
# the roots are the threads' own ids, all in the one process
threads=$(cut -d';' -f1 "$dir/p.folded" | sed 's/.*\///' | sort -u | wc -l)
[ "$threads" -ge 4 ] || fail "only $threads threads sampled"
if grep -q '^hotstack' "$dir/p.folded"; then fail "hotstack appears in its own profile"; fi

# two processes in one -p list
"$WORKLOADS/threads" 1 30 >/dev/null &
pid2=$!
trap 'kill $pid $pid2 2>/dev/null || true; rm -rf "$dir"' EXIT
sleep 0.3
"$HOTSTACK" record -q -p "$pid,$pid2" -d 1 -o "$dir/two.folded" --root pid || fail "record -p A,B failed"
grep -q "^spin-0-$pid2;" "$dir/two.folded" || fail "second process not sampled"
grep -q "^spin-3-$pid;" "$dir/two.folded" || fail "first process not sampled"

# the recording ends by itself when the targets exit
kill "$pid2"
"$WORKLOADS/threads" 1 1 >/dev/null &
short=$!
"$HOTSTACK" record -q -p "$short" -o "$dir/short.folded" || fail "record -p of a short process failed"
grep -q "spin_thread_0" "$dir/short.folded" || fail "short process not sampled"
exit 0
