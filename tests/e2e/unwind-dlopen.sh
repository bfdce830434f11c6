#!/bin/sh
# DWARF unwinding through a library loaded with dlopen while recording: dlopen-nofp loads
# dlopen-lib.so (a shared module; both -O2 -fomit-frame-pointer) and runs main -> run_library
# -> lib_entry -> lib_middle -> lib_leaf (the calls inside the library go through its PLT).
# With the default call-graph mode at least 99% of the user-mode samples have exactly that
# chain from main down, named from the library's symbols.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
[ -f "$WORKLOADS/dlopen-lib.so" ] || fail "$WORKLOADS/dlopen-lib.so was not built"
require_perf_events

record default -- "$WORKLOADS/dlopen-nofp" "$WORKLOADS/dlopen-lib.so" 2
awk "$unwind_awk"'
{
	parse()
	if (!user_leaf()) next
	total += n
	if ((m = main_at()) && chain(m) == "main;run_library;lib_entry;lib_middle;lib_leaf") good += n
	else print n, line > bad
}
END { printf "%d %d %s\n", total, good, pct(good, total) }' bad="$dir/default.bad" "$dir/default.folded" >"$dir/stats"
read -r total good percent <"$dir/stats"
echo "unwind-dlopen: default mode: $percent ($good of $total user-mode samples) have main;run_library;lib_entry;lib_middle;lib_leaf"

[ "$total" -ge 200 ] || fail "only $total user-mode samples in 2 s at 999 Hz"
[ $((good * 100)) -ge $((total * 99)) ] ||
	fail "only $good of $total samples have the exact chain; the others, most frequent first:
$(worst "$dir/default.bad")"
exit 0
