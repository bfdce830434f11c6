#!/bin/sh
# SIGINT and SIGTERM end a recording, and every output is still written, complete and valid;
# a profiled command is ended too and hotstack exits with its status.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$WORKLOADS/threads" 2 60 >/dev/null &
target=$!
trap 'kill $target 2>/dev/null || true; rm -rf "$dir"' EXIT
sleep 0.3

for sig in INT TERM; do
	"$HOTSTACK" record -q -p "$target" -o "$dir/$sig.folded" -o "$dir/$sig.pb.gz" -o "$dir/$sig.svg" &
	rec=$!
	sleep 1.5
	kill -"$sig" "$rec"
	set +e
	wait "$rec"
	status=$?
	set -e
	[ "$status" -eq 0 ] || fail "record -p ended by SIG$sig exited $status"
	grep -q spin_thread "$dir/$sig.folded" || fail "SIG$sig: folded output incomplete"
	grep -q '</svg>' "$dir/$sig.svg" || fail "SIG$sig: SVG incomplete"
	"$HOTSTACK" convert "$dir/$sig.pb.gz" -o "$dir/$sig.back.folded" || fail "SIG$sig: pprof unreadable"
	cmp -s "$dir/$sig.folded" "$dir/$sig.back.folded" || fail "SIG$sig: pprof and folded disagree"
	kill -0 "$target" || fail "SIG$sig to hotstack reached the attached process"
done

# a command: SIGTERM to hotstack ends the command, outputs are written, the status is the
# command's (killed by SIGTERM: 143)
"$HOTSTACK" record -q -o "$dir/cmd.folded" -- "$WORKLOADS/threads" 1 60 &
rec=$!
sleep 1.5
kill -TERM "$rec"
set +e
wait "$rec"
status=$?
set -e
[ "$status" -eq 143 ] || fail "record -- cmd ended by SIGTERM exited $status, expected 143"
grep -q spin_thread_0 "$dir/cmd.folded" || fail "command recording incomplete after SIGTERM"
pgrep -f "$WORKLOADS/threads 1 60" >/dev/null && fail "the command outlived the recording"

# -d ends a command too; that is not the command's failure
"$HOTSTACK" record -q -d 1 -o "$dir/dur.folded" -- "$WORKLOADS/threads" 1 60 || fail "record -d 1 -- cmd failed"
grep -q spin_thread_0 "$dir/dur.folded" || fail "no samples with -d"
exit 0
