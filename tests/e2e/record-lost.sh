#!/bin/sh
# Ring-buffer overflow is never silent: with a one-page ring and a high rate, the records the
# kernel could not write are counted, reported as "lost N samples (P%)" with what to do about it
# (a bigger -m, a lower -F, -g fp), and kept in the profile, where the report shows them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$WORKLOADS/threads" 2 5 >/dev/null &
busy=$!
trap 'kill $busy 2>/dev/null || true; rm -rf "$dir"' EXIT
"$HOTSTACK" record -a -m 1 -F 20000 -d 1.5 -o "$dir/l.pb.gz" 2>"$dir/err" || {
	grep -q "permission" "$dir/err" && skip "system-wide recording is not permitted here"
	fail "record failed: $(cat "$dir/err")"
}
grep -qE "lost [0-9]+ samples \([0-9.]+%\)" "$dir/err" || skip "no sample was lost this time: $(cat "$dir/err")"
line=$(grep -oE "lost [0-9]+ samples \([0-9.]+%\)" "$dir/err")
# and says what to do: a ring twice as big as the one that overflowed (-m 1), a lower rate
grep -qE "lost [0-9]+ samples \([0-9.]+%\): the ring buffers overflowed: record with bigger ones \(-m 2\) or a lower -F, or -g fp" "$dir/err" ||
	fail "the warning does not say what to do: $(cat "$dir/err")"
"$HOTSTACK" report "$dir/l.pb.gz" >"$dir/report.txt" || fail "report failed"
grep -qF "$line" "$dir/report.txt" || fail "the report does not show '$line'"
exit 0
