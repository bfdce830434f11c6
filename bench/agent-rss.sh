#!/bin/bash
# hotstack as an always-on agent under process churn: `record -a -F FREQ --switch-output=PERIOD`
# for DURATION seconds while thousands of short-lived processes start and end, and its resident
# memory (VmRSS) at the times in AT (seconds). Each second: CHURN runs of /bin/true (a new pid
# with its own mappings of libc), and NEWFILES runs of programs never seen before, each a file
# of its own with its own build-id, symbols, DWARF and unwinding tables, that spins for 30 ms so
# that samples land in it (a machine that builds and tests software, or deploys new versions).
# Flat means the last within 10% of the first: what it holds is its live processes' and files'
# and its last period's, not everything it ever saw. perf record has no such mode (its memory is
# the kernel's rings and its output file), so there is no ratio against it.
#
#   bench/agent-rss.sh         # DURATION=1800 AT="60 600 1800" FREQ=99 CHURN=200 NEWFILES=4
#   DURATION=300 AT="60 120 300" bench/agent-rss.sh   # a shorter look
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
secs=${DURATION:-1800}
at=${AT:-60 600 1800}
freq=${FREQ:-99}
churn=${CHURN:-200}
newfiles=${NEWFILES:-4}
period=${PERIOD:-10s}

[ -x "$hotstack" ] || {
	echo "agent-rss: $hotstack missing: build first (ninja -C build)" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/hotstack-agent-rss.XXXXXX)
spawner=""
rec=""
trap 'kill $spawner $rec 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# the new programs: built once, copied with a build-id of their own each time
if [ "$newfiles" -gt 0 ]; then
	cc -g -O1 -Wno-unused-function -o "$tmp/prog" "$here/agent-rss-prog.c" || {
		echo "agent-rss: cannot build the new programs (NEWFILES=0 leaves them out)" >&2
		exit 1
	}
fi
# where its build-id is: after the note's header (namesz 4, descsz 20, type 3, "GNU"); each
# copy gets its number there, written with printf and dd (nothing else runs per copy)
idat=-1
if [ "$newfiles" -gt 0 ]; then
	idat=$(od -An -v -tx1 "$tmp/prog" | tr -s ' \n' '  ' |
		awk '{ i = index($0, " 04 00 00 00 14 00 00 00 03 00 00 00 47 4e 55 00 "); print i ? (i - 1) / 3 + 16 : -1 }')
	[ "$idat" -ge 0 ] || {
		echo "agent-rss: the new program has no build-id" >&2
		exit 1
	}
fi
copy_new() { # SRC DST N
	cp "$1" "$2"
	# shellcheck disable=SC2059 # the format is the bytes, made here
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($3 & 255)) $(($3 >> 8 & 255)) $(($3 >> 16 & 255)) $(($3 >> 24 & 255)))" |
		dd of="$2" bs=1 seek="$idat" conv=notrunc status=none
}

# each second, CHURN short-lived processes (each a new pid with its own mappings) and NEWFILES
# programs never seen before
(
	n=0
	while :; do
		for _ in $(seq "$churn"); do /bin/true; done
		for _ in $(seq "$newfiles"); do
			n=$((n + 1))
			copy_new "$tmp/prog" "$tmp/prog$n" "$n" && "$tmp/prog$n"
			rm -f "$tmp/prog$n"
		done
		sleep 1
	done
) &
spawner=$!

"$hotstack" record -q -a -F "$freq" --switch-output="$period" --switch-max-files=3 -d "$((secs + 10))" \
	-o "$tmp/agent.pb.gz" &
rec=$!
start=$(date +%s)
first=""
echo "agent-rss: record -a -F $freq --switch-output=$period for $secs s; each second $churn processes and $newfiles new programs started and ended"
for t in $at; do
	while [ $(($(date +%s) - start)) -lt "$t" ]; do
		kill -0 "$rec" 2>/dev/null || break
		sleep 1
	done
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$rec/status" 2>/dev/null)
	[ -n "$rss" ] || {
		echo "agent-rss: hotstack ended before $t s" >&2
		exit 1
	}
	first=${first:-$rss}
	awk -v t="$t" -v r="$rss" -v f="$first" 'BEGIN { printf "  at %5d s: RSS %7.1f MiB (%+.1f%% from the first)\n", t, r / 1024, 100 * (r - f) / f }'
done
kill -INT "$rec" 2>/dev/null
wait "$rec" 2>/dev/null
