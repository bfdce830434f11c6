#!/bin/sh
# Ring-buffer overflow is never silent, and a ring that cannot work is refused: -m too small
# for two samples with their stack copies is refused before the command runs, naming the
# smallest that can; with a one-page ring and -g fp at a high rate, the records the kernel
# could not write are counted, reported as "lost N samples (P%)" with what to do about it (a
# ring that can help: at least the default, a lower -F), and kept in the profile, where the
# report shows them; with stack copies the advice names --stack-size and -g fp too. A program
# that maps and unmaps a file as code over and over makes far more side-band records than
# samples: where the kernel counts each event's lost records (Linux 6.0 on) the samples lost
# are no more than the program could have had, P% is of the samples it had, and the side-band
# records lost are said apart, for one thread and for -a; before, records of any kind.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

# -- a ring smaller than two samples with 64 KiB stack copies: refused, the command never run
for m in 1 16; do
	expect_status 2 "$HOTSTACK" record -m "$m" -F 20000 -o "$dir/x.pb.gz" -- touch "$dir/ran"
	expect_stderr "^hotstack: -m $m \\([0-9]+ KiB a ring\\) is too small for two samples with 65528-byte stack copies, which need -m [0-9]+ or more$"
	least=$(sed -n 's/.*which need -m \([0-9]*\) or more.*/\1/p' "$dir/.err")
	[ ! -e "$dir/ran" ] || fail "-m $m ran the command before refusing"
	[ ! -e "$dir/x.pb.gz" ] || fail "-m $m wrote an output"
done
# the smallest it names is taken (and a smaller --stack-size needs fewer pages)
expect_status 0 "$HOTSTACK" record -q -m "$least" -o "$dir/least.folded" -- "$WORKLOADS/calltree" 0.5
grep -q ';main;' "$dir/least.folded" || fail "-m $least: no stack reaches main"
expect_status 0 "$HOTSTACK" record -q -m 4 --stack-size 4096 -o "$dir/small.folded" -- "$WORKLOADS/calltree" 0.5
grep -q . "$dir/small.folded" || fail "-m 4 --stack-size 4096 recorded nothing"

"$WORKLOADS/threads" 2 5 >/dev/null &
busy=$!
trap 'kill $busy 2>/dev/null || true; rm -rf "$dir"' EXIT
"$HOTSTACK" record -a -g fp -m 1 -F 20000 -d 1.5 -o "$dir/l.pb.gz" 2>"$dir/err" || {
	grep -q "permission" "$dir/err" && skip "system-wide recording is not permitted here"
	fail "record failed: $(cat "$dir/err")"
}
grep -qE "lost [0-9]+ samples \([0-9.]+%\)" "$dir/err" || skip "no sample was lost this time: $(cat "$dir/err")"
line=$(grep -oE "lost [0-9]+ samples \([0-9.]+%\)" "$dir/err")
# and says what to do: a ring that can help (the default for -g fp, not just twice -m 1), a
# lower rate
side='( and [0-9]+ side-band records? \(mappings, names, forks, exits\))?'
grep -qE "lost [0-9]+ samples \([0-9.]+%\)$side: the ring buffers overflowed: record with bigger ones \(-m 128\) or a lower -F$" "$dir/err" ||
	fail "the warning does not say what to do: $(cat "$dir/err")"
"$HOTSTACK" report "$dir/l.pb.gz" >"$dir/report.txt" || fail "report failed"
grep -qF "$line" "$dir/report.txt" || fail "the report does not show '$line'"

# -- side-band records lost besides samples, told apart (on a kernel that counts them)
major=$(uname -r | cut -d. -f1)
# lost_check FILE.pb.gz STDERR MAX: the samples said lost and kept are at most MAX, P% is of
# their sum, and the report shows what was said
lost_check() {
	got=$("$HOTSTACK" report "$1" | sed -n 's/^# \([0-9][0-9]*\) samples.*/\1/p')
	"$HOTSTACK" report "$1" >"$dir/lost-report.txt"
	if [ "$major" -lt 6 ]; then
		grep -qE "lost [0-9]+ records, samples and side-band \(mappings, names, forks, exits\) together: the ring buffers overflowed" "$2" ||
			fail "no records said lost: $(cat "$2")"
		return
	fi
	grep -qE "[0-9]+ side-band records \(mappings, names, forks, exits\): the ring buffers overflowed" "$2" ||
		fail "the side-band records lost are not said: $(cat "$2")"
	grep -qE "side-band records \(mappings, names, forks, exits\)" "$dir/lost-report.txt" ||
		fail "the report does not show the side-band records lost"
	n=$(sed -n 's/.*lost \([0-9][0-9]*\) samples (.*/\1/p' "$2")
	[ -n "$n" ] || return 0
	[ $((got + n)) -le "$3" ] || fail "lost $n samples beside $got kept, more than the $3 there could be: $(cat "$2")"
	pct=$(sed -n 's/.*lost [0-9][0-9]* samples (\(over \)\{0,1\}\([0-9.]*\)%).*/\2/p' "$2")
	awk -v n="$n" -v g="$got" -v p="$pct" 'BEGIN { d = 100 * n / (n + g) - p; exit !(d > -0.11 && d < 0.11 || p == 99.9 && d > 0) }' ||
		fail "lost $n samples of $((got + n)) said to be $pct%"
	grep -qF "lost $n samples ($pct%)" "$dir/lost-report.txt" || fail "the report does not show the samples lost"
}
"$HOTSTACK" record -g fp -m 16 -F 999 -o "$dir/f.pb.gz" -- "$WORKLOADS/sideband-flood" 3 2>"$dir/f.err" ||
	fail "record of sideband-flood failed: $(cat "$dir/f.err")"
grep -qE "lost [0-9]+" "$dir/f.err" || fail "a 16-page ring lost nothing of 3 s of mappings: $(cat "$dir/f.err")"
# one thread at 999 Hz for 3 s: 2997 samples at most, and a tick either way
lost_check "$dir/f.pb.gz" "$dir/f.err" 3100
"$WORKLOADS/sideband-flood" 3 &
flood=$!
"$HOTSTACK" record -a -g fp -m 16 -F 999 -d 2 -o "$dir/fa.pb.gz" 2>"$dir/fa.err" ||
	fail "record -a beside sideband-flood failed: $(cat "$dir/fa.err")"
wait "$flood"
ncpu=$(getconf _NPROCESSORS_ONLN)
grep -qE "lost [0-9]+" "$dir/fa.err" && lost_check "$dir/fa.pb.gz" "$dir/fa.err" $((999 * 2 * ncpu + 100 * ncpu))

# -- with stack copies, the advice is a ring of the default size at least, --stack-size, -g fp
"$HOTSTACK" record -m "$least" -F 20000 -d 1.5 -o "$dir/s.pb.gz" -- "$WORKLOADS/threads" 2 1.5 >/dev/null 2>"$dir/err" ||
	fail "record -m $least failed: $(cat "$dir/err")"
if grep -qE "lost [0-9]+ samples" "$dir/err"; then
	want=$((65528 * 256 / $(getconf PAGESIZE)))
	pages=16
	while [ "$pages" -lt "$want" ] && [ "$pages" -lt 8192 ]; do pages=$((pages * 2)); done
	grep -qE "lost [0-9]+ samples \((over )?[0-9.]+%\)$side: the ring buffers overflowed: record with bigger ones \(-m $pages\) or a lower -F, a smaller --stack-size, or -g fp \(no stack copies\)$" "$dir/err" ||
		fail "the warning with stack copies does not say what can help: $(cat "$dir/err")"
fi
exit 0
