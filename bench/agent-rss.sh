#!/bin/bash
# hotstack as an always-on agent under process churn: `record -a -F FREQ --switch-output=PERIOD`
# for DURATION seconds while thousands of short-lived processes start and end. In a loop: CHURN
# runs of /bin/true (each a new pid with its own mappings of libc), NEWFILES runs of programs
# never seen before (each a file of its own, with its own build-id, symbols, DWARF and unwinding
# tables, that spins for 30 ms so that samples land in it: a machine that builds and tests
# software, or deploys new versions), then a second's sleep. hotstack's resident memory (VmRSS)
# is read every second; for each time in AT (seconds) its least and its most over the minute
# before are printed: a period's end gives memory back and the next period's lookups take some
# again. Flat means the most of the last minute within 10% of the first minute's: what it holds
# is its live processes' and files' and its last period's, not everything it ever saw. perf
# record has no such mode (its memory is the kernel's rings and its output file), so there is
# no ratio against it.
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

# in a loop, CHURN short-lived processes (each a new pid with its own mappings) and NEWFILES
# programs never seen before, then a second's sleep; the loops so far in $tmp/loops
(
	n=0
	loops=0
	while :; do
		for _ in $(seq "$churn"); do /bin/true; done
		for _ in $(seq "$newfiles"); do
			n=$((n + 1))
			copy_new "$tmp/prog" "$tmp/prog$n" "$n" && "$tmp/prog$n"
			rm -f "$tmp/prog$n"
		done
		loops=$((loops + 1))
		echo "$loops" >"$tmp/loops.new" && mv "$tmp/loops.new" "$tmp/loops"
		sleep 1
	done
) &
spawner=$!

"$hotstack" record -q -a -F "$freq" --switch-output="$period" --switch-max-files=3 -d "$((secs + 10))" \
	-o "$tmp/agent.pb.gz" &
rec=$!
start=$(date +%s)
first=""
echo "agent-rss: record -a -F $freq --switch-output=$period for $secs s; in a loop: $churn short-lived" \
	"processes, $newfiles programs from new files, 1 s of sleep"
echo "  RSS over the minute before each time (read every second): its least and its most"
: >"$tmp/rss"
for t in $at; do
	while [ $(($(date +%s) - start)) -lt "$t" ]; do
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$rec/status" 2>/dev/null)
		[ -n "$rss" ] || {
			echo "agent-rss: hotstack ended before $t s" >&2
			exit 1
		}
		echo "$(($(date +%s) - start)) $rss" >>"$tmp/rss"
		sleep 1
	done
	loops=$(cat "$tmp/loops" 2>/dev/null || echo 0)
	read -r lo hi <<EOF
$(awk -v t="$t" '$1 > t - 60 && $1 <= t { if (lo == "" || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print lo, hi }' "$tmp/rss")
EOF
	first=${first:-$hi}
	awk -v t="$t" -v lo="$lo" -v hi="$hi" -v f="$first" 'BEGIN {
		printf "  at %5d s: RSS %5.1f to %5.1f MiB (the most %+.1f%% from the first),", t, lo / 1024, hi / 1024, 100 * (hi - f) / f }'
	echo " $((loops * (churn + newfiles))) processes so far, $((loops * newfiles)) from new files"
done
kill -INT "$rec" 2>/dev/null
wait "$rec" 2>/dev/null
