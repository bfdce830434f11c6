#!/bin/sh
# Ring-buffer overflow is never silent, and a ring that cannot work is refused: -m too small
# for two samples with their stack copies is refused before the command runs, naming the
# smallest that can; with a one-page ring and -g fp at a high rate, the records the kernel
# could not write are counted, reported as "lost N samples (P%)" with what to do about it (a
# ring that can help: at least the default, a lower -F), and kept in the profile, where the
# report shows them; with stack copies the advice names --stack-size and -g fp too.
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
grep -qE "lost [0-9]+ samples \([0-9.]+%\): the ring buffers overflowed: record with bigger ones \(-m 128\) or a lower -F$" "$dir/err" ||
	fail "the warning does not say what to do: $(cat "$dir/err")"
"$HOTSTACK" report "$dir/l.pb.gz" >"$dir/report.txt" || fail "report failed"
grep -qF "$line" "$dir/report.txt" || fail "the report does not show '$line'"

# -- with stack copies, the advice is a ring of the default size at least, --stack-size, -g fp
"$HOTSTACK" record -m "$least" -F 20000 -d 1.5 -o "$dir/s.pb.gz" -- "$WORKLOADS/threads" 2 1.5 >/dev/null 2>"$dir/err" ||
	fail "record -m $least failed: $(cat "$dir/err")"
if grep -qE "lost [0-9]+ samples" "$dir/err"; then
	want=$((65528 * 256 / $(getconf PAGESIZE)))
	pages=16
	while [ "$pages" -lt "$want" ] && [ "$pages" -lt 8192 ]; do pages=$((pages * 2)); done
	grep -qE "lost [0-9]+ samples \((over )?[0-9.]+%\): the ring buffers overflowed: record with bigger ones \(-m $pages\) or a lower -F, a smaller --stack-size, or -g fp \(no stack copies\)$" "$dir/err" ||
		fail "the warning with stack copies does not say what can help: $(cat "$dir/err")"
fi
exit 0
