#!/bin/sh
# hotstack diff to text: two recordings of diffwork, the second with grows() doing twice the
# work (diffwork 2). The text diff (-o FILE.txt, and -o - --format txt) lists grows first by
# change of total share, grown by about 11 points (1/7 of the work to 2/8; 4 to 18 allowed on a
# busy machine), no steady function grown by half as much; a diff against a recording of
# calltree marks calltree's functions (gone) and diffwork's (new), and not libc's start code,
# in both. The report's options, --palette, and --normalize without a .folded output are
# refused. With fewer than two profiles, diff takes perf diff's defaults (the .old recording
# against the new).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

for m in 1 2; do
	"$HOTSTACK" record -q -F 2999 -g fp --no-kernel -o "$dir/$m.pb.gz" -- "$WORKLOADS/diffwork" "$m" 250 ||
		fail "record diffwork $m failed"
done
"$HOTSTACK" record -q -F 2999 -g fp --no-kernel -o "$dir/ct.pb.gz" -- "$WORKLOADS/calltree" >/dev/null ||
	fail "record calltree failed"
"$HOTSTACK" diff "$dir/1.pb.gz" "$dir/2.pb.gz" -o "$dir/d.txt" || fail "diff -o d.txt failed"
"$HOTSTACK" diff "$dir/1.pb.gz" "$dir/2.pb.gz" -o - --format txt >"$dir/stdout.txt" || fail "diff -o - failed"
cmp -s "$dir/d.txt" "$dir/stdout.txt" || fail "-o d.txt and -o - --format txt differ"
# every function listed (--top): libc's start code, unchanged, ranks last of them, below the
# 20 rows shown by default when a busy machine adds functions to either recording
"$HOTSTACK" diff "$dir/ct.pb.gz" "$dir/1.pb.gz" -o "$dir/new.txt" --top 1000 || fail "diff against calltree failed"

# what the diff writers do not use is refused in one line, not ignored: the report's tables,
# tree and statistics; a palette (colours are the change); --normalize where no .folded is written
for opt in "-s dso" --stats --children --no-children "-g caller" --tree "--palette hot"; do
	for out in d2.txt d2.svg; do
		# shellcheck disable=SC2086 # the words of the option
		expect_status 2 "$HOTSTACK" diff "$dir/1.pb.gz" "$dir/2.pb.gz" -o "$dir/$out" $opt
		expect_stderr "^hotstack: diff: --[a-z-]+ does not apply to a (differential view|text report|flame graph)"
		[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "diff $opt: not one line: $(cat "$dir/.err")"
		[ ! -e "$dir/$out" ] || fail "diff $opt wrote $out"
	done
done
expect_status 2 "$HOTSTACK" diff "$dir/1.pb.gz" "$dir/2.pb.gz" -o "$dir/d2.svg" --normalize
expect_stderr "^hotstack: diff: --normalize does not apply to a flame graph \\(it scales A's counts in .folded"
# what they use still works: --normalize with a .folded beside the svg, --top on the text
"$HOTSTACK" diff "$dir/1.pb.gz" "$dir/2.pb.gz" -o "$dir/d2.svg" -o "$dir/d2.folded" --normalize ||
	fail "diff --normalize with .folded failed"
"$HOTSTACK" diff "$dir/1.pb.gz" "$dir/2.pb.gz" -o "$dir/top.txt" --top 2 || fail "diff --top 2 failed"
[ "$(grep -c '%  ' "$dir/top.txt")" -le 4 ] || fail "diff --top 2 listed more: $(cat "$dir/top.txt")"

# no A and B, as perf diff: hotstack.pb.gz.old against hotstack.pb.gz, else perf.data.old against
# perf.data; B alone against the .old one here; one line where there is no pair
mkdir "$dir/pair" "$dir/none"
cp "$dir/1.pb.gz" "$dir/pair/hotstack.pb.gz.old"
cp "$dir/2.pb.gz" "$dir/pair/hotstack.pb.gz"
(cd "$dir/pair" && "$HOTSTACK" diff -o pair.txt) || fail "diff with no A and B failed"
cmp -s "$dir/d.txt" "$dir/pair/pair.txt" || fail "diff with no A and B is not .old against hotstack.pb.gz"
(cd "$dir/pair" && "$HOTSTACK" diff "$dir/2.pb.gz" -o one.txt) || fail "diff B failed"
cmp -s "$dir/d.txt" "$dir/pair/one.txt" || fail "diff B is not hotstack.pb.gz.old against B"
cp "$SRCDIR/tests/fixtures/perf-data/fp.data" "$dir/none/perf.data"
cd "$dir/none"
expect_status 2 "$HOTSTACK" diff
expect_stderr "^hotstack: diff: no hotstack.pb.gz.old and hotstack.pb.gz, nor perf.data.old and perf.data here: give A and B$"
expect_status 2 "$HOTSTACK" diff perf.data
expect_stderr "^hotstack: diff: no hotstack.pb.gz.old or perf.data.old here to compare 'perf.data' with: give A and B$"
[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "not one line: $(cat "$dir/.err")"
cp perf.data perf.data.old
"$HOTSTACK" diff -q -o perf.txt || fail "diff with perf.data.old and perf.data failed"
grep -q '^# A: .*, B: ' perf.txt || fail "diff of perf's pair: $(cat perf.txt)"
expect_status 2 "$HOTSTACK" diff a b c
expect_stderr "^hotstack: diff: unexpected argument 'c'$"
cd "$dir"

python3 - "$dir/d.txt" "$dir/new.txt" <<'PY' || fail "the text diff is wrong"
import re, sys

row = re.compile(r"^ *([0-9.]+)% +([0-9.]+)% +([-+][0-9.]+)%  +([0-9.]+)% +([0-9.]+)% +([-+][0-9.]+)%  (\S+)(.*)$")
def tables(path):
    out, cur = {}, None
    for line in open(path):
        if line.startswith("Functions by change of their share of "):
            cur = out.setdefault(line.split()[-1].rstrip(":"), [])
        elif cur is not None and (m := row.match(line.rstrip("\n"))):
            cur.append(m.groups())
    return out

ok = True
def bad(msg):
    global ok
    ok = False
    print("diff-text:", msg, file=sys.stderr)

t = tables(sys.argv[1])
tot = t.get("total", [])
if not tot:
    bad("no rows by change of total")
else:
    first = tot[0]
    print("first by total:", first)
    if first[6] != "grows" or not 4 <= float(first[5]) <= 18:
        bad(f"grows is not first, grown 4 to 18 points: {first}")
    # shares and change agree
    for r in tot:
        if abs(float(r[4]) - float(r[3]) - float(r[5])) > 0.02:
            bad(f"change is not B - A: {r}")
    # a steady function's share moves a few points with the scheduler on a busy machine: it
    # must not grow by half of grows' growth
    for r in tot:
        if r[6].startswith("steady_") and float(r[5]) > float(first[5]) / 2:
            bad(f"{r[6]} grew: {r}")
n = tables(sys.argv[2])
rows = n.get("total", []) + n.get("self", [])
marks = {r[6]: r[7].strip() for r in rows}
print("marks:", {k: v for k, v in marks.items() if k in ("leaf", "grows", "work_unit", "__libc_start_call_main")})
for f in ("leaf",):
    if not marks.get(f, "").endswith("(gone)"):
        bad(f"calltree's {f} is not marked gone: {marks.get(f)}")
for f in ("grows", "work_unit"):
    if not marks.get(f, "").endswith("(new)"):
        bad(f"diffwork's {f} is not marked new: {marks.get(f)}")
# main is another program's in each; libc's start code is the same function in both
if marks.get("__libc_start_call_main", "(new)").endswith(("(new)", "(gone)")):
    bad("__libc_start_call_main, in both, is marked or missing")
sys.exit(0 if ok else 1)
PY
exit 0
