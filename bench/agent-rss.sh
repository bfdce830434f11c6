#!/bin/bash
# hotstack as an always-on agent under process churn: `record -a -F FREQ --switch-output=PERIOD`
# for DURATION seconds beside one of three churns (KIND):
#   files   (the default) in a loop, CHURN runs of /bin/true (each a new pid with its own mappings
#           of libc) and NEWFILES runs of programs never seen before (each a file of its own, with
#           its own build-id, symbols, DWARF and unwinding tables, that spins for 30 ms so that
#           samples land in it: a machine that builds and tests software, or deploys new
#           versions), then a second's sleep;
#   forks   FORKS (50) runs of /bin/true a second, spread over the second;
#   python  in a loop, PYTHONS (200) short Python processes (python3, each about 50 ms in a few
#           functions of its own, 8 at a time), then a second's sleep.
# hotstack's resident memory (VmRSS, and the anonymous part of it) is read every second: each
# minute's least and most are printed as the minute ends (the curve), and for each time in AT
# (seconds) the least and most over the minute before it. A period's end gives memory back and
# the next period's lookups take some of it again. Flat means the most of the last minute within
# 10% of the first minute's: what it holds is its live processes' and files' and its last
# period's, not everything it ever saw; an agent is to stay under 64 MiB (docs/continuous.md).
# perf record has no such mode (its memory is the kernel's rings and its output file), so there
# is no ratio against it.
#
#   bench/agent-rss.sh         # KIND=files DURATION=1800 AT="60 600 1800" FREQ=99 CHURN=200 NEWFILES=4
#   KIND=forks DURATION=600 AT="60 300 600" bench/agent-rss.sh
#   KIND=python DURATION=600 AT="60 300 600" bench/agent-rss.sh
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
kind=${KIND:-files}
forks=${FORKS:-50}
pythons=${PYTHONS:-200}

case $kind in
files) ;;
forks | python) newfiles=0 ;;
*)
	echo "agent-rss: KIND is files, forks or python" >&2
	exit 1
	;;
esac
[ -x "$hotstack" ] || {
	echo "agent-rss: $hotstack missing: build first (ninja -C build)" >&2
	exit 1
}
if [ "$kind" = python ] && ! command -v python3 >/dev/null 2>&1; then
	echo "agent-rss: KIND=python needs python3" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/hotstack-agent-rss.XXXXXX)
spawner=""
rec=""
# the churn runs in a process group of its own: its processes in flight end with it
trap '[ -n "$spawner" ] && kill -- -"$spawner" 2>/dev/null; kill $rec 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

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

# the short Python program: a few functions, about 50 ms
cat >"$tmp/short.py" <<'PY'
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def work(seconds):
    end = time.time() + seconds
    while time.time() < end:
        leaf(1000)


work(0.05)
PY

# the churn, in a process group of its own (set -m); the loops and processes so far in $tmp/loops
mkfifo "$tmp/pace"
set -m
(
	exec 3<>"$tmp/pace"
	n=0
	loops=0
	procs=0
	while :; do
		case $kind in
		files)
			for _ in $(seq "$churn"); do /bin/true; done
			for _ in $(seq "$newfiles"); do
				n=$((n + 1))
				copy_new "$tmp/prog" "$tmp/prog$n" "$n" && "$tmp/prog$n"
				rm -f "$tmp/prog$n"
			done
			procs=$((procs + churn + newfiles))
			sleep 1
			;;
		forks)
			# paced by bash's clock and a read from a FIFO nobody writes to, so that no
			# other process is started
			t0=${EPOCHREALTIME/./}
			for ((i = 1; i <= forks; i++)); do
				/bin/true
				d=$((t0 + i * 1000000 / forks - ${EPOCHREALTIME/./}))
				if [ "$d" -gt 0 ]; then
					printf -v d '%d.%06d' $((d / 1000000)) $((d % 1000000))
					read -r -t "$d" -u 3
				fi
			done
			procs=$((procs + forks))
			;;
		python)
			for i in $(seq "$pythons"); do
				python3 "$tmp/short.py" &
				[ $((i % 8)) = 0 ] && wait
			done
			wait
			procs=$((procs + pythons))
			sleep 1
			;;
		esac
		loops=$((loops + 1))
		echo "$loops $procs" >"$tmp/loops.new" && mv "$tmp/loops.new" "$tmp/loops"
	done
) &
spawner=$!
set +m

"$hotstack" record -q -a -F "$freq" --switch-output="$period" --switch-max-files=3 -d "$((secs + 10))" \
	-o "$tmp/agent.pb.gz" &
rec=$!
start=$(date +%s)
first=""
case $kind in
files) what="$churn short-lived processes, $newfiles programs from new files, 1 s of sleep" ;;
forks) what="$forks runs of /bin/true a second" ;;
python) what="$pythons short Python processes (8 at a time), 1 s of sleep" ;;
esac
echo "agent-rss: record -a -F $freq --switch-output=$period for $secs s; in a loop: $what"
echo "  RSS read every second; each minute's least and most (and the anonymous part of the most):"
: >"$tmp/rss"
minute=1
# the curve's line for minute M (the minute that ends at M * 60 s)
minute_line() {
	awk -v m="$1" '$1 > (m - 1) * 60 && $1 <= m * 60 {
		if (lo == "" || $2 < lo) lo = $2
		if ($2 > hi) { hi = $2; anon = $3 }
	} END { if (hi) printf "  minute %3d: RSS %5.1f to %5.1f MiB (anonymous %5.1f)\n", m, lo / 1024, hi / 1024, anon / 1024 }' "$tmp/rss"
}
for t in $at; do
	while [ $(($(date +%s) - start)) -lt "$t" ]; do
		sample=$(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } END { if (r) print r, a }' "/proc/$rec/status" 2>/dev/null)
		[ -n "$sample" ] || {
			echo "agent-rss: hotstack ended before $t s" >&2
			exit 1
		}
		now=$(($(date +%s) - start))
		echo "$now $sample" >>"$tmp/rss"
		while [ "$now" -ge $((minute * 60)) ]; do
			minute_line "$minute"
			minute=$((minute + 1))
		done
		sleep 1
	done
	while [ "$t" -ge $((minute * 60)) ]; do
		minute_line "$minute"
		minute=$((minute + 1))
	done
	counts=$(cat "$tmp/loops" 2>/dev/null || echo "0 0")
	loops=${counts% *}
	procs=${counts#* }
	range=$(awk -v t="$t" '$1 > t - 60 && $1 <= t { if (lo == "" || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } END { print lo, hi }' "$tmp/rss")
	lo=${range% *}
	hi=${range#* }
	first=${first:-$hi}
	awk -v t="$t" -v lo="$lo" -v hi="$hi" -v f="$first" 'BEGIN {
		printf "  at %5d s: RSS %5.1f to %5.1f MiB (the most %+.1f%% from the first),", t, lo / 1024, hi / 1024, 100 * (hi - f) / f }'
	echo " $procs processes so far, $((loops * newfiles)) from new files"
done
awk '{ if ($2 > hi) hi = $2 } END { printf "  the most in all: %.1f MiB (%s 64 MiB)\n", hi / 1024, (hi > 65536 ? "over" : "under") }' "$tmp/rss"
kill -INT "$rec" 2>/dev/null
wait "$rec" 2>/dev/null
