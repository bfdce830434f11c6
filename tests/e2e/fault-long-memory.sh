#!/bin/sh
# A long recording's memory stays flat once the set of distinct stacks is stable: hotstack
# records a steady workload (2 spinning threads, -p, 16 s, default call graphs with stack copies,
# samples added up per stack) while its resident set (VmRSS in /proc/PID/status) is read every
# half second; the largest value of the second half of the recording is at most 4 MiB above the
# largest of the first half (which includes the start: symbol tables, CFI, rings). A memory
# assertion, not a timing one: the figures are read, not timed.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
# AddressSanitizer keeps freed memory in quarantine, which would grow the resident set by
# itself: without it, the sanitizer build's memory is flat as well
if grep -qa __asan_init "$HOTSTACK"; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
fi

"$WORKLOADS/threads" 2 60 >"$dir/ready" &
target=$!
rec=""
trap 'kill $target $rec 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	grep -q ready "$dir/ready" 2>/dev/null && break
	sleep 0.1
done
"$HOTSTACK" record -q -p "$target" -d 16 -o "$dir/long.folded" -o "$dir/long.pb.gz" &
rec=$!
: >"$dir/rss"
# a read every half second or so until the recording ends: on a loaded machine each takes
# longer, and fewer fit in its 16 s
hwm=0
while kill -0 "$rec" 2>/dev/null; do
	sleep 0.5
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$rec/status" 2>/dev/null) || break
	[ -n "$rss" ] || break
	echo "$rss" >>"$dir/rss"
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$rec/status" 2>/dev/null || echo "$hwm")
done
wait "$rec" || fail "the recording failed"
grep -q spin_thread_1 "$dir/long.folded" || fail "the workload was not sampled"
samples=$(awk '{ n += $NF } END { print n }' "$dir/long.folded")
reads=$(wc -l <"$dir/rss")
# enough for two halves to compare, however busy the machine (19 reads beside two test runs
# and two CPU hogs)
[ "$reads" -ge 8 ] || fail "RSS read only $reads times in a 16 s recording"
awk -v half=$((reads / 2)) 'NR <= half && $1 > a { a = $1 } NR > half && $1 > b { b = $1 } END { print a, b }' "$dir/rss" >"$dir/halves"
read -r first second <"$dir/halves"
echo "fault-long-memory: $samples samples in 16 s; RSS (kB) every 0.5 s: $(tr '\n' ' ' <"$dir/rss")"
echo "fault-long-memory: largest RSS first half $first kB, second half $second kB (growth $((second - first)) kB), peak $hwm kB"
[ $((second - first)) -le 4096 ] ||
	fail "RSS grew by $((second - first)) kB in the second half of a steady recording: $(tr '\n' ' ' <"$dir/rss")"
exit 0
