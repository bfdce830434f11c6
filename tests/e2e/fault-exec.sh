#!/bin/sh
# A target that execs into another program while it is recorded: as a command (sh execs
# calltree) and with -p (a shell that sleeps, then execs calltree, attached before the exec).
# The new program's samples are named from its own mappings, not the old image's: at least 95%
# of them are calltree's main;a;b;leaf or main;c;leaf (interrupts above leaf aside), under the
# new command name; the recording
# ends when the new program exits. (unwind-exec covers a forked child that execs, unwound by CFI.)
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

check() {
	# the user chain, with the kernel frames of an interrupt taken in leaf left out
	awk '/^calltree;/ { c = $NF; s = $0; sub(/ [0-9]+$/, "", s); while (s ~ /;[^;]*_\[k\]$/) sub(/;[^;]*_\[k\]$/, "", s)
		n += c; if (s ~ /;main;a;b;leaf$/ || s ~ /;main;c;leaf$/) good += c }
	END { print n + 0, good + 0 }' "$dir/$1.folded" >"$dir/$1.stats"
	read -r n good <"$dir/$1.stats"
	echo "fault-exec: $1: $good of $n samples of calltree in main;a;b;leaf or main;c;leaf"
	[ "$n" -ge 50 ] || fail "$1: only $n samples of the exec'd program: $(head -n 5 "$dir/$1.folded")"
	[ $((good * 100)) -ge $((n * 95)) ] || fail "$1: only $good of $n samples complete: $(sort -t' ' -k2 -rn "$dir/$1.folded" | head -n 5)"
}

"$HOTSTACK" record -q -o "$dir/cmd.folded" -- sh -c 'exec "$0" 1' "$WORKLOADS/calltree" ||
	fail "record of a command that execs failed"
check cmd

sh -c 'sleep 0.5; exec "$0" 1' "$WORKLOADS/calltree" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
"$HOTSTACK" record -q -p "$pid" -o "$dir/pid.folded" || fail "record -p of a process that execs failed"
kill -0 "$pid" 2>/dev/null && fail "the recording ended before the process"
check pid
exit 0
