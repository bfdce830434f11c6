#!/bin/sh
# The view options of report, flame, convert and script end to end: filters (--pid, --tid,
# --comm, --include, --exclude, --time, --min-percent), the report's --tree, --sort and
# --stats, flame graph --reverse, --palette, --flamechart, --title, --width, HTML and speedscope
# output, --root, and the errors for values that make no sense. On the hand-written
# tests/fixtures/flame-small.folded, a perf.data fixture, and a recording where perf_event_open
# is allowed.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

small=$SRCDIR/tests/fixtures/flame-small.folded
H=$HOTSTACK

# ---- filters on folded stacks ----
"$H" convert "$small" --include '^lex$' -o "$dir/inc.folded" || fail "--include failed"
[ "$(wc -l <"$dir/inc.folded")" -eq 3 ] || fail "--include lex: $(cat "$dir/inc.folded")"
if grep -v ';lex' "$dir/inc.folded"; then fail "--include kept a stack without lex"; fi
"$H" convert "$small" --include lex --exclude next_token -o "$dir/ex.folded" || fail "--exclude failed"
[ "$(awk '{ s += $NF } END { print s }' "$dir/ex.folded")" -eq 53 ] || fail "--include lex --exclude next_token: $(cat "$dir/ex.folded")"
"$H" convert "$small" --comm '^work' -o "$dir/comm.folded" || fail "--comm failed"
[ "$(cut -d';' -f1 "$dir/comm.folded" | sort -u)" = worker ] || fail "--comm ^work: $(cat "$dir/comm.folded")"
"$H" convert "$small" --min-percent 11 -o "$dir/min.folded" || fail "--min-percent failed"
grep -q '^app;main;render;\[frames under 11%\] 20$' "$dir/min.folded" || fail "--min-percent 11: $(cat "$dir/min.folded")"
[ "$(awk '{ s += $NF } END { print s }' "$dir/min.folded")" -eq 200 ] || fail "--min-percent lost samples"

# ---- the report ----
"$H" report "$small" --tree >"$dir/tree.txt" || fail "report --tree failed"
grep -q '^  40.00%    5.00%  |-- render$' "$dir/tree.txt" || fail "report --tree: $(cat "$dir/tree.txt")"
grep -q '^   1.00%    1.00%  |   |   `-- next_token$' "$dir/tree.txt" || fail "report --tree nesting: $(cat "$dir/tree.txt")"
"$H" report "$small" --tree=callee >"$dir/caller.txt" || fail "report --tree=callee failed"
grep -q '^  26.50%   26.50%  lex$' "$dir/caller.txt" || fail "report --tree=callee: $(cat "$dir/caller.txt")"
"$H" report "$small" --tree --min-percent 20 >"$dir/min.txt" || fail "report --tree --min-percent failed"
grep -q '^  25.00%   25.00%  |   `-- draw$' "$dir/min.txt" || fail "report --min-percent 20: $(cat "$dir/min.txt")"
if grep -q 'draw_text' "$dir/min.txt"; then fail "--min-percent 20 kept draw_text"; fi
"$H" report "$small" --sort comm,sym --top 3 >"$dir/sort.txt" || fail "report --sort failed"
grep -q '^  25.00%           50   25.00%           50  worker   sys_write$' "$dir/sort.txt" ||
	fail "report --sort comm,sym: $(cat "$dir/sort.txt")"
"$H" report "$small" --stats >"$dir/stats.txt" || fail "report --stats failed"
grep -q '^  25.00%           50  kernel$' "$dir/stats.txt" || fail "report --stats: $(cat "$dir/stats.txt")"

# ---- flame graph options ----
"$H" flame "$small" --reverse --palette mem --title 'Leaves first' --width 800 -o "$dir/rev.svg" ||
	fail "flame --reverse failed"
grep -q '<text id="title" x="400" y="24">Leaves first</text>' "$dir/rev.svg" || fail "--title/--width not applied"
# reversed: the leaves are the children of "all"
grep -q '<title>sys_write (50 samples, 25.00%)</title><rect x="[0-9.]*" y="' "$dir/rev.svg" || fail "no sys_write frame"
if grep -q '<g id="legend">' "$dir/rev.svg"; then fail "a kind legend with another palette"; fi
"$H" flame "$small" --inverted -o - --format html >"$dir/inv.html" || fail "flame --format html failed"
grep -q '"inverted":true' "$dir/inv.html" || fail "--inverted not in the HTML"
"$H" convert "$small" -o - --format speedscope >"$dir/s.json" || fail "--format speedscope failed"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert [p["name"] for p in d["profiles"]] == ["app", "worker"]' \
	"$dir/s.json" || fail "speedscope output: $(head -c 300 "$dir/s.json")"

# ---- errors ----
expect_status 1 "$H" report "$small" --time 0,1
expect_stderr "time needs timestamps"
expect_status 1 "$H" flame "$small" --flamechart -o "$dir/fc.svg"
expect_stderr "flamechart needs timestamps"
expect_status 2 "$H" flame "$small" --palette rainbow
expect_stderr "unknown palette 'rainbow'"
expect_status 2 "$H" report "$small" --sort comm,size
expect_stderr "invalid --sort"
expect_status 2 "$H" report "$small" --root process
expect_stderr "invalid --root"
expect_status 2 "$H" report "$small" --pid 12x
expect_stderr "invalid process id list"
expect_status 2 "$H" report "$small" --time 3,1
expect_stderr "invalid --time"
expect_status 2 "$H" report "$small" --min-percent 101
expect_stderr "invalid --min-percent"
expect_status 2 "$H" report "$small" --include '('
expect_stderr "invalid regular expression"
expect_status 2 "$H" report "$small" --tree=sideways
expect_stderr "invalid --tree"

# ---- perf.data keeps every sample's time: windows from the first sample ----
fp=$SRCDIR/tests/fixtures/perf-data/fp.data
"$H" convert -q "$fp" -o "$dir/all.folded" || fail "convert fp.data failed"
"$H" convert -q "$fp" --time 0,0.15 -o "$dir/t1.folded" || fail "convert --time 0,0.15 failed"
"$H" convert -q "$fp" --time 0.15, -o "$dir/t2.folded" || fail "convert --time 0.15, failed"
n_all=$(awk '{ s += $NF } END { print s + 0 }' "$dir/all.folded")
n1=$(awk '{ s += $NF } END { print s + 0 }' "$dir/t1.folded")
n2=$(awk '{ s += $NF } END { print s + 0 }' "$dir/t2.folded")
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && [ $((n1 + n2)) -eq "$n_all" ] ||
	fail "--time windows of fp.data: $n1 + $n2 samples, $n_all in all"
"$H" flame -q "$fp" --flamechart -o "$dir/fp-chart.svg" || fail "flame --flamechart of fp.data failed"
grep -q '<text id="title" x="600" y="24">[^<]*/calltree 0.3</text>' "$dir/fp-chart.svg" || fail "the flame chart is not titled with the command"
"$H" script -q "$fp" --time 0,0.15 >"$dir/t1.script" || fail "script --time failed"
[ "$(grep -c '^[^	].* [0-9]*/[0-9]* ' "$dir/t1.script")" -eq "$n1" ] || fail "script --time: a different number of samples"

# ---- a recording: processes, threads, time ----
if "$H" record -q -g none -o "$dir/.probe.folded" -- true 2>/dev/null; then
	"$H" record -q -F 999 --keep-time -o "$dir/r.pb.gz" -- "$WORKLOADS/threads" 2 0.6 >/dev/null || fail "record failed"
	"$H" convert "$dir/r.pb.gz" --root tid -o "$dir/r.folded" || fail "convert failed"
	tid=$(awk -F';' '$1 ~ /^spin-1-/ { sub(/.*\//, "", $1); print $1; exit }' "$dir/r.folded")
	pid=$(awk -F';' '$1 ~ /^spin-1-/ { sub(/^spin-1-/, "", $1); sub(/\/.*/, "", $1); print $1; exit }' "$dir/r.folded")
	[ -n "$tid" ] && [ -n "$pid" ] || fail "no samples of spin-1: $(head -3 "$dir/r.folded")"
	"$H" convert "$dir/r.pb.gz" --root tid --tid "$tid" -o "$dir/tid.folded" || fail "--tid failed"
	# the thread's name may change (from the process's to spin-1), its ids do not
	[ "$(cut -d';' -f1 "$dir/tid.folded" | sed 's/.*-//' | sort -u)" = "$pid/$tid" ] || fail "--tid $tid: $(cat "$dir/tid.folded")"
	"$H" convert "$dir/r.pb.gz" --pid "$pid" -o "$dir/pid.folded" || fail "--pid failed"
	"$H" convert "$dir/r.pb.gz" -o "$dir/r-comm.folded" || fail "convert failed"
	cmp -s "$dir/pid.folded" "$dir/r-comm.folded" || fail "--pid of the only process changed the profile"
	"$H" convert "$dir/r.pb.gz" --pid 1 -o "$dir/none.folded" || fail "--pid 1 failed"
	[ ! -s "$dir/none.folded" ] || fail "--pid 1 kept samples: $(cat "$dir/none.folded")"
	"$H" report "$dir/r.pb.gz" --time 0,0.3 >"$dir/w1.txt" || fail "report --time failed"
	"$H" report "$dir/r.pb.gz" --time 0.3, >"$dir/w2.txt" || fail "report --time failed"
	"$H" report "$dir/r.pb.gz" >"$dir/w.txt" || fail "report failed"
	n1=$(awk 'NR == 1 { print $2 }' "$dir/w1.txt")
	n2=$(awk 'NR == 1 { print $2 }' "$dir/w2.txt")
	n=$(awk 'NR == 1 { print $2 }' "$dir/w.txt")
	[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && [ $((n1 + n2)) -eq "$n" ] || fail "--time windows: $n1 + $n2 samples, $n in all"
	"$H" flame "$dir/r.pb.gz" --flamechart -o "$dir/chart.html" || fail "--flamechart -o .html failed"
else
	echo "views: perf_event_open refused: the recording is left out" >&2
fi
exit 0
