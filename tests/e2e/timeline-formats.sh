#!/bin/sh
# The viewers' timeline formats, from real multi-threaded recordings:
#  - offcpu-nofp with two worker threads, recorded with --off-cpu straight to the Firefox
#    Profiler's processed format (x.json.gz gzip-compressed, x.firefox.json plain) and to Chrome's
#    trace-event JSON (x.trace.json): timeline-check.py finds the format's invariants (versions,
#    equal-length columns, indexes in range, times in order, nesting), the threads by name, the
#    workload's functions, and off-CPU periods (markers; "[off-CPU]" events);
#  - threads (spin-N threads), converted from the pprof recorded beside them, which keeps the
#    sample times: --format firefox and chrome to standard output, each thread by its name, and
#    to x.trace.json.gz, gzip-compressed;
#  - a pprof recorded alone keeps no times: its samples are still written, laid end to end.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
check="/usr/bin/python3 $SRCDIR/tests/e2e/timeline-check.py"

expect_status 0 "$HOTSTACK" record --off-cpu -o "$dir/off.json.gz" -o "$dir/off.firefox.json" \
	-o "$dir/off.trace.json" -- "$WORKLOADS/offcpu-nofp" 20 0 2
[ "$(head -c 2 "$dir/off.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "off.json.gz is not gzip"
head -c 1 "$dir/off.firefox.json" | grep -q '{' || fail "off.firefox.json is not JSON text"
for f in off.json.gz off.firefox.json; do
	$check firefox "$dir/$f" --thread offcpu-nofp --thread offcpu-worker --function main --function spin \
		--function sleeper --markers || fail "$f: $(cat "$dir/.err")"
done
$check chrome "$dir/off.trace.json" --thread offcpu-nofp --thread offcpu-worker --function spin --function nap \
	--markers || fail "off.trace.json"

expect_status 0 "$HOTSTACK" record -o "$dir/spin.pb.gz" -o "$dir/spin.trace.json" -- "$WORKLOADS/threads" 2 1
"$HOTSTACK" convert "$dir/spin.pb.gz" --format firefox -o - >"$dir/spin.ff.json" || fail "convert --format firefox"
"$HOTSTACK" convert "$dir/spin.pb.gz" --format chrome -o - >"$dir/spin.chrome.json" || fail "convert --format chrome"
$check firefox "$dir/spin.ff.json" --thread spin-0 --thread spin-1 --function spin_thread_0 \
	--function spin_thread_1 || fail "firefox from pprof"
$check chrome "$dir/spin.chrome.json" --thread spin-0 --thread spin-1 --function spin_thread_0 \
	--function spin_thread_1 || fail "chrome from pprof"
$check chrome "$dir/spin.trace.json" --thread spin-0 --thread spin-1 || fail "chrome recorded"
"$HOTSTACK" convert "$dir/spin.pb.gz" -o "$dir/spin.trace.json.gz" || fail "convert to .trace.json.gz"
[ "$(head -c 2 "$dir/spin.trace.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "spin.trace.json.gz is not gzip"
$check chrome "$dir/spin.trace.json.gz" --thread spin-0 --function spin_thread_1 || fail "chrome gzipped"

expect_status 0 "$HOTSTACK" record -o "$dir/untimed.pb.gz" -- "$WORKLOADS/threads" 2 0.5
"$HOTSTACK" convert "$dir/untimed.pb.gz" -o "$dir/untimed.json.gz" -o "$dir/untimed.trace.json" ||
	fail "convert untimed"
$check firefox "$dir/untimed.json.gz" --thread spin-0 --function spin_thread_0 || fail "untimed firefox"
$check chrome "$dir/untimed.trace.json" --thread spin-0 --function spin_thread_0 || fail "untimed chrome"
echo "timeline-formats: ok"
