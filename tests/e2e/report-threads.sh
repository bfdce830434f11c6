#!/bin/sh
# Thread names: the threads workload names its threads spin-0, spin-1, spin-2 with
# pthread_setname_np. Recorded, each thread shows under its own name, not the process's:
# report --sort tid rows "TID:spin-N" (perf's tid key), the JSON report's threads, and the roots
# of folded stacks and of the flame graph with --root tid ("spin-N-PID/TID").
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
exit 0
