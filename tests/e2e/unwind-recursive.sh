#!/bin/sh
# DWARF unwinding through deep recursion without frame pointers: recursive (-O2
# -fomit-frame-pointer) runs main -> rec -> ... -> rec -> work with 1 to 120 rec frames of 240
# bytes each (up to ~29 KiB of stack). With the default call-graph mode, at least 99% of the
# user-mode samples have exactly main;rec;...;rec;work from main down (every frame between main
# and work is rec, at least one), and the deepest chains (>= 100 rec frames) are among them.
# -g fp is measured beside it for comparison, without an assertion.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
require_perf_events

# check NAME: "total good percentage deepest" of $dir/NAME.folded; the other lines into $dir/NAME.bad
check() {
	awk "$unwind_awk"'
	{
		parse()
		if (!user_leaf()) next
		total += n
		m = main_at()
		ok = m > 0 && f[k] == "work" && k - m >= 2
		for (i = m + 1; ok && i < k; i++) if (f[i] != "rec") ok = 0
		if (ok) { good += n; if (k - m - 1 > deepest) deepest = k - m - 1 }
		else print n, line > bad
	}
	END { printf "%d %d %s %d\n", total, good, pct(good, total), deepest }' bad="$dir/$1.bad" "$dir/$1.folded"
}

record default -- "$WORKLOADS/recursive" 2
read -r total good percent deepest <<EOF2
$(check default)
EOF2
record fp -g fp -- "$WORKLOADS/recursive" 1
read -r fp_total fp_good fp_percent fp_deepest <<EOF2
$(check fp)
EOF2
echo "unwind-recursive: default mode: $percent ($good of $total user-mode samples) have main;rec*N;work, deepest N = $deepest"
echo "unwind-recursive: -g fp: $fp_percent ($fp_good of $fp_total), deepest N = $fp_deepest"

[ "$total" -ge 200 ] || fail "only $total user-mode samples in 2 s at 999 Hz"
[ $((good * 100)) -ge $((total * 99)) ] ||
	fail "only $good of $total samples have main;rec*N;work; the others, most frequent first:
$(worst "$dir/default.bad")"
[ "$deepest" -ge 100 ] ||
	fail "the deepest complete chain has $deepest rec frames, the workload goes to 120; incomplete stacks:
$(worst "$dir/default.bad")"
exit 0
