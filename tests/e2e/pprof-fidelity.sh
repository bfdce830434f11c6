#!/bin/sh
# pprof with nothing lost, on real recordings (the perf.data fixtures, recorded by perf, and a
# hotstack recording where perf_event_open is allowed):
#  - perf.data -> pprof -> folded equals perf.data -> folded;
#  - pprof -> profile -> pprof writes the same bytes (every table, label and string);
#  - `go tool pprof -top`, `-tree` and `-traces` agree with `hotstack report` and the folded
#    stacks: the same functions with the same flat and cumulative percentages, the same stacks
#    with the same counts (skipped without Go).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

fixtures=$SRCDIR/tests/fixtures/perf-data
have_go=0
if command -v go >/dev/null 2>&1 && go tool -n pprof >/dev/null 2>&1; then
	have_go=1
fi
export PPROF_TMPDIR="$dir" HOME="${HOME:-$dir}"

# Compares `go tool pprof` on a pprof file with hotstack's report and folded stacks of it.
check_go() {
	f=$1
	[ "$have_go" = 1 ] || return 0
	go tool pprof -top -nodecount=100000 -sample_index=samples -symbolize=none "$f" >"$dir/top.txt" 2>"$dir/go.err" ||
		fail "go tool pprof -top rejected $f: $(cat "$dir/go.err")"
	go tool pprof -tree -nodecount=100000 -sample_index=samples -symbolize=none "$f" >"$dir/tree.txt" 2>"$dir/go.err" ||
		fail "go tool pprof -tree rejected $f: $(cat "$dir/go.err")"
	go tool pprof -traces -sample_index=samples -symbolize=none "$f" >"$dir/traces.txt" 2>"$dir/go.err" ||
		fail "go tool pprof -traces rejected $f: $(cat "$dir/go.err")"
	"$HOTSTACK" report -q --top 100000 "$f" >"$dir/report.txt" || fail "hotstack report $f failed"
	"$HOTSTACK" convert -q "$f" --no-annotate -o "$dir/go-check.folded" || fail "hotstack convert $f failed"
	python3 - "$dir/top.txt" "$dir/tree.txt" "$dir/traces.txt" "$dir/report.txt" "$dir/go-check.folded" <<'EOF' ||
import re, sys
from collections import Counter

top, tree, traces, report, folded = (open(p).read() for p in sys.argv[1:6])
ok = True
def bad(msg):
    global ok
    ok = False
    print("pprof-fidelity:", msg, file=sys.stderr)

# hotstack report: function -> (self%, total%); a name in several modules is summed the way
# pprof merges it (by name)
ours = {}
section = None
for line in report.splitlines():
    if line.startswith("Top functions by "):
        section = line
        continue
    m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+([\d.]+)%\s+(\d+)  (.*?)(  \[[^\]]*\]|  \[.*\])?$", line)
    if m and section and "by self" in section:
        name = m.group(5)
        s, t = ours.get(name, (0, 0))
        ours[name] = (s + int(m.group(2)), max(t, int(m.group(4))))
total = sum(s for s, _ in ours.values())
if not total:
    bad("the report lists no samples")

def pct(s):
    return float(s.rstrip("%"))

# pprof shows a function that was inlined somewhere as its own node "NAME (inline)"; the
# report counts a function once, so the two nodes are summed under NAME
def plain(name):
    return name.strip().removesuffix(" (inline)")

# -top: flat flat% sum% cum cum% name
rows = 0
tops = {}
for line in top.splitlines():
    m = re.match(r"\s*(\d+)\s+([\d.]+%)\s+([\d.]+%)\s+(\d+)\s+([\d.]+%)\s+(.*)$", line)
    if not m:
        continue
    rows += 1
    f, fp, c = tops.get(plain(m.group(6)), (0, 0.0, 0))
    tops[plain(m.group(6))] = (f + int(m.group(1)), fp + pct(m.group(2)), c + int(m.group(4)))
for name, (flat, flat_pct, cum) in tops.items():
    if name not in ours:
        if flat:
            bad(f"-top lists {name} (flat {flat}), the report does not")
        continue
    s, t = ours[name]
    if flat != s:
        bad(f"{name}: flat {flat} in -top, self {s} in the report")
    if abs(flat_pct - 100.0 * s / total) > 0.012 + 0.05 * (s < total / 100):
        bad(f"{name}: flat% {flat_pct:.2f}% in -top, {100.0 * s / total:.2f}% in the report")
    if cum < t:
        bad(f"{name}: cum {cum} in -top, total {t} in the report")
if not rows:
    bad("no rows in -top")

# -tree: the line of each node "flat flat% sum% cum cum% | name"
trees = Counter()
for line in tree.splitlines():
    m = re.match(r"\s*(\d+)\s+([\d.]+%)\s+([\d.]+%)\s+(\d+)\s+([\d.]+%)\s+\| (.*)$", line)
    if m:
        trees[plain(m.group(6))] += int(m.group(1))
for name, flat in trees.items():
    if name in ours and flat != ours[name][0]:
        bad(f"{name}: flat {flat} in -tree, self {ours[name][0]} in the report")

# -traces: each block's count and frames, leaf first, as folded lines without the root
got = Counter()
count, frames = None, []
def flush():
    global count, frames
    if count is not None:
        got[";".join(reversed(frames))] += count
    count, frames = None, []
for line in traces.splitlines():
    if re.match(r"^-+\+-+$", line):
        flush()
        continue
    m = re.match(r"^\s+(\d+)\s+(\S.*)$", line)
    if m and count is None and not re.match(r"^\s+\w+:", line):
        count, frames = int(m.group(1)), [plain(m.group(2))]
        continue
    if count is not None and re.match(r"^\s+\S", line):
        frames.append(plain(line))
flush()
want = Counter()
for line in folded.splitlines():
    stack, n = line.rsplit(" ", 1)
    want[";".join(stack.split(";")[1:])] += int(n)
if got != want:
    for k in sorted(set(got) | set(want)):
        if got[k] != want[k]:
            bad(f"-traces {got[k]} vs folded {want[k]}: {k}")
print(f"pprof-fidelity: {rows} functions in -top, {sum(got.values())} samples in -traces agree", file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
		fail "go tool pprof disagrees with hotstack on $f"
}

for data in fp dwarf compressed pipe; do
	in=$fixtures/$data.data
	"$HOTSTACK" convert -q "$in" -o "$dir/$data.folded" || fail "convert $data.data to folded failed"
	"$HOTSTACK" convert -q "$in" -o "$dir/$data.pb.gz" || fail "convert $data.data to pprof failed"
	"$HOTSTACK" convert -q "$dir/$data.pb.gz" -o "$dir/$data.back.folded" || fail "convert $data.pb.gz to folded failed"
	cmp -s "$dir/$data.folded" "$dir/$data.back.folded" ||
		fail "$data.data -> pprof -> folded differs from $data.data -> folded: $(diff "$dir/$data.folded" "$dir/$data.back.folded" | head)"
	# perf.data keeps every sample with its time in pprof
	gzip -dc "$dir/$data.pb.gz" | grep -q timestamp || fail "$data.pb.gz has no timestamp labels"
	"$HOTSTACK" convert -q "$dir/$data.pb.gz" -o "$dir/$data.again.pb.gz" || fail "convert $data.pb.gz to pprof failed"
	gzip -dc "$dir/$data.pb.gz" >"$dir/one.pb"
	gzip -dc "$dir/$data.again.pb.gz" >"$dir/two.pb"
	cmp -s "$dir/one.pb" "$dir/two.pb" || fail "$data.pb.gz -> profile -> pprof is not the same profile"
done
check_go "$dir/fp.pb.gz"
check_go "$dir/dwarf.pb.gz"

# a hotstack recording: mappings with build-ids, inline lines, both value types, labels
if "$HOTSTACK" record -q -g none -o "$dir/.probe.folded" -- true 2>/dev/null; then
	"$HOTSTACK" record -q --keep-time -o "$dir/rec.pb.gz" -o "$dir/rec.folded" -- "$WORKLOADS/calltree" 0.5 ||
		fail "record failed"
	"$HOTSTACK" convert -q "$dir/rec.pb.gz" -o "$dir/rec.again.pb.gz" -o "$dir/rec.back.folded" || fail "convert failed"
	gzip -dc "$dir/rec.pb.gz" >"$dir/one.pb"
	gzip -dc "$dir/rec.again.pb.gz" >"$dir/two.pb"
	cmp -s "$dir/one.pb" "$dir/two.pb" || fail "rec.pb.gz -> profile -> pprof is not the same profile"
	cmp -s "$dir/rec.folded" "$dir/rec.back.folded" || fail "the recording's folded stacks differ from its pprof's"
	for s in samples count cpu nanoseconds pid tid comm timestamp; do
		grep -aq "$s" "$dir/one.pb" || fail "the recording's pprof has no '$s'"
	done
	check_go "$dir/rec.pb.gz"
else
	echo "pprof-fidelity: perf_event_open refused: the hotstack recording is left out" >&2
fi
exit 0
