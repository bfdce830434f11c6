#!/bin/sh
# What record says at its end, with no terminal: the files it wrote ("wrote FILE", every -o)
# and one next step for the first ("next: ..."), none of it with -q; -d ending a command says
# so, and takes units (500ms, 1s; -d 2x is refused, naming the units); a Python program recorded
# with --no-python, its samples in the interpreter's loop, gets a line naming the process, the
# runtime and the flag, and one recorded as usual does not; so does Node.js with --no-js. A
# mistyped command or option is answered with the nearest one. diff on a terminal prints its
# table of changes (and still writes its flame graph); without a terminal it prints nothing.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

# the files written, and the next step for the first
"$HOTSTACK" record -F 499 -g fp -o "$dir/a.pb.gz" -o "$dir/a.svg" -- "$WORKLOADS/calltree" \
	>/dev/null 2>"$dir/end.err" || fail "record failed: $(cat "$dir/end.err")"
grep -qx "hotstack: wrote $dir/a.pb.gz" "$dir/end.err" || fail "no 'wrote' line for the .pb.gz: $(cat "$dir/end.err")"
grep -qx "hotstack: wrote $dir/a.svg" "$dir/end.err" || fail "no 'wrote' line for the .svg: $(cat "$dir/end.err")"
grep -q "^hotstack: next: hotstack report $dir/a.pb.gz" "$dir/end.err" ||
	fail "no next step for the .pb.gz: $(cat "$dir/end.err")"
[ "$(grep -c '^hotstack: next:' "$dir/end.err")" = 1 ] || fail "more than one next step: $(cat "$dir/end.err")"
# wrote, then next: the last two lines
tail -n1 "$dir/end.err" | grep -q '^hotstack: next:' || fail "the next step is not the last line"
"$HOTSTACK" record -q -F 499 -g fp -o "$dir/q.svg" -- "$WORKLOADS/calltree" >/dev/null 2>"$dir/q.err" ||
	fail "record -q failed"
[ ! -s "$dir/q.err" ] || fail "record -q said something: $(cat "$dir/q.err")"

# -d with units, ending a command that would run for a minute
"$HOTSTACK" record -d 700ms -F 99 -g fp -o "$dir/d.folded" -- sleep 60 >/dev/null 2>"$dir/d.err" ||
	fail "record -d 700ms failed: $(cat "$dir/d.err")"
grep -q '^hotstack: stopped after 0.7 s (-d), and stopped the command (pid [0-9]*)' "$dir/d.err" ||
	fail "-d ending the command was not said: $(cat "$dir/d.err")"
grep -q '^hotstack: next: hotstack flame' "$dir/d.err" || fail "no next step for a .folded: $(cat "$dir/d.err")"
if "$HOTSTACK" record -d 2x -- true 2>"$dir/bad.err"; then fail "-d 2x was taken"; fi
grep -q "invalid duration '2x'.*500ms" "$dir/bad.err" || fail "-d 2x: $(cat "$dir/bad.err")"
for d in 1s 0.5 250ms; do
	"$HOTSTACK" record -q -d "$d" -g none -o "$dir/u.folded" -- sleep 30 || fail "-d $d refused"
done
# the same parser for the other durations
"$HOTSTACK" record -q --off-cpu --off-cpu-min 1ms -d 200ms -g none -o "$dir/o.folded" -- sleep 5 ||
	fail "--off-cpu-min 1ms refused"

# did you mean
if "$HOTSTACK" recrod -- true 2>"$dir/typo.err"; then fail "'recrod' ran"; fi
grep -q "did you mean 'record'" "$dir/typo.err" || fail "no suggestion for recrod: $(cat "$dir/typo.err")"
if "$HOTSTACK" record --duratoin 1 -- true 2>"$dir/opt.err"; then fail "--duratoin was taken"; fi
grep -q "did you mean '--duration'? see 'hotstack record --help'" "$dir/opt.err" || fail "no suggestion for --duratoin: $(cat "$dir/opt.err")"
if "$HOTSTACK" frobnicate 2>"$dir/far.err"; then fail "frobnicate ran"; fi
! grep -q "did you mean" "$dir/far.err" || fail "a far word got a suggestion: $(cat "$dir/far.err")"

# Python code not read: the process, the runtime and the flag are named
python=$(command -v python3.11 || command -v python3)
"$HOTSTACK" record --no-python -F 499 -o "$dir/py.pb.gz" -- "$python" "$SRCDIR/tests/workloads/calltree.py" 1.5 \
	>/dev/null 2>"$dir/py.err" || fail "record --no-python failed: $(cat "$dir/py.err")"
grep -q "% of the samples of python[0-9.]* (pid [0-9]*) are in Python code that has no names here: its frames were not read (--no-python)" \
	"$dir/py.err" || fail "no line about the Python code not read: $(cat "$dir/py.err")"
"$HOTSTACK" record -F 499 -o "$dir/py2.pb.gz" -- "$python" "$SRCDIR/tests/workloads/calltree.py" 1.5 \
	>/dev/null 2>"$dir/py2.err" || fail "record python failed: $(cat "$dir/py2.err")"
! grep -q "has no names here" "$dir/py2.err" || fail "Python read, and still said unread: $(cat "$dir/py2.err")"

if command -v node >/dev/null 2>&1; then
	"$HOTSTACK" record --no-js -F 499 -o "$dir/js.pb.gz" -- node "$SRCDIR/tests/workloads/node/hot.js" 2 \
		>/dev/null 2>"$dir/js.err" || fail "record --no-js failed: $(cat "$dir/js.err")"
	grep -q "% of the samples of node (pid [0-9]*) are in JavaScript code that has no names here: its frames were not read (--no-js): record without it; node --perf-basic-prof" \
		"$dir/js.err" || fail "no line about the JavaScript code not read: $(cat "$dir/js.err")"
fi

# diff: the table on a terminal, nothing without one
"$HOTSTACK" diff "$dir/a.pb.gz" "$dir/py2.pb.gz" -o "$dir/x.svg" >"$dir/notty.out" 2>&1 || fail "diff -o failed"
[ ! -s "$dir/notty.out" ] || fail "diff -o printed: $(cat "$dir/notty.out")"
command -v script >/dev/null 2>&1 || fail "script (util-linux) is missing"
(cd "$dir" && script -qec "'$HOTSTACK' diff a.pb.gz py2.pb.gz" /dev/null >tty.out 2>&1) || fail "diff on a terminal failed"
tr -d '\r' <"$dir/tty.out" >"$dir/tty.txt"
grep -q '^Functions by change of their share of self' "$dir/tty.txt" &&
	grep -q ' leaf  \[calltree\]  (gone)$' "$dir/tty.txt" ||
	fail "diff on a terminal printed no table: $(head -c 600 "$dir/tty.txt")"
[ -s "$dir/py2.diff.svg" ] || fail "diff on a terminal wrote no py2.diff.svg"
grep -q 'wrote py2.diff.svg' "$dir/tty.txt" || fail "diff on a terminal did not say what it wrote"
exit 0
