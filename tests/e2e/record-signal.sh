#!/bin/sh
# SIGINT and SIGTERM end a recording, and every output is still written, complete and valid;
# a profiled command is ended too. hotstack exits as a shell reports a command ended by the
# signal (as perf does): 130 for SIGINT (Ctrl-C), 143 for SIGTERM. Ctrl-C is also sent as a
# terminal sends it, to the whole process group (setsid, then kill -INT -PGID).
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
	want=130
	[ "$sig" = INT ] || want=143
	[ "$status" -eq "$want" ] || fail "record -p ended by SIG$sig exited $status, expected $want"
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

# Ctrl-C at a terminal: SIGINT to hotstack's process group (its command's too), for a command
# and for -a. PGID: the session setsid made, whose leader's pid sh -c writes before exec.
ctrl_c() { # NAME HOTSTACK-ARGS...
	name=$1
	shift
	setsid -w sh -c 'echo $$ >"$0"; exec "$@"' "$dir/$name.pgid" "$HOTSTACK" record -q "$@" &
	rec=$!
	wait_until 100 test -s "$dir/$name.pgid" || fail "$name: no process group"
	sleep 1.5
	kill -INT "-$(cat "$dir/$name.pgid")"
	set +e
	wait "$rec"
	status=$?
	set -e
	[ "$status" -eq 130 ] || fail "Ctrl-C on record $*: exited $status, expected 130"
}
ctrl_c cmd -o "$dir/ctrlc.folded" -o "$dir/ctrlc.pb.gz" -- "$WORKLOADS/threads" 1 60
grep -q spin_thread_0 "$dir/ctrlc.folded" || fail "Ctrl-C on record -- cmd: folded output incomplete"
"$HOTSTACK" convert "$dir/ctrlc.pb.gz" -o "$dir/ctrlc.back.folded" || fail "Ctrl-C: pprof unreadable"
cmp -s "$dir/ctrlc.folded" "$dir/ctrlc.back.folded" || fail "Ctrl-C: pprof and folded disagree"
pgrep -f "$WORKLOADS/threads 1 60" >/dev/null && fail "the command outlived Ctrl-C"
if "$HOTSTACK" record -q -a -d 0.1 -o "$dir/probe.folded" 2>"$dir/probe.err"; then
	ctrl_c all -a -o "$dir/all.folded"
	grep -q spin_thread "$dir/all.folded" || fail "Ctrl-C on record -a: the attached workload not in the output"
fi

# -d ends a command too; that is not the command's failure
"$HOTSTACK" record -q -d 1 -o "$dir/dur.folded" -- "$WORKLOADS/threads" 1 60 || fail "record -d 1 -- cmd failed"
grep -q spin_thread_0 "$dir/dur.folded" || fail "no samples with -d"
exit 0
