#!/bin/sh
# Stacks at tracepoints: offcpu-nofp (-O2 -fomit-frame-pointer) naps 10 times in
# main -> sleeper -> nap -> nanosleep.
#  - -e sched:sched_switch: every hit is a sample, so the nap path has one a nap (10, a switch more for a nap woken early); its kernel
#    stack starts at the traced code (__schedule, where trace_sched_switch is called), never in
#    the tracing machinery (perf_*, trace_*, __traceiter_*, ftrace_*), with the blocking path
#    below it and the user stack, unwound by DWARF, complete down to main; where perf is
#    installed, its chain for the same tracepoint starts at the same function;
#  - -e syscalls:sys_enter_clock_nanosleep: 10 hits on the nap path, user stack complete;
#  - -e list names the categories, -e list:sched the tracepoints of one; unknown tracepoints
#    and categories are one-line errors.
set -eu
# As root, the test runs in a mount namespace of its own in which tracefs is not mounted, as on
# a machine after boot: hotstack must mount it, as perf does.
if [ "$(id -u)" = 0 ] && [ -z "${HS_TEST_OWN_MNTNS:-}" ] && unshare -m --propagation private true 2>/dev/null; then
	HS_TEST_OWN_MNTNS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

mounted_tracefs() {
	awk '$3 == "tracefs" { print $2; exit }' /proc/self/mounts
}
if [ -n "${HS_TEST_OWN_MNTNS:-}" ]; then
	for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do
		while umount "$m" 2>/dev/null; do :; done
	done
	[ -z "$(mounted_tracefs)" ] || fail "tracefs is still mounted in the test's own mount namespace"
elif [ ! -r "$(mounted_tracefs)/events/sched/sched_switch/id" ]; then
	skip "not root, and no tracefs readable by this user is mounted"
fi
W="$WORKLOADS/offcpu-nofp"

set +e
"$HOTSTACK" record -q -e sched:sched_switch -o "$dir/switch.folded" -- "$W" 10 2>"$dir/switch.err"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	grep -qiE 'permission|paranoid|not supported|perf_event_open' "$dir/switch.err" &&
		skip "tracepoint events are refused here: $(head -n1 "$dir/switch.err")"
	fail "recording sched:sched_switch failed: $(cat "$dir/switch.err")"
fi

tracefs=$(mounted_tracefs)
[ -n "$tracefs" ] || fail "recording a tracepoint left no tracefs mounted"
echo "tracepoint: tracefs mounted at $tracefs"
tracing_re='(^|;)(__?_?perf_|perf_|__?_?trace|trace_|ftrace_|__ftrace|bpf_trace|__bpf_trace)[^;]*_\[k\] [0-9]+$'
! grep -qE "$tracing_re" "$dir/switch.folded" ||
	fail "stacks start in the tracing machinery: $(grep -E "$tracing_re" "$dir/switch.folded" | head -n 3)"
nap_re=';_start;__libc_start_main;__libc_start_call_main;main;(run_rounds;)?sleeper;nap;(__nanosleep;)?(__)?clock_nanosleep;'
nap_re="$nap_re"'entry_SYSCALL_64[a-z_]*_\[k\];.*do_nanosleep_\[k\];schedule_\[k\];__schedule_\[k\] [0-9]+$'
naps=$(awk -v re="$nap_re" '$0 ~ re { s += $NF } END { print s + 0 }' "$dir/switch.folded")
leaves=$(sed 's/ [0-9]*$//; s/.*;//' "$dir/switch.folded" | sort | uniq -c | sort -nr | head -n 3 | tr -s ' \n' ' ')
echo "tracepoint: sched:sched_switch: $naps samples on the nap path; distinct stacks end at: $leaves"
# one switch per nap; a nap woken early (a loaded machine) goes back to sleep: a switch more
[ "$naps" -ge 10 ] && [ "$naps" -le 13 ] || fail "$naps sched_switch samples on the nap path, not 10 (to 13):
$(grep ';sleeper;' "$dir/switch.folded" | head -n 5)"
! grep -v ' [0-9]*$' "$dir/switch.folded" | grep -q . || fail "malformed folded lines"
if grep -q ';sleeper;' "$dir/switch.folded" && ! grep -qE "$nap_re" "$dir/switch.folded"; then
	fail "the nap path is not complete: $(grep ';sleeper;' "$dir/switch.folded" | head -n 3)"
fi

# perf, where installed: its chain for the same tracepoint starts at the same function. With two
# probes or more on the tracepoint (another recording of it at the same time, as in a parallel
# test run) the kernel calls them through __traceiter_sched_switch, which perf shows and
# hotstack leaves out with the tracing machinery: perf's chain is taken from below it
if command -v perf >/dev/null 2>&1 &&
	perf record -q -e sched:sched_switch -g -o "$dir/perf.data" -- "$W" 3 >/dev/null 2>&1; then
	perf script -i "$dir/perf.data" 2>/dev/null | awk '
	/sched:sched_switch:/ { want = 1; next }
	want && /^\t/ { sub(/\+0x[0-9a-f]+/, "", $2); if ($2 ~ /^__traceiter_/) next; print $2; want = 0 }' |
		sort | uniq -c | sort -nr >"$dir/perf.top"
	perf_top=$(awk 'NR == 1 { print $2 }' "$dir/perf.top")
	echo "tracepoint: perf's sched_switch chains start at: $(tr -s ' \n' ' ' <"$dir/perf.top")"
	[ "$perf_top" = "__schedule" ] || [ -z "$perf_top" ] ||
		grep -q ";${perf_top}_\[k\] [0-9]*$" "$dir/switch.folded" ||
		fail "perf starts sched_switch chains at $perf_top, hotstack does not"
fi

# a syscall tracepoint: the hit is at the syscall's entry
if [ -r "$tracefs/events/syscalls/sys_enter_clock_nanosleep/id" ]; then
	"$HOTSTACK" record -q -e syscalls:sys_enter_clock_nanosleep -o "$dir/sys.folded" -- "$W" 10
	sys_re=';_start;__libc_start_main;__libc_start_call_main;main;(run_rounds;)?sleeper;nap;(__nanosleep;)?(__)?clock_nanosleep[;_ ]'
	sys=$(awk -v re="$sys_re" '$0 ~ re { s += $NF } END { print s + 0 }' "$dir/sys.folded")
	echo "tracepoint: syscalls:sys_enter_clock_nanosleep: $sys samples on the nap path"
	[ "$sys" -eq 10 ] || fail "$sys sys_enter_clock_nanosleep samples on the nap path, not 10: $(cat "$dir/sys.folded")"
	! grep -qE "$tracing_re" "$dir/sys.folded" || fail "syscall tracepoint stacks start in the tracing machinery"
fi

# listing and errors
"$HOTSTACK" record -e list >"$dir/list"
grep -qE '(^| )sched( |$)' "$dir/list" || fail "-e list does not name the sched category"
"$HOTSTACK" record -e list:sched >"$dir/list.sched"
grep -qx '  sched_switch' "$dir/list.sched" || fail "-e list:sched does not list sched_switch"
expect_status 2 "$HOTSTACK" record -e sched:no_such_tracepoint -o "$dir/x.folded" -- true
expect_stderr "^hotstack: unknown tracepoint 'sched:no_such_tracepoint'"
expect_status 2 "$HOTSTACK" record -e no_such_category:x -o "$dir/x.folded" -- true
expect_stderr "^hotstack: unknown tracepoint category 'no_such_category'"
expect_status 1 "$HOTSTACK" record -e list:no_such_category
expect_stderr "unknown tracepoint category"

# a user who may not read tracefs (root's by default) is told so, not that none is mounted
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
	! setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$tracefs/events/sched/sched_switch/id" 2>/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$HOTSTACK" --version >/dev/null 2>&1; then
	expect_status 1 setpriv --reuid=nobody --regid=nogroup --clear-groups "$HOTSTACK" record -e sched:sched_switch \
		-o /tmp/hs-tracepoint-nobody.folded -- true
	expect_stderr "^hotstack: no permission to read tracepoint 'sched:sched_switch'"
	rm -f /tmp/hs-tracepoint-nobody.folded
fi
exit 0
