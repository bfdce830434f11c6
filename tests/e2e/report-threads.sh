#!/bin/sh
# Thread names: the threads workload names its threads spin-0, spin-1, spin-2 with
# pthread_setname_np. Recorded, each thread shows under its own name, not the process's:
# report --sort tid rows "TID:spin-N" (perf's tid key), the JSON report's threads, and the roots
# of folded stacks and of the flame graph with --root tid ("spin-N-PID/TID").
# "threads 2 1 late" names its threads halfway through, so each is sampled under the process's
# name first: wherever a thread is named by its tid it is still one thread under its latest
# name, one root with --root tid, one lane of a flame chart, one speedscope profile.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$HOTSTACK" record -q -o "$dir/rec.pb.gz" -- "$WORKLOADS/threads" 3 1 >/dev/null || fail "record failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --sort tid >"$dir/tid.txt" || fail "report --sort tid failed"
"$HOTSTACK" report "$dir/rec.pb.gz" --format json >"$dir/r.json" || fail "report --format json failed"
"$HOTSTACK" convert "$dir/rec.pb.gz" --root tid -o "$dir/r.folded" -o "$dir/r.svg" || fail "convert failed"

for n in 0 1 2; do
	grep -Eq "^ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9]+  [0-9]+:spin-$n\$" "$dir/tid.txt" ||
		fail "no row of thread spin-$n in report --sort tid: $(cat "$dir/tid.txt")"
	grep -q "^spin-$n-[0-9]*/[0-9]*;.*spin_thread_$n" "$dir/r.folded" ||
		fail "no folded root spin-$n-PID/TID above spin_thread_$n"
	grep -q "<title>spin-$n-[0-9]*/[0-9]* (" "$dir/r.svg" || fail "no flame graph root spin-$n-PID/TID"
done
python3 - "$dir/r.json" <<'PY' || fail "the JSON report's threads are not named"
import json, sys
th = json.load(open(sys.argv[1]))["threads"]
names = {t["name"] for t in th}
print("threads:", sorted((t["tid"], t["name"]) for t in th))
assert {"spin-0", "spin-1", "spin-2"} <= names, names
assert len({t["pid"] for t in th if t["name"].startswith("spin-")}) == 1
PY

"$HOTSTACK" record -q --keep-time -o "$dir/late.pb.gz" -- "$WORKLOADS/threads" 2 1 late >/dev/null ||
	fail "record of threads named late failed"
"$HOTSTACK" convert "$dir/late.pb.gz" -o "$dir/late.folded" || fail "convert failed"
"$HOTSTACK" convert "$dir/late.pb.gz" --root tid -o "$dir/late-tid.folded" -o "$dir/late.speedscope.json" ||
	fail "convert --root tid failed"
"$HOTSTACK" flame "$dir/late.pb.gz" --flamechart -o "$dir/late-fc.svg" || fail "flame --flamechart failed"
for n in 0 1; do
	# the premise: the thread was sampled under both names (per command name, both stay)
	grep -q "^threads;.*spin_thread_$n" "$dir/late.folded" || fail "spin_thread_$n not sampled before its name"
	grep -q "^spin-$n;.*spin_thread_$n" "$dir/late.folded" || fail "spin_thread_$n not sampled after its name"
	roots=$(grep "spin_thread_$n" "$dir/late-tid.folded" | cut -d';' -f1 | sort -u)
	[ "$(printf '%s\n' "$roots" | wc -l)" -eq 1 ] && expr "$roots" : "spin-$n-[0-9]*/[0-9]*\$" >/dev/null ||
		fail "spin_thread_$n's thread is not one root spin-$n-PID/TID with --root tid: $roots"
	lanes=$(grep -o "<title>[^<(]*-${roots##*-} (" "$dir/late-fc.svg")
	[ "$lanes" = "<title>$roots (" ] || fail "spin_thread_$n's thread is not one flame chart lane $roots: $lanes"
done
python3 - "$dir/late.speedscope.json" <<'PY' || fail "a speedscope profile per thread, under its latest name"
import json, sys
names = [p["name"] for p in json.load(open(sys.argv[1]))["profiles"]]
print("speedscope profiles:", names)
spin = [n for n in names if n.startswith("spin-")]
assert len(spin) == 2 and len(names) == len({n.split(" ")[1] for n in names}), names
PY
exit 0
