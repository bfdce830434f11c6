#!/bin/sh
# What an unprivileged user is told is what would work, at the machine's own settings (read, not
# changed): -a is told the kernel.perf_event_paranoid it takes (0), another user's process (pid
# 1, root's) that no paranoid value allows it but root, CAP_PERFMON or CAP_SYS_PTRACE; a -m over
# what the user may lock for rings (kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK) is refused
# before anything is recorded, naming the largest -m that fits, and that -m records; and the
# ring a recording that lost samples advises opens. Run as a user id of its own (no other
# process of it holds rings), with RLIMIT_MEMLOCK set to 8 MiB.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to run as another user"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
require_perf_events
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
id=$((61000 + $$ % 1000))
chmod 711 "$dir"
mkdir -m 1777 "$dir/u"
export HOME="$dir/u"

# as CMD...: runs CMD as user id $id, group $id, with RLIMIT_MEMLOCK 8 MiB
as() {
	sh -c 'ulimit -l 8192 && exec setpriv --reuid="$0" --regid="$0" --clear-groups "$@"' "$id" "$@"
}
as test -x "$HOTSTACK" || skip "user $id cannot run $HOTSTACK (a directory above it is closed)"

one_line() {
	[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "more than one line: $(cat "$dir/.err")"
}

# -- every CPU: paranoid 0 or less, which 1 is not
if [ "$paranoid" -ge 1 ]; then
	expect_status 1 as "$HOTSTACK" record -a -d 1 -o "$dir/u/a.folded"
	expect_stderr "^hotstack: no permission to record every CPU \(kernel\.perf_event_paranoid is $paranoid; it takes 0 or less\)"
	expect_stderr "CAP_PERFMON"
	expect_stderr "'sysctl kernel\.perf_event_paranoid=0'"
	! grep -q "paranoid=[1-9]" "$dir/.err" || fail "-a is told a paranoid value that does not allow it: $(cat "$dir/.err")"
	one_line
else
	echo "record-unprivileged: -a: kernel.perf_event_paranoid is $paranoid, which allows it: not refused here"
fi

# -- another user's process: no paranoid value helps
expect_status 1 as "$HOTSTACK" record -p 1 -d 1 -o "$dir/u/p.folded"
expect_stderr "^hotstack: no permission to record process 1: it is another user's \(uid [0-9]+\): only root, CAP_PERFMON or CAP_SYS_PTRACE allow that, not kernel\.perf_event_paranoid$"
! grep -q "sysctl" "$dir/.err" || fail "another user's process is told of a sysctl: $(cat "$dir/.err")"
one_line

# -- rings over the locked-memory limit: refused first, naming what fits, which records
if [ "$paranoid" -lt 0 ]; then
	echo "record-unprivileged: kernel.perf_event_paranoid is $paranoid: rings are not limited here"
	exit 0
fi
expect_status 1 as "$HOTSTACK" record -m 65536 -o "$dir/u/m.folded" -- touch "$dir/u/ran"
expect_stderr "^hotstack: -m 65536 \([0-9]+ KiB a ring, [0-9]+ rings?\) is more than this user may lock for rings: kernel\.perf_event_mlock_kb \([0-9]+ KiB for each of [0-9]+ CPUs, for all of this user's rings\) and RLIMIT_MEMLOCK \(8192 KiB\) allow -m [0-9]+ at most; -m 65536 takes kernel\.perf_event_mlock_kb=[0-9]+: "
one_line
[ ! -e "$dir/u/ran" ] || fail "-m 65536 ran the command before refusing"
fit=$(sed -n 's/.* allow -m \([0-9]*\) at most.*/\1/p' "$dir/.err")
if [ "$paranoid" -gt 2 ]; then
	echo "record-unprivileged: kernel.perf_event_paranoid is $paranoid: no recording as a user here"
	exit 0
fi
expect_status 0 as "$HOTSTACK" record -q -g fp -m "$fit" -o "$dir/u/fit.folded" -- "$WORKLOADS/calltree" 0.3
grep -q ';main;' "$dir/u/fit.folded" || fail "-m $fit recorded no stack reaching main"
expect_status 1 as "$HOTSTACK" record -q -g fp -m $((fit * 2)) -o "$dir/u/over.folded" -- true
expect_stderr "allow -m $fit at most"

# -- samples lost with stack copies in a small ring: the ring advised fits, and records
expect_status 0 as "$HOTSTACK" record -m 32 -F 999 -o "$dir/u/l.pb.gz" -- "$WORKLOADS/sideband-flood" 2
if grep -q "lost" "$dir/.err"; then
	if advised=$(sed -n 's/.*record with bigger ones (-m \([0-9]*\)).*/\1/p' "$dir/.err") && [ -n "$advised" ]; then
		[ "$advised" -le "$fit" ] || fail "-m $advised advised, more than the $fit that fits: $(cat "$dir/.err")"
		expect_status 0 as "$HOTSTACK" record -q -m "$advised" -o "$dir/u/l2.folded" -- "$WORKLOADS/calltree" 0.3
	else
		expect_stderr "they are as big as this user may lock \(kernel\.perf_event_mlock_kb [0-9]+ KiB a CPU, RLIMIT_MEMLOCK 8192 KiB\)"
	fi
fi
exit 0
