#!/bin/sh
# `hotstack report` as a perf user types it: no FILE (hotstack.pb.gz, else perf.data), -i,
# --stdio, -g caller|callee with perf's meaning and its comma form, --children and
# --no-children, -s with perf's keys; --tui and unknown -g or -s words refused in one line; a
# pipe on standard input read when no FILE is given; convert's FILE as report's.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

one_line() {
	[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "expected one line on stderr, got: $(cat "$dir/.err")"
}
# The call tree's function column (after "total% self%  "), module names left out, nesting kept
tree() {
	sed -n '/^Call tree/,/^$/p' "$1" | sed '1,2d; /^$/d' | cut -c20- | sed 's/  \[.*\]$//'
}

cd "$dir"
"$HOTSTACK" record -q -g fp --no-kernel -- "$WORKLOADS/calltree" 1 || fail "record failed"
[ -s hotstack.pb.gz ] || fail "record wrote no hotstack.pb.gz"

# no FILE: hotstack.pb.gz; -i, --input and --stdio read the same
"$HOTSTACK" report >plain.txt || fail "report with no FILE failed"
grep -q ' leaf  \[calltree\]$' plain.txt || fail "report with no FILE: $(cat plain.txt)"
"$HOTSTACK" report hotstack.pb.gz >pos.txt
for args in "-i hotstack.pb.gz" "--input hotstack.pb.gz" "--input=hotstack.pb.gz" "--stdio -i hotstack.pb.gz"; do
	# shellcheck disable=SC2086 # the words of the options
	"$HOTSTACK" report $args >i.txt || fail "report $args failed"
	cmp -s pos.txt i.txt || fail "report $args differs from report FILE"
done
expect_status 2 "$HOTSTACK" report --tui
expect_stderr "^hotstack: report: no --tui or --gtk: the report is text"
one_line

# -g caller (and a bare -g, perf's default): from the callers down, main above leaf
"$HOTSTACK" report -g caller >caller.txt || fail "report -g caller failed"
tree caller.txt >caller.tree
[ -s caller.tree ] || fail "report -g caller has no call tree: $(cat caller.txt)"
main_at=$(grep -n -- 'main$' caller.tree | head -n1 | cut -d: -f1)
leaf_at=$(grep -n -- 'leaf$' caller.tree | head -n1 | cut -d: -f1)
[ -n "$main_at" ] && [ -n "$leaf_at" ] && [ "$main_at" -lt "$leaf_at" ] ||
	fail "-g caller: main is not above leaf: $(cat caller.tree)"
grep -q -- '-- a$' caller.tree && grep -q -- '-- c$' caller.tree || fail "-g caller: no a and c under main: $(cat caller.tree)"
for args in "-g" "--call-graph=caller" "-g graph,0.5,caller" "--tree" "--tree=caller"; do
	# shellcheck disable=SC2086
	"$HOTSTACK" report $args >x.txt || fail "report $args failed"
	cmp -s caller.txt x.txt || fail "report $args differs from -g caller: $(diff caller.txt x.txt)"
done
# -g callee: from the leaves up: leaf first, at the top level, and main under it
"$HOTSTACK" report -g callee >callee.txt || fail "report -g callee failed"
tree callee.txt >callee.tree
[ "$(head -n1 callee.tree)" = "leaf" ] || fail "-g callee: the tree does not start at leaf: $(cat callee.tree)"
grep -q -- '-- main$' callee.tree || fail "-g callee: main is not under the functions it called: $(cat callee.tree)"
! grep -q '^main$' callee.tree || fail "-g callee: main at the top level: $(cat callee.tree)"
"$HOTSTACK" report --tree=callee >x.txt
cmp -s callee.txt x.txt || fail "--tree=callee differs from -g callee"
# a threshold: at 60% only what holds more than 60% of the samples (main, leaf) is left
"$HOTSTACK" report -g graph,60,caller >t.txt
tree t.txt >t.tree
grep -q 'main$' t.tree || fail "-g graph,60,caller lost main: $(cat t.tree)"
! grep -qE -- '-- (a|c)$' t.tree || fail "-g graph,60,caller kept a branch under 60%: $(cat t.tree)"
"$HOTSTACK" report -g none >none.txt
! grep -q '^Call tree' none.txt || fail "-g none printed a call tree"
expect_status 2 "$HOTSTACK" report -g flat
expect_stderr "^hotstack: invalid -g 'flat' \\(graph or none, a threshold percent, caller or callee"
one_line
# perf's fourth field (the sort key): function is what the tree is; with a FILE after it too
for args in "-g graph,0.5,caller,function" "-g graph,0.5,caller,function hotstack.pb.gz" "-g caller,function"; do
	# shellcheck disable=SC2086
	"$HOTSTACK" report $args </dev/null >x.txt || fail "report $args failed"
	cmp -s caller.txt x.txt || fail "report $args differs from -g caller: $(diff caller.txt x.txt)"
done
# what the tree cannot honour, and an order given twice: refused as -g values, not read as files
for g in graph,0.5,caller,address graph,0.5,10,caller fractal caller,0.5,callee; do
	for file in "" hotstack.pb.gz; do
		expect_status 2 "$HOTSTACK" report -g "$g" $file
		expect_stderr "^hotstack: invalid -g '$g' \\(graph or none, a threshold percent, caller or callee, function"
		one_line
	done
done

# --children: one table, by total (perf's Children); --no-children: self only, by self
"$HOTSTACK" report --children >ch.txt
! grep -q 'Top functions by self' ch.txt || fail "--children printed the table by self"
sed -n '/^Top functions by total/,/^$/p' ch.txt | awk 'NR > 2 && NF { sub("%", "", $3); print $3 }' >totals
[ "$(wc -l <totals)" -ge 3 ] || fail "--children: $(cat ch.txt)"
sort -rn totals | cmp -s - totals || fail "--children: rows not by total: $(cat ch.txt)"
"$HOTSTACK" report --no-children >nch.txt
! grep -q 'total' nch.txt || fail "--no-children printed totals: $(cat nch.txt)"
sed -n '/^Top functions by self/,$p' nch.txt | sed -n 3p | grep -q ' leaf  \[calltree\]$' ||
	fail "--no-children: leaf is not first by self: $(cat nch.txt)"
# perf report --no-children -s dso,symbol: the grouped rows carry self only too
"$HOTSTACK" report --no-children -s dso,symbol >nchs.txt || fail "report --no-children -s failed"
! grep -q 'total' nchs.txt || fail "--no-children -s printed totals: $(cat nchs.txt)"
grep -A1 '^ *self%' nchs.txt | tail -1 | grep -q ' calltree  *leaf$' ||
	fail "--no-children -s: leaf is not first by self: $(cat nchs.txt)"

# -s with perf's keys
"$HOTSTACK" report -s dso,symbol >s.txt || fail "report -s dso,symbol failed"
grep -qE '^ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+  calltree +leaf$' s.txt || fail "-s dso,symbol: $(cat s.txt)"
"$HOTSTACK" report --sort dso,sym >s2.txt
cmp -s s.txt s2.txt || fail "-s dso,symbol differs from --sort dso,sym"
"$HOTSTACK" report -s comm,pid >s3.txt
grep -qE '  calltree +[0-9]+$' s3.txt || fail "-s comm,pid: $(cat s3.txt)"
expect_status 2 "$HOTSTACK" report -s function
expect_stderr "^hotstack: invalid --sort 'function' \\(keys comm, pid, tid, dso, sym or symbol"
one_line

# a directory with perf's perf.data only: report and flame read it
mkdir perf && cp "$SRCDIR/tests/fixtures/perf-data/fp.data" perf/perf.data
(cd perf && "$HOTSTACK" report) >p.txt 2>p.err || fail "report in a perf.data directory: $(cat p.err)"
"$HOTSTACK" report perf/perf.data >p2.txt
cmp -s p.txt p2.txt || fail "report with no FILE did not read perf.data"
# no note of the file read on stderr that is no terminal: nothing beyond what the file named
# gives (the fixture's own warnings: on another kernel than the one it was recorded on, that
# its kernel symbols are missing)
(cd perf && "$HOTSTACK" report perf.data) >/dev/null 2>p3.err
cmp -s p.err p3.err || fail "a note on stderr that is no terminal: $(diff p3.err p.err)"
! grep -q 'reading' p.err || fail "a note on stderr that is no terminal: $(cat p.err)"
(cd perf && "$HOTSTACK" flame -q) || fail "flame in a perf.data directory failed"
grep -q '<svg' perf/perf.svg || fail "flame with no FILE wrote no perf.svg"
if command -v script >/dev/null 2>&1; then
	# on a terminal, report says which file it read
	(cd perf && script -qec "'$HOTSTACK' report >/dev/null" /dev/null) >tty.txt 2>&1 || true
	grep -q 'hotstack: reading perf.data' tty.txt || fail "no note of the file read on a terminal: $(cat tty.txt)"
fi
# a pipe on standard input is the input, before the files here (perf report's rule, for
# "perf record -o - | perf report"): report, flame, annotate and script
cat hotstack.pb.gz | (cd perf && "$HOTSTACK" report) >pipe.txt || fail "report of a pipe failed"
cmp -s pos.txt pipe.txt || fail "report with a pipe on stdin did not read it: $(head -n3 pipe.txt)"
cat hotstack.pb.gz | (cd perf && "$HOTSTACK" flame -q) || fail "flame of a pipe failed"
grep -q '>leaf ' perf/hotstack.svg || fail "flame of a pipe wrote no hotstack.svg of it"
"$HOTSTACK" annotate leaf hotstack.pb.gz >ann.txt || fail "annotate leaf failed"
cat hotstack.pb.gz | (cd perf && "$HOTSTACK" annotate leaf) >ann-pipe.txt || fail "annotate of a pipe failed"
cmp -s ann.txt ann-pipe.txt || fail "annotate with a pipe on stdin did not read it"
"$HOTSTACK" script "$SRCDIR/tests/fixtures/perf-data/pipe.data" >script.txt
cat "$SRCDIR/tests/fixtures/perf-data/pipe.data" | (cd perf && "$HOTSTACK" script) >script-pipe.txt ||
	fail "script of a pipe failed"
cmp -s script.txt script-pipe.txt || fail "script with a pipe on stdin did not read it"
# convert with no FILE reads what report reads: perf.data here
(cd perf && "$HOTSTACK" convert -o conv.folded) || fail "convert with no FILE in a perf.data directory failed"
"$HOTSTACK" convert perf/perf.data -o conv.folded
cmp -s conv.folded perf/conv.folded || fail "convert with no FILE did not read perf.data"
mkdir empty
cd empty
expect_status 2 "$HOTSTACK" report
expect_stderr "^hotstack: report: no hotstack.pb.gz or perf.data here"
one_line
expect_status 2 "$HOTSTACK" convert -o x.folded
expect_stderr "^hotstack: convert: no hotstack.pb.gz or perf.data here"
one_line
echo "report-perf-habits: -i, -g caller|callee|graph,MIN,ORDER|none, --children, -s, perf.data by default"
