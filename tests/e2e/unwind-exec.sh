#!/bin/sh
# DWARF unwinding across fork and exec: fork-exec (-O2 -fomit-frame-pointer) forks, its child
# execs recursive (also without frame pointers; up to 30 rec frames here, so that the stack
# copy size is not what is tested) and the parent spins in main -> parent_spin meanwhile. With
# the default call-graph mode, at least 99% of the child's user-mode samples have exactly
# main;rec;...;rec;work (at least one rec) from main down, and at least 99% of the parent's
# have main;parent_spin: the child's new mappings, and the parent's old ones, are unwound with
# their own CFI.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
require_perf_events

record default -- "$WORKLOADS/fork-exec" "$WORKLOADS/recursive" 2 30
awk "$unwind_awk"'
{
	parse()
	if (!user_leaf()) next
	m = main_at()
	if (f[1] == "recursive") {
		child += n
		ok = m > 0 && f[k] == "work" && k - m >= 2
		for (i = m + 1; ok && i < k; i++) if (f[i] != "rec") ok = 0
		if (ok) { child_good += n; next }
	} else if (f[1] == "fork-exec") {
		parent += n
		if (m > 0 && chain(m) == "main;parent_spin") { parent_good += n; next }
	}
	print n, line > bad
}
END {
	printf "%d %d %s %d %d %s\n", child, child_good, pct(child_good, child), parent, parent_good,
		pct(parent_good, parent)
}' bad="$dir/default.bad" "$dir/default.folded" >"$dir/stats"
read -r child child_good child_pct parent parent_good parent_pct <"$dir/stats"
echo "unwind-exec: default mode: exec'd child $child_pct ($child_good of $child user-mode samples) main;rec*N;work, parent $parent_pct ($parent_good of $parent) main;parent_spin"

[ "$child" -ge 100 ] || fail "only $child user-mode samples of the exec'd child (comm recursive): $(cut -d';' -f1 "$dir/default.folded" | sort | uniq -c)"
[ "$parent" -ge 100 ] || fail "only $parent user-mode samples of the parent (comm fork-exec)"
[ $((child_good * 100)) -ge $((child * 99)) ] ||
	fail "only $child_good of the child's $child samples have main;rec*N;work; the incomplete ones, most frequent first:
$(worst "$dir/default.bad")"
[ $((parent_good * 100)) -ge $((parent * 99)) ] ||
	fail "only $parent_good of the parent's $parent samples have main;parent_spin; the incomplete ones, most frequent first:
$(worst "$dir/default.bad")"
exit 0
