#!/bin/sh
# A command that forks hundreds of short-lived children: the recording neither hangs nor
# crashes, every child is counted (with -e page-faults -c 1 each child's copy-on-write faults are
# samples of its own: all 300 children appear, each in child_work, with at least its 16 faults),
# and hotstack's memory is bounded: its peak RSS grows by less than 16 MiB from 300 children to
# 1500 (about 3 KiB a child is what it keeps; a leak of what a child's records held would be
# far more).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

# Runs one recording of fork-many N; prints hotstack's peak RSS (VmHWM, kB) as last read while
# it ran.
record_many() {
	"$HOTSTACK" record -g fp -e page-faults -c 1 --root pid -o "$dir/$1.folded" -- \
		"$WORKLOADS/fork-many" "$1" >"$dir/$1.out" 2>"$dir/$1.err" &
	rec=$!
	hwm=0
	while kill -0 "$rec" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$rec/status" 2>/dev/null || true)
		[ -z "$v" ] || hwm=$v
		sleep 0.02
	done
	set +e
	wait "$rec"
	status=$?
	set -e
	[ "$status" -eq 0 ] || fail "record of fork-many $1 exited $status: $(cat "$dir/$1.err")"
	grep -q "^forked $1\$" "$dir/$1.out" || fail "fork-many $1 did not finish: $(cat "$dir/$1.out")"
	echo "$hwm"
}

hwm300=$(record_many 300)
if grep -q "lost" "$dir/300.err"; then
	skip "samples were lost even with frame-pointer chains: $(cat "$dir/300.err")"
fi
# per child pid: its samples in child_work
awk '/;child_work( |;)/ { root = $1; sub(/;.*/, "", root); n[root] += $NF }
END { for (r in n) print r, n[r] }' "$dir/300.folded" >"$dir/children"
children=$(wc -l <"$dir/children")
[ "$children" -eq 300 ] || fail "$children of 300 children sampled in child_work: $(cat "$dir/300.err")"
few=$(awk '$2 < 16' "$dir/children" | head -n 3)
[ -z "$few" ] || fail "children with fewer than their 16 page faults: $few"

hwm1500=$(record_many 1500)
children=$(awk '/;child_work( |;)/ { root = $1; sub(/;.*/, "", root); seen[root] = 1 }
END { print length(seen) }' "$dir/1500.folded")
[ "$children" -eq 1500 ] || fail "$children of 1500 children sampled"
echo "fault-fork-many: peak RSS $hwm300 kB with 300 children, $hwm1500 kB with 1500"
# AddressSanitizer keeps freed memory in quarantine: the figures say nothing there
if grep -qa __asan_init "$HOTSTACK"; then
	exit 0
fi
[ "$hwm300" -gt 0 ] && [ "$hwm1500" -gt 0 ] || fail "no RSS read"
[ $((hwm1500 - hwm300)) -lt 16384 ] || fail "peak RSS grew by $((hwm1500 - hwm300)) kB from 300 to 1500 children"
exit 0
