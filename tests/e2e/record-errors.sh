#!/bin/sh
# Every error is one clear line and a non-zero exit: no such pid, command not found (127, as a
# shell does), unknown event, a hardware event without a PMU, an unwritable output, and no
# permission. A command that fails or crashes still gets its outputs, and hotstack exits with
# its status.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

one_line() {
	[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "expected one line on stderr, got: $(cat "$dir/.err")"
}

expect_status 1 "$HOTSTACK" record -p 999999999 -o "$dir/x.folded"
expect_stderr "^hotstack: invalid process id list|no such process"
# a pid that cannot exist (pid_max is at most 4194304)
expect_status 1 "$HOTSTACK" record -p 4194304 -d 1 -o "$dir/x.folded"
expect_stderr "^hotstack: no such process: 4194304$"
one_line
# a zombie (exited, its parent has not reaped it: "sleep 30" never waits) is said to be one
sh -c 'sleep 0 & echo $!; exec sleep 30' >"$dir/zombie.pid" &
zparent=$!
is_zombie() {
	zpid=$(cat "$dir/zombie.pid" 2>/dev/null || true)
	[ -n "$zpid" ] && [ "$(awk '{ print $3 }' "/proc/$zpid/stat" 2>/dev/null)" = Z ]
}
wait_until 50 is_zombie || fail "no zombie to attach to (pid '$zpid')"
expect_status 1 "$HOTSTACK" record -p "$zpid" -d 1 -o "$dir/x.folded"
expect_stderr "^hotstack: process $zpid has exited: a zombie, not yet reaped by its parent \\(pid $zparent\\)"
one_line
kill "$zparent" 2>/dev/null || true

expect_status 127 "$HOTSTACK" record -o "$dir/x.folded" -- /nonexistent/command-xyz
expect_stderr "command not found"
one_line
[ ! -e "$dir/x.folded" ] || fail "an output was written for a command that never ran"
expect_status 127 "$HOTSTACK" record -o "$dir/x.folded" -- no-such-command-xyz
expect_stderr "^hotstack: no-such-command-xyz: command not found$"

expect_status 2 "$HOTSTACK" record -e no-such-event -o "$dir/x.folded" -- true
expect_stderr "^hotstack: unknown event 'no-such-event'"
one_line

# hardware events: refused with the reason and a suggestion where there is no PMU
if ! "$HOTSTACK" record -q -e cycles -o "$dir/c.folded" -- true 2>"$dir/.err"; then
	expect_stderr "cycles"
	expect_stderr "cpu-clock"
	one_line
	if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
		expect_stderr "no hardware PMU|has none"
	fi
fi

# LBR call stacks: refused with the reason and a fallback where the CPU has none
if ! "$HOTSTACK" record -q -g lbr -e cycles -o "$dir/lbr.folded" -- true 2>"$dir/.err"; then
	expect_stderr "lbr"
	expect_stderr "-g auto"
	one_line
fi

expect_status 1 "$HOTSTACK" record -o /nonexistent-dir/out.svg -- true
expect_stderr "^hotstack: cannot write '/nonexistent-dir/out.svg': No such file or directory$"
one_line
expect_status 2 "$HOTSTACK" record -o "$dir/out.unknownext" -- true
expect_stderr "cannot tell the format"

# an existing output survives a failed run untouched
echo keep >"$dir/keep.folded"
expect_status 127 "$HOTSTACK" record -o "$dir/keep.folded" -- no-such-command-xyz
[ "$(cat "$dir/keep.folded")" = keep ] || fail "a failed run clobbered an existing output"

# exit statuses pass through, and the outputs are still written
expect_status 3 "$HOTSTACK" record -q -o "$dir/s.folded" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3'
[ -s "$dir/s.folded" ] || fail "no output for a command that exited 3"
expect_status 139 "$HOTSTACK" record -q -o "$dir/segv.folded" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; kill -SEGV $$'
[ -s "$dir/segv.folded" ] || fail "no output for a command that crashed"

# no permission: system-wide recording as an unprivileged user
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
	expect_status 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$HOTSTACK" record -a -d 1 -o /tmp/hs-unpriv-$$.folded
	expect_stderr "perf_event_paranoid"
	expect_stderr "CAP_PERFMON"
	one_line
fi
exit 0
