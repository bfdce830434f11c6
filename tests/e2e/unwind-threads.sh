#!/bin/sh
# DWARF unwinding of threads without frame pointers: threads-nofp (-O2 -fomit-frame-pointer)
# runs 4 threads nofp-0..3 in thread_fn -> spin_outer -> spin_inner and its main thread in
# main -> main_spin -> spin_inner. With the default call-graph mode every thread is sampled;
# at least 99% of the user-mode samples are exactly <thread start>;thread_fn;spin_outer;
# spin_inner, the thread start being glibc's clone3 and start_thread (or "libc.so.6+0xADDR" where
# only .dynsym names libc's code), or _start;...;main;main_spin;spin_inner; and no sample of a
# nofp-N thread has a pseudo frame ([no unwind info], [unmapped], [truncated: ...] ...) or a
# bottom other than the thread start — except a sample taken in the kernel before the new
# thread ran its first user instruction (its kernel stack starts at ret_from_fork): its user
# registers point into clone3 at the top of a stack that holds nothing yet; and one taken in
# the new thread's first user instructions, clone3's between its syscall and the thread start,
# which glibc leaves without CFI (cfi_endproc before the syscall): clone3 alone, cut.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
require_perf_events

record default -- "$WORKLOADS/threads-nofp" 4 2
awk "$unwind_awk"'
function start(s) { return s ~ /^(__)?(clone3?|start_thread)$/ || s ~ /^libc\.so\.6\+0x[0-9a-f]+$/ }
{
	parse()
	if (f[1] ~ /^nofp-[0-9]$/) {
		threads[f[1]] = 1
		if ((has_pseudo() || !start(f[2])) && line !~ /;clone3;ret_from_fork(_asm)?_\[k\];/ &&
		    line !~ /^nofp-[0-9];\[[a-z :]+\];clone3$/) print n, line > bottom
	}
	if (!user_leaf()) next
	total += n
	c = chain(2)
	if (c ~ /;thread_fn;spin_outer;spin_inner$/) {
		for (i = 2; f[i] != "thread_fn" && start(f[i]); i++) ;
		if (f[i] == "thread_fn" && i > 2) { good += n; start_names[squeeze(chain(2))] = 1; next }
	} else if (f[2] == "_start" && (m = main_at()) && chain(m) == "main;main_spin;spin_inner") {
		good += n; next
	}
	print n, line > bad
}
END {
	for (t in threads) nthreads++
	for (s in start_names) { sub(/;thread_fn;.*/, "", s); names = names sep s; sep = ", " }
	printf "%d %d %s %d %s\n", total, good, pct(good, total), nthreads, names
}' bad="$dir/default.bad" bottom="$dir/default.bottom" "$dir/default.folded" >"$dir/stats"
read -r total good percent nthreads start_names <"$dir/stats"
echo "unwind-threads: default mode: $percent ($good of $total user-mode samples) have the exact chain; thread start frames: $start_names"

[ "$nthreads" -eq 4 ] || fail "$nthreads of the 4 threads nofp-N were sampled: $(cut -d';' -f1 "$dir/default.folded" | sort -u)"
[ "$total" -ge 200 ] || fail "only $total user-mode samples"
[ ! -s "$dir/default.bottom" ] ||
	fail "thread stacks with a pseudo frame or without the thread start at the bottom:
$(worst "$dir/default.bottom")"
[ $((good * 100)) -ge $((total * 99)) ] ||
	fail "only $good of $total samples have the exact chain; the others, most frequent first:
$(worst "$dir/default.bad")"
exit 0
