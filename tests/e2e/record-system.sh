#!/bin/sh
# -a -d 2: samples of more than one process and of kernel code, never of hotstack itself.
set -eu
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
"$HOTSTACK" report "$dir/a.pb.gz" >"$dir/report.txt" || fail "report failed"
grep -q "processes" "$dir/report.txt" || fail "no report header"
exit 0
