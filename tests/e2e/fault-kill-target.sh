#!/bin/sh
# The profiled program killed by SIGKILL in the middle of the recording: the recording ends by
# itself, every output is written, complete and valid (the pprof holds the same stacks as the
# folded file, the SVG is whole), and hotstack exits with the command's status (137), or 0
# for -p.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

check_outputs() {
	grep -q spin_thread "$dir/$1.folded" || fail "$1: folded output incomplete: $(head -c 300 "$dir/$1.folded")"
	grep -q '</svg>' "$dir/$1.svg" || fail "$1: SVG incomplete"
	"$HOTSTACK" convert "$dir/$1.pb.gz" -o "$dir/$1.back.folded" || fail "$1: pprof unreadable"
	cmp -s "$dir/$1.folded" "$dir/$1.back.folded" || fail "$1: pprof and folded disagree"
}

# a command
"$HOTSTACK" record -q -o "$dir/cmd.folded" -o "$dir/cmd.pb.gz" -o "$dir/cmd.svg" -- \
	"$WORKLOADS/threads" 2 60 >"$dir/ready" &
rec=$!
trap 'pkill -KILL -P $rec 2>/dev/null || true; kill $rec 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	grep -q ready "$dir/ready" 2>/dev/null && break
	sleep 0.1
done
sleep 1
target=$(pgrep -P "$rec") || fail "the command is not running"
kill -KILL "$target"
set +e
wait "$rec"
status=$?
set -e
[ "$status" -eq 137 ] || fail "record -- cmd whose command was killed exited $status, expected 137"
check_outputs cmd

# -p
"$WORKLOADS/threads" 2 60 >"$dir/ready2" &
target=$!
trap 'kill -KILL $target 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	grep -q ready "$dir/ready2" 2>/dev/null && break
	sleep 0.1
done
"$HOTSTACK" record -q -p "$target" -o "$dir/pid.folded" -o "$dir/pid.pb.gz" -o "$dir/pid.svg" &
rec=$!
sleep 1.5
kill -KILL "$target"
set +e
wait "$rec"
status=$?
set -e
[ "$status" -eq 0 ] || fail "record -p whose process was killed exited $status"
check_outputs pid
exit 0
