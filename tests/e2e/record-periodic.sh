#!/bin/sh
# A recording's files while it runs. --switch-output=2s for 7 s: at least three periods, each a
# complete profile of its own (pprof time and duration set, every output of a period agreeing),
# their samples adding up to those of a plain recording of the same process over the same time;
# --switch-max-files keeps the newest; --switch-output alone switches on SIGUSR2; a recording
# killed with SIGKILL after 15 s leaves a readable profile of at least 5 s. Needs go tool pprof
# (golang-go) to read each file's time and duration as another reader sees them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v go >/dev/null 2>&1 || skip "go is not installed (apt-get install golang-go)"
export PPROF_TMPDIR="$dir" HOME="$dir"

"$WORKLOADS/threads" 1 120 >/dev/null &
target=$!
trap 'kill $target 2>/dev/null || true; rm -rf "$dir"' EXIT
sleep 0.3

total() { # the samples of folded files
	cat "$@" | awk '{ n += $NF } END { print n + 0 }'
}

# pprof's own reading of a file's duration: seconds (pprof prints a second or more as seconds,
# less with no unit)
pprof_duration() {
	go tool pprof -raw "$1" 2>"$dir/pprof.err" | awk '/^Duration:/ { print $2 }'
}

# 1. periods by time, beside a plain recording of the same process over the same 7 s
mkdir "$dir/sw"
"$HOTSTACK" record -q -p "$target" -d 7 -o "$dir/plain.folded" &
plain=$!
"$HOTSTACK" record -q -p "$target" -d 7 --switch-output=2s -o "$dir/sw/p.pb.gz" -o "$dir/sw/p.folded" ||
	fail "record --switch-output=2s failed"
wait "$plain" || fail "the plain recording failed"
n=$(find "$dir/sw" -name 'p.*.pb.gz' | wc -l)
[ "$n" -ge 3 ] || fail "--switch-output=2s for 7 s wrote $n pprof files, expected at least 3: $(ls "$dir/sw")"
[ "$(find "$dir/sw" -name 'p.*.folded' | wc -l)" -eq "$n" ] || fail "not a folded file per period: $(ls "$dir/sw")"
last=$(find "$dir/sw" -name 'p.*.pb.gz' | sort | tail -n 1)
for f in "$dir"/sw/p.*.pb.gz; do
	base=${f%.pb.gz}
	echo "${base##*/}" | grep -qE '^p\.20[0-9]{12}(_[0-9]+)?$' ||
		fail "$f: not named with its start time (YYYYmmddHHMMSS) before the extension"
	"$HOTSTACK" convert "$f" -o "$base.back.folded" || fail "$f does not read"
	cmp -s "$base.folded" "$base.back.folded" || fail "$f and $base.folded disagree"
	rm "$base.back.folded"
	d=$(pprof_duration "$f")
	[ -n "$d" ] || fail "go tool pprof reads no duration in $f: $(cat "$dir/pprof.err")"
	# the last period ends with the recording
	[ "$f" = "$last" ] || awk -v d="$d" 'BEGIN { exit !(d >= 1.5 && d < 4) }' ||
		fail "$f: a period of ${d} s, expected about 2"
	go tool pprof -raw "$f" 2>/dev/null | grep -q '^Time: 20' || fail "$f: no start time for go tool pprof"
done
all=$(total "$dir"/sw/p.*.folded)
one=$(total "$dir/plain.folded")
[ "$one" -gt 1000 ] || fail "the plain recording has $one samples"
awk -v a="$all" -v b="$one" 'BEGIN { r = a / b; exit !(r > 0.9 && r < 1.1) }' ||
	fail "the periods hold $all samples, a plain recording of the same time $one"
grep -q spin_thread "$dir/plain.folded" || fail "the plain recording has no spin_thread"
for f in "$dir"/sw/p.*.folded; do
	grep -q spin_thread "$f" || fail "$f: no spin_thread in a period"
done

# 2. --switch-max-files: the newest two of each output; nothing else removed
mkdir "$dir/max"
echo keep >"$dir/max/m.20200101000000.folded"
"$HOTSTACK" record -q -p "$target" -d 5 --switch-output=1s --switch-max-files=2 -o "$dir/max/m.folded" \
	-o "$dir/max/m.svg" || fail "record --switch-max-files=2 failed"
[ "$(find "$dir/max" -name 'm.2026*.folded' -o -name 'm.2027*.folded' | wc -l)" -eq 2 ] ||
	fail "--switch-max-files=2 left: $(ls "$dir/max")"
[ "$(find "$dir/max" -name 'm.*.svg' | wc -l)" -eq 2 ] || fail "--switch-max-files=2 left: $(ls "$dir/max")"
[ -f "$dir/max/m.20200101000000.folded" ] || fail "--switch-max-files removed a file it did not write"

# 3. --switch-output alone: a period per SIGUSR2, the last at the end
mkdir "$dir/sig"
"$HOTSTACK" record -q -p "$target" --switch-output -o "$dir/sig/s.folded" &
rec=$!
sleep 1.5
kill -USR2 "$rec"
sleep 1.2
kill -USR2 "$rec"
sleep 1.2
kill -INT "$rec"
set +e
wait "$rec"
status=$?
set -e
[ "$status" -eq 130 ] || fail "record --switch-output ended by SIGINT exited $status"
n=$(find "$dir/sig" -name 's.*.folded' | wc -l)
[ "$n" -eq 3 ] || fail "two SIGUSR2 and the end wrote $n files, expected 3: $(ls "$dir/sig")"
for f in "$dir"/sig/s.*.folded; do
	[ "$(total "$f")" -gt 100 ] || fail "$f: a period of 1 s or more with $(total "$f") samples"
done

# 4. SIGKILL after 15 s: the last checkpoint is there, complete
"$HOTSTACK" record -q -a -d 60 -o "$dir/k.pb.gz" -o "$dir/k.folded" &
rec=$!
sleep 15
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
"$HOTSTACK" report "$dir/k.pb.gz" >"$dir/k.txt" || fail "the checkpoint of a killed recording does not read"
d=$(pprof_duration "$dir/k.pb.gz")
awk -v d="$d" 'BEGIN { exit !(d >= 5) }' || fail "the checkpoint holds ${d:-no} seconds, expected at least 5"
"$HOTSTACK" convert "$dir/k.folded" -o "$dir/k.back.folded" || fail "the folded checkpoint does not read"
grep -q spin_thread "$dir/k.folded" || fail "the checkpoint has no spin_thread"

# 5. what is refused, at once
expect_status 2 "$HOTSTACK" record --switch-output=2x -a -d 1 -o "$dir/x.folded"
expect_stderr "invalid --switch-output '2x'"
expect_status 2 "$HOTSTACK" record --switch-max-files=2 -a -d 1 -o "$dir/x.folded"
expect_stderr "goes with --switch-output"
expect_status 2 "$HOTSTACK" record --switch-output=1s -a -d 1 -o /dev/null --format folded
expect_stderr "writes files"
exit 0
