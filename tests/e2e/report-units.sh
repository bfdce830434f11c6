#!/bin/sh
# Values people read: an off-CPU recording of offcpu-nofp (30 rounds of a 10 ms nanosleep and
# 10 ms of spinning) reported with --value off-cpu and --wall prints times ("1.15 s", "89.4 ms")
# in every value column, never raw nanoseconds; the header's time is the exact total it shows
# in brackets, rounded; the sleeping path's blocked time is about the 300 ms the naps took;
# sample counts stay counts; the flame graph's tooltips say times too, and its subtitle the
# total of the value it draws, as the report's header does ("207 ms off-cpu", "498 ms wall",
# "111 samples"), not the sample count under a graph of time.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$HOTSTACK" record -q --off-cpu -o "$dir/rec.pb.gz" -- "$WORKLOADS/offcpu-nofp" 30 >/dev/null ||
	fail "record --off-cpu failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --value off-cpu >"$dir/off.txt" || fail "report --value off-cpu failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --wall --sort tid,sym --stats >"$dir/wall.txt" || fail "report --wall failed"
"$HOTSTACK" report "$dir/rec.pb.gz" >"$dir/samples.txt" || fail "report failed"
"$HOTSTACK" flame "$dir/rec.pb.gz" --value off-cpu -o "$dir/off.svg" || fail "flame --value off-cpu failed"

python3 - "$dir/off.txt" "$dir/wall.txt" "$dir/samples.txt" "$dir/off.svg" <<'PY' || fail "the values are not what people read"
import re, sys

scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
time_re = r"-?[0-9]+(?:\.[0-9]+)? (?:ns|us|ms|s)"
row_re = re.compile(r"^ *([0-9.]+)% +(\S+(?: (?:ns|us|ms|s))?) +([0-9.]+)% +(\S+(?: (?:ns|us|ms|s))?)  (.*)$")
ok = True

def bad(msg):
    global ok
    ok = False
    print("report-units:", msg, file=sys.stderr)

def ns(text):
    v, u = text.split()
    return float(v) * scale[u]

def rows(path):
    out = []
    for line in open(path):
        m = row_re.match(line.rstrip("\n"))
        if m:
            out.append(m.groups())
    return out

off = open(sys.argv[1]).read()
m = re.search(r"^# (" + time_re + r") off-cpu \(([0-9]+) nanoseconds\)", off, re.M)
if not m:
    bad("no '# TIME off-cpu (N nanoseconds)' header:\n" + off[:300])
else:
    shown, exact = ns(m.group(1)), int(m.group(2))
    print(f"off-cpu total {m.group(1)} = {exact} ns")
    if abs(shown - exact) > 0.006 * exact:
        bad(f"the header's {m.group(1)} is not {exact} ns rounded")
for path in sys.argv[1:3]:
    r = rows(path)
    if len(r) < 5:
        bad(f"{path}: too few rows")
    for self_pct, self_v, tot_pct, tot_v, what in r:
        for v in (self_v, tot_v):
            if not re.fullmatch(time_re, v):
                bad(f"{path}: value {v!r} of {what} is not a time")
# the naps: 30 x 10 ms blocked under sleeper (a busy machine wakes them late, not early)
sl = [r for r in rows(sys.argv[1]) if r[4].split()[0] == "sleeper"]
if not sl:
    bad("no sleeper row in the off-CPU report")
else:
    t = ns(sl[0][3])
    print(f"sleeper blocked {sl[0][3]}")
    if not 0.25e9 <= t <= 3e9:
        bad(f"sleeper's off-CPU time {sl[0][3]} is not about 300 ms")
for line in open(sys.argv[2]):
    if re.search(r"\b[0-9]{7,}\b", line) and not line.startswith("#"):
        bad(f"raw nanoseconds in the wall report: {line.strip()}")
for self_pct, self_v, tot_pct, tot_v, what in rows(sys.argv[3]):
    if not (self_v.isdigit() and tot_v.isdigit()):
        bad(f"sample counts are not counts: {self_v} {tot_v} {what}")
titles = re.findall(r"<title>[^<]*\(([^,<]*), [0-9.]+%\)</title>", open(sys.argv[4]).read())
if not titles or not all(re.fullmatch(time_re, t) for t in titles):
    bad(f"flame graph tooltips are not times: {titles[:5]}")
sys.exit(0 if ok else 1)
PY

# the subtitle of each view is its report's total: "# 207 ms off-cpu (207253686 nanoseconds)"
"$HOTSTACK" flame "$dir/rec.pb.gz" --wall -o "$dir/wall.svg" -o "$dir/wall.html" || fail "flame --wall failed"
"$HOTSTACK" flame "$dir/rec.pb.gz" -o "$dir/samples.svg" || fail "flame failed"
for v in off:off wall:wall wall:wall.html samples:samples; do
	txt=$dir/${v%%:*}.txt
	graph=$dir/${v#*:}
	case $graph in *.html) ;; *) graph=$graph.svg ;; esac
	want=$(sed -n '1s/^# \([0-9.]* [a-z]* [a-z-]*\) (.*/\1/p; 1s/^# \([0-9]*\) samples .*/\1 samples/p' "$txt" |
		sed ':a; s/^\([0-9]\{1,\}\)\([0-9]\{3\}\) samples/\1,\2 samples/; ta')
	[ -n "$want" ] || fail "no total in the header of $txt: $(head -1 "$txt")"
	grep -Eq "(<text id=\"subtitle\"[^>]*>|<div id=\"subtitle\">)$want<" "$graph" ||
		fail "${graph##*/}'s subtitle is not '$want': $(grep -Eo 'id="subtitle"[^<]*' "$graph")"
done
exit 0
