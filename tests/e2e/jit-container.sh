#!/bin/sh
# JIT code in a container: node runs in its own pid and mount namespaces with a /tmp of its own
# (a tmpfs), where it is pid 1. Attached with -p:
#  - with --perf-basic-prof, its perf map exists only as /tmp/perf-1.map inside the namespace:
#    hotstack reads it through /proc/PID/root under the pid the process has in its namespace
#    (NSpid), and the JavaScript frames are named;
#  - with --perf-prof, the jitdump it was already writing when the recording started is found
#    among its mappings (/proc/PID/maps) and read through the mapping itself. V8 writes the file
#    through a stdio buffer and flushes it only when the buffer fills or at exit, so this node
#    exits during the recording (its namespace, and the tmpfs holding the file, go with it): the
#    records it flushed last are still read, through the file hotstack holds open.
# The JavaScript frame reader is left out (--no-js): this is the perf map and the jitdump.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install nodejs)"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed (apt-get install util-linux)"
require_perf_events
unshare -p -m --fork --propagation private sh -c 'mount -t tmpfs none /tmp' 2>"$dir/unshare.err" ||
	skip "no private pid and mount namespaces here: $(head -n1 "$dir/unshare.err")"

# node_script SECONDS: fib in a loop for that long
node_script() {
	printf '%s\n' 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }' \
		"const end = Date.now() + $1 * 1000;" 'while (Date.now() < end) fib(24);'
}

# start FLAG SECONDS: node FLAG in the namespaces, running that long; sets pid to its pid outside
start() {
	unshare -p -m --fork --propagation private sh -c \
		'mount -t tmpfs none /tmp && cd /tmp && exec node "$1" -e "$2"' sh "$1" "$(node_script "$2")" &
	upid=$!
	pid=
	for _ in $(seq 100); do
		pid=$(pgrep -P "$upid" -x node || true)
		[ -n "$pid" ] && grep -q "NSpid:.*[[:space:]]1$" "/proc/$pid/status" 2>/dev/null && break
		sleep 0.05
	done
	[ -n "$pid" ] || fail "node did not start in its namespaces"
	trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
	# compiled by then: V8 has written its first JIT names (slower on a loaded machine)
	wait_until 100 sh -c 'test -e "$1/perf-1.map" || test -e "$1/jit-1.dump"' sh "/proc/$pid/root/tmp" || true
	sleep 0.5
}

stop() {
	kill "$pid" 2>/dev/null || true
	wait "$upid" 2>/dev/null || true
}

start --perf-basic-prof 20
[ ! -e "/tmp/perf-$pid.map" ] && [ -e "/proc/$pid/root/tmp/perf-1.map" ] ||
	fail "the perf map is not where the test expects it (inside the namespace only, as perf-1.map)"
"$HOTSTACK" record --no-js -v -p "$pid" -d 1.5 -o "$dir/map.folded" >/dev/null 2>"$dir/map.err" || fail "record: $(cat "$dir/map.err")"
stop
grep -q ';JS:[~^+*]\{0,1\}fib [^;]*_\[j\]' "$dir/map.folded" ||
	fail "no named fib frames through the namespace's perf map: $(grep JIT "$dir/map.err") $(head -3 "$dir/map.folded" | cut -c1-300)"
echo "jit-container: perf map read as /proc/$pid/root/tmp/perf-1.map"

start --perf-prof 2.5
"$HOTSTACK" record --no-js -v -p "$pid" -d 10 -o "$dir/dump.folded" >/dev/null 2>"$dir/dump.err" || fail "record: $(cat "$dir/dump.err")"
stop
grep -q 'JIT: 1 jitdump files' "$dir/dump.err" || fail "the jitdump was not found: $(grep JIT "$dir/dump.err")"
grep -q ';JS:[~^+*]\{0,1\}fib [^;]*_\[j\]' "$dir/dump.folded" ||
	fail "no named fib frames from the jitdump: $(head -3 "$dir/dump.folded" | cut -c1-300)"
echo "jit-container: the jitdump of a process already running, found among its mappings"
exit 0
