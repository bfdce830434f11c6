#!/bin/sh
# perf and hotstack on one machine. While `hotstack record -a` runs, `perf record -g`, `perf
# script` and `perf report` work and name the workload's functions, hotstack's profile has the
# workload's stacks, and hotstack reads perf's perf.data with no file said to have changed.
# Beside an event that asks for build-ids (`perf record --buildid-mmap -a`), whose bit the
# kernel also sets in other events' MMAP2 records over their device and inode, hotstack reads
# a perf.data of such records, and records a program, with its files named all the same.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
require_perf_record
cd "$dir"

# Whether process PID's threads number at least N (hotstack's ring reader has started: its
# events are enabled right after).
threads_at_least() { # PID N
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ]
}

# The samples of FOLDED whose stack goes through main to leaf (kernel frames after it), and
# all of the workload's, as "LEAF TOTAL".
calltree_share() { # FOLDED
	awk '/^calltree;/ {
		n = $NF; total += n
		if ($0 ~ /;main;(a;b|c);leaf( [0-9]+$|;[^ ]*_\[k\] [0-9]+$)/) leaf += n
	}
	END { printf "%d %d\n", leaf, total }' "$1"
}

# The frame the workload's main was called from in most of its samples in FOLDED.
below_main() { # FOLDED
	awk '/^calltree;/ {
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		for (i = 3; i <= k; i++) if (f[i] == "main") { by[f[i - 1]] += n; break }
	}
	END { for (c in by) if (by[c] > max) { max = by[c]; best = c } print best }' "$1"
}

# -- perf beside hotstack record -a
# beside: perf record of the workload while hotstack record -a runs; false when perf failed
beside() {
	rm -f perf.data sys.folded
	"$HOTSTACK" record -a -d 120 -o sys.folded 2>sys.err &
	rec=$!
	wait_until 300 threads_at_least $rec 2 || fail "hotstack record -a never started: $(cat sys.err)"
	# `command`: lib.sh's perf() would hide the failure behind --buildid-mmap
	status=0
	# (3 s: on a busy machine hotstack's events may be enabled a while after its reader
	# thread starts, and a 1 s workload was then mostly over: 5 samples of perf's 1968)
	command perf record -g -o perf.data -- "$WORKLOADS/calltree" 3 >perf-record.out 2>perf-record.err ||
		status=$?
	kill -INT $rec
	status_rec=0
	wait $rec || status_rec=$?
	[ $status = 0 ] && ! grep -qE 'assertion failed|stack smashing' perf-record.err
}
trap 'kill $rec 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT
tries=1
until beside; do
	# hotstack's fault, unless perf fails now that it is gone too: another program on the
	# machine has an event that asks for build-ids (the test cannot be made here). One that
	# has gone since (a shared machine's other recordings come and go) gets one more try.
	if ! command perf record -q -o probe-after.data -- true >/dev/null 2>probe-after.err; then
		skip "perf record fails here without hotstack too: $(head -n 1 probe-after.err)"
	fi
	[ $tries -lt 2 ] || fail "perf record beside hotstack record -a exited $status: $(tail -n 3 perf-record.err)"
	tries=$((tries + 1))
done
[ $status_rec = 130 ] || fail "hotstack record -a exited $status_rec, not 130 (SIGINT): $(cat sys.err)"
command perf script -i perf.data >script.txt 2>script.err || fail "perf script failed: $(tail -n 3 script.err)"
grep -qE '^[[:space:]]+[0-9a-f]+ leaf\+0x[0-9a-f]+ \(.*/calltree\)$' script.txt ||
	fail "perf script names no leaf: $(head -n 20 script.txt)"
grep -qE '^[[:space:]]+[0-9a-f]+ main\+0x[0-9a-f]+ \(.*/calltree\)$' script.txt ||
	fail "perf script names no main: $(head -n 20 script.txt)"
command perf report --stdio -i perf.data >perf-report.txt 2>perf-report.err ||
	fail "perf report failed: $(tail -n 3 perf-report.err)"
grep -qE '%.*calltree +\[\.\] leaf$' perf-report.txt || fail "perf report names no leaf: $(head -n 30 perf-report.txt)"

# hotstack reads perf's perf.data: every file the one recorded, libc named as hotstack names it
"$HOTSTACK" report perf.data >report.txt 2>report.err || fail "hotstack report of perf's perf.data failed: $(cat report.err)"
if grep -E 'changed since|debug file' report.err; then
	fail "hotstack report of perf's perf.data: $(cat report.err)"
fi
grep -qE '%.* leaf  \[calltree\]$' report.txt || fail "hotstack report of perf's perf.data names no leaf: $(head -n 12 report.txt)"
"$HOTSTACK" convert perf.data -o perf.folded 2>/dev/null || fail "hotstack convert of perf's perf.data failed"
read -r leaf total <<EOF
$(calltree_share perf.folded)
EOF
[ "$total" -ge 10 ] && [ $((2 * leaf)) -ge "$total" ] ||
	fail "perf's perf.data read by hotstack: $leaf of $total samples through main to leaf: $(sort -t' ' -k2 -nr perf.folded | head -n 5)"
perf_total=$total

# hotstack's profile: the workload's stacks, through main to leaf, named; at -F 999 about a
# quarter of perf's samples at 4000 Hz of the same CPU time (a thirty-second, for what a busy
# machine's rings lose: a sanitizer's build beside other test runs had a sixteenth and a half)
read -r leaf total <<EOF
$(calltree_share sys.folded)
EOF
[ "$total" -ge 1 ] && [ $((32 * total)) -ge "$perf_total" ] ||
	fail "hotstack record -a has $total samples of the workload perf ran, perf $perf_total"
[ $((2 * leaf)) -ge "$total" ] ||
	fail "hotstack record -a: $leaf of the workload's $total samples go through main to leaf: $(grep '^calltree;' sys.folded | sort -t' ' -k2 -nr | head -n 5)"
grep -q '^calltree;.*__libc_start_main;' sys.folded || fail "hotstack record -a names no libc frame of the workload"
[ "$(below_main perf.folded)" = "$(below_main sys.folded)" ] ||
	fail "main's caller is $(below_main perf.folded) in perf's perf.data, $(below_main sys.folded) in hotstack's recording"

# -- beside perf record --buildid-mmap -a: an event that asks for build-ids
command perf record -q --buildid-mmap -a -o bid.data -- sh -c 'until [ -e stop ]; do sleep 0.05; done' \
	>bid.out 2>bid.err &
bid=$!
trap 'touch "$dir/stop"; kill $bid 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT
# its events are enabled before its command runs: wait for sh in place of perf's child
started() {
	for t in /proc/$bid/task/*/children; do
		for c in $(cat "$t" 2>/dev/null); do
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = sh ] && return 0
		done
	done
	return 1
}
wait_until 300 started || fail "perf record --buildid-mmap -a never started: $(cat bid.err)"
# perf's own record: 6.1 dies at its end here ("assertion failed at util/build-id.c"), its
# file is read as it is (written up to where perf died)
command perf record -g -o leaked.data -- "$WORKLOADS/calltree" 1 >leaked.out 2>leaked.err || true
[ -s leaked.data ] || fail "perf record beside perf record --buildid-mmap -a wrote nothing: $(tail -n 3 leaked.err)"
"$HOTSTACK" record -o live.folded -- "$WORKLOADS/calltree" 1 2>live.err ||
	fail "hotstack record beside perf record --buildid-mmap -a failed: $(cat live.err)"
touch stop
wait $bid || fail "perf record --buildid-mmap -a failed: $(tail -n 3 bid.err)"
# the premise: the event that asks for build-ids recorded the workloads
"$HOTSTACK" convert bid.data -o bid.folded 2>bid-read.err || fail "hotstack cannot read perf's --buildid-mmap recording: $(cat bid-read.err)"
grep -q '^calltree;' bid.folded || fail "perf record --buildid-mmap -a did not record the workloads"
if grep -E 'changed since' bid-read.err; then fail "perf's --buildid-mmap recording read wrong: $(cat bid-read.err)"; fi

"$HOTSTACK" report leaked.data >leaked-report.txt 2>leaked-report.err ||
	fail "hotstack report of perf's perf.data failed: $(cat leaked-report.err)"
if grep -E 'changed since|debug file' leaked-report.err; then
	fail "MMAP2 records marked as holding a build-id they do not hold: $(cat leaked-report.err)"
fi
"$HOTSTACK" convert leaked.data -o leaked.folded 2>/dev/null || fail "hotstack convert of perf's perf.data failed"
read -r leaf total <<EOF
$(calltree_share leaked.folded)
EOF
[ "$total" -ge 10 ] && [ $((2 * leaf)) -ge "$total" ] ||
	fail "MMAP2 records marked as holding a build-id: $leaf of $total samples through main to leaf: $(sort -t' ' -k2 -nr leaked.folded | head -n 5)"
[ "$(below_main leaked.folded)" = "$(below_main sys.folded)" ] ||
	fail "main's caller is $(below_main leaked.folded) in perf's perf.data, $(below_main sys.folded) in hotstack's recording"

# hotstack's own rings get such records too
read -r leaf total <<EOF
$(calltree_share live.folded)
EOF
[ "$total" -ge 10 ] && [ $((2 * leaf)) -ge "$total" ] ||
	fail "hotstack record beside an event that asks for build-ids: $leaf of $total samples through main to leaf: $(sort -t' ' -k2 -nr live.folded | head -n 5)"
grep -q '^calltree;.*__libc_start_main;' live.folded ||
	fail "hotstack record beside an event that asks for build-ids names no libc frame: $(sort -t' ' -k2 -nr live.folded | head -n 3)"
if grep -E 'changed|debug file' live.err; then fail "hotstack record beside an event that asks for build-ids: $(cat live.err)"; fi
echo "perf-coexist: perf beside hotstack record -a, and MMAP2 build-id bits hotstack's events did not ask for, read as device and inode"
