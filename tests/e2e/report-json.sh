#!/bin/sh
# report --format json, read back with python3's json: a recording of calltree reported as text
# and as JSON gives the same total, the same top function by self and by total with the same
# values; --top 3 keeps three functions; --min-percent 10 leaves no tree node under 10%; the
# tree's children add up to no more than their parent; -o FILE.json writes the same document
# while -o FILE.speedscope.json stays speedscope; -g none writes no tree, --lines puts the source
# line on tree nodes as on the functions, and the text report's --lines -s sym rows are
# functions with their lines (perf's -s sym,srcline).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$HOTSTACK" record -q -g fp -o "$dir/rec.pb.gz" -- "$WORKLOADS/calltree" >/dev/null || fail "record failed"
"$HOTSTACK" report "$dir/rec.pb.gz" >"$dir/report.txt" || fail "report failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --format json >"$dir/report.json" || fail "report --format json failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --format json --top 3 --min-percent 10 >"$dir/top3.json" ||
	fail "report --format json --top 3 failed"
"$HOTSTACK" convert "$dir/rec.pb.gz" -o "$dir/out.json" -o "$dir/out.speedscope.json" || fail "convert failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --format json -g none >"$dir/none.json" || fail "report --format json -g none failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --format json --lines >"$dir/lines.json" || fail "report --format json --lines failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --lines -s sym >"$dir/lines.txt" || fail "report --lines -s sym failed"
grep -Eq '^ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+  leaf calltree\.c:[0-9]+$' "$dir/lines.txt" ||
	fail "report --lines -s sym has no row of leaf with its line: $(cat "$dir/lines.txt")"

python3 - "$dir" <<'PY' || fail "the JSON report does not match the text report"
import json, re, sys

d = sys.argv[1]
ok = True
def bad(msg):
    global ok
    ok = False
    print("report-json:", msg, file=sys.stderr)

txt = open(f"{d}/report.txt").read()
j = json.load(open(f"{d}/report.json"))
total = int(re.search(r"^# (\d+) samples", txt, re.M).group(1))
if j["total"] != total or j["value"] != {"type": "samples", "unit": "count"}:
    bad(f"total/value {j['total']} {j['value']} against the text's {total} samples")
if not any(c.startswith("hotstack record") for c in j["comments"]):
    bad(f"no command line in the comments: {j['comments']}")
tables = re.findall(r"Top functions by (?:self|total)[^\n]*\n[^\n]*\n((?:.+\n)+)", txt)
for key, table in zip(("top_self", "top_total"), tables):
    first = table.splitlines()[0].split()
    self_, tot, name = int(first[1]), int(first[3]), first[4]
    f = j[key][0]
    print(f"{key}: text {name} {self_}/{tot}, json {f['name']} {f['self']}/{f['total']}")
    if (f["name"], f["self"], f["total"]) != (name, self_, tot):
        bad(f"{key}[0] is {f['name']} {f['self']}/{f['total']}, the text says {name} {self_}/{tot}")
    if len(j[key]) != len(table.splitlines()):
        bad(f"{key} has {len(j[key])} functions, the text {len(table.splitlines())}")
if j["top_self"][0]["name"] != "leaf":
    bad(f"calltree's hottest function is not leaf: {j['top_self'][0]['name']}")

def walk(n, limit, depth=0):
    s = sum(c["total"] for c in n["children"])
    if s > n["total"]:
        bad(f"children of {n['name']} add up to {s} > {n['total']}")
    for c in n["children"]:
        if depth and c["total_percent"] < limit:
            bad(f"{c['name']} at {c['total_percent']}% is under {limit}%")
        walk(c, limit, depth + 1)
    return True

if j["tree"]["total"] != total:
    bad("the tree's root is not the total")
walk(j["tree"], 0)
names = set()
def collect(n):
    names.add(n["name"])
    for c in n["children"]:
        collect(c)
collect(j["tree"])
for fn in ("main", "a", "b", "c", "leaf"):
    if fn not in names:
        bad(f"{fn} is not in the call tree")

t3 = json.load(open(f"{d}/top3.json"))
# calltree's self time is in few functions: top_self may be shorter than 3
if not 1 <= len(t3["top_self"]) <= 3 or len(t3["top_total"]) != 3:
    bad(f"--top 3 gives {len(t3['top_self'])} and {len(t3['top_total'])} functions")
walk(t3["tree"], 10)
if json.load(open(f"{d}/out.json"))["total"] != total:
    bad("-o FILE.json is not the JSON report")
if "$schema" not in json.load(open(f"{d}/out.speedscope.json")):
    bad("-o FILE.speedscope.json is no longer speedscope")
none = json.load(open(f"{d}/none.json"))
if none["tree"] is not None or none["tree_order"] != "none":
    bad(f"-g none still writes a tree: {none['tree_order']} {str(none['tree'])[:80]}")
lj = json.load(open(f"{d}/lines.json"))
if not all("line" in f and f["file"].endswith("calltree.c") for f in lj["top_self"] if f["name"] == "leaf"):
    bad(f"--lines: top_self's leaf has no line: {lj['top_self'][:2]}")
leaves = []
def lines_of(n):
    if n["name"] == "leaf":
        leaves.append(n)
    for c in n["children"]:
        lines_of(c)
lines_of(lj["tree"])
if not leaves or not all(n.get("line", 0) > 0 and n["file"].endswith("calltree.c") for n in leaves):
    bad(f"--lines: the tree's leaf nodes have no file and line: {leaves[:2]}")
sys.exit(0 if ok else 1)
PY
exit 0
