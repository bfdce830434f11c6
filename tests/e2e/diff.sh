#!/bin/sh
# hotstack diff on two recordings of tests/workloads/diffwork, the second with the work of
# grows() doubled: the differential flame graph shows grows (and what it calls) deep red and
# every other frame changed less (near grey, or light blue as their shares shrink); the
# two-column folded output has A's and B's counts, with grows twice as heavy against the steady
# functions in B as in A. 250 iterations each (about 1.2 s): more samples, less of the
# scheduler's noise in each function's share.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$HOTSTACK" record -q -F 2999 -g fp --no-kernel -o "$dir/a.pb.gz" -- "$WORKLOADS/diffwork" 1 250 || fail "record A failed"
"$HOTSTACK" record -q -F 2999 -g fp --no-kernel -o "$dir/b.pb.gz" -- "$WORKLOADS/diffwork" 2 250 || fail "record B failed"
"$HOTSTACK" diff "$dir/a.pb.gz" "$dir/b.pb.gz" -o "$dir/d.svg" -o "$dir/d.folded" -o "$dir/d.html" ||
	fail "hotstack diff failed"
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$dir/d.svg" || fail "the SVG is not well-formed"
fi
grep -q '"diff":true' "$dir/d.html" || fail "the HTML is not a differential graph"

python3 - "$dir/d.svg" "$dir/d.folded" <<'EOF' || fail "the differential views are wrong"
import re, sys

svg = open(sys.argv[1]).read()
frames = re.findall(r'<title>([^<]*?) \((\d+) samples, was ([\d.]+)%, ([\d.]+)%\)</title><rect[^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', svg)
assert frames, "no frames in the SVG"
by = {}
for name, n, was, now, r, g, b in frames:
    by.setdefault(name, []).append((int(n), float(was), float(now), int(r), int(g), int(b)))
ok = True
def bad(msg):
    global ok
    ok = False
    print("diff:", msg, file=sys.stderr)

for name in ("grows",):
    for n, was, now, r, g, b in by.get(name, []):
        print(f"{name}: {was}% -> {now}%, rgb({r},{g},{b})")
        if not (r >= 250 and g <= 80 and b <= 80):
            bad(f"{name} is not deep red: rgb({r},{g},{b})")
    if name not in by:
        bad(f"no frame {name}")
# The steady functions' shares move a few points with the scheduler on a busy machine (one of
# them once went from 13% to 18% of A, 12% of B, with two CPU hogs beside the suite), so each is
# checked against grows rather than against grey: it does not grow by half of grows' growth,
# and it changes less than grows. main does not change.
grew = max((now - was for _, was, now, *_ in by.get("grows", [])), default=0)
for name in ("main", "steady_a", "steady_b", "steady_c", "steady_d", "steady_e", "steady_f"):
    for n, was, now, r, g, b in by.get(name, []):
        print(f"{name}: {was}% -> {now}%, rgb({r},{g},{b})")
        if name == "main" and (min(r, g, b) < 170 or max(r, g, b) - min(r, g, b) > 50):
            bad(f"main is not near grey: rgb({r},{g},{b})")
        if now - was > grew / 2 or abs(now - was) >= grew:
            bad(f"{name} changed {now - was:+.2f} points against grows' {grew:+.2f}: rgb({r},{g},{b})")
        if r - b > 60:
            bad(f"{name} is shown grown: rgb({r},{g},{b})")
    if name not in by:
        bad(f"no frame {name}")

# stack count_a count_b, as difffolded.pl writes it
tot = {}
for line in open(sys.argv[2]):
    m = re.fullmatch(r"(\S.*) (\d+) (\d+)\n", line)
    if not m:
        bad(f"not a two-column folded line: {line!r}")
        continue
    frames_ = m.group(1).split(";")
    for f in ("grows", "steady_a"):
        if f in frames_:
            a, b = tot.get(f, (0, 0))
            tot[f] = (a + int(m.group(2)), b + int(m.group(3)))
if "grows" in tot and "steady_a" in tot:
    ra = tot["grows"][0] / max(tot["steady_a"][0], 1)
    rb = tot["grows"][1] / max(tot["steady_a"][1], 1)
    print(f"grows/steady_a: {ra:.2f} in A, {rb:.2f} in B")
    if not (0.7 <= ra <= 1.4 and 1.5 <= rb <= 2.8):
        bad(f"grows/steady_a is {ra:.2f} in A and {rb:.2f} in B, expected about 1 and 2")
else:
    bad("grows or steady_a missing from the folded output")
sys.exit(0 if ok else 1)
EOF

# a profile that is not drawn in two columns is refused, with a reason
expect_status 2 "$HOTSTACK" diff "$dir/a.pb.gz" "$dir/b.pb.gz" -o "$dir/d.pb.gz"
expect_stderr "diff writes flame graphs"
exit 0
