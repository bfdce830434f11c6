#!/bin/sh
# DWARF unwinding through a signal frame: signal-nofp (-O2 -fomit-frame-pointer) spins in
# main -> loop_body while SIGPROF (setitimer ITIMER_PROF, every 4 ms of CPU time) runs handler
# -> handler_work, which spins too. With the default call-graph mode at least 99% of the
# user-mode samples in handler_work are exactly main;<interrupted>;[signal];handler;
# handler_work from main down (<interrupted>: the frames the signal interrupted, loop_body nearly
# always, clock_gettime's rarely, none when it was main itself; no pseudo frame), and at least
# 99% of all user-mode samples reach main without a pseudo frame.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
require_perf_events

record default -- "$WORKLOADS/signal-nofp" 2
awk "$unwind_awk"'
{
	parse()
	if (!user_leaf()) next
	total += n
	m = main_at()
	if (m > 0 && !has_pseudo()) complete += n
	else print n, line > incomplete
	if (f[k] != "handler_work") next
	in_handler += n
	c = m > 0 ? chain(m) : ""
	if (c ~ /^main(;[^;]+)*;\[signal\];handler;handler_work$/ && !has_pseudo()) {
		good += n
		sub(/;\[signal\].*/, "", c); sub(/^main;?/, "", c); interrupted[c == "" ? "main" : c] += n
	} else
		print n, line > bad
}
END {
	for (c in interrupted) { names = names sep c " " interrupted[c]; sep = ", " }
	printf "%d %d %s %d %d %s %s\n", in_handler, good, pct(good, in_handler), total, complete,
		pct(complete, total), names
}' bad="$dir/default.bad" incomplete="$dir/default.incomplete" "$dir/default.folded" >"$dir/stats"
read -r in_handler good percent total complete complete_pct interrupted <"$dir/stats"
echo "unwind-signal: default mode: $percent ($good of $in_handler samples in handler_work) have main;<interrupted>;[signal];handler;handler_work (interrupted: $interrupted); $complete_pct ($complete of $total user-mode samples) reach main"

[ "$total" -ge 200 ] || fail "only $total user-mode samples in 2 s at 999 Hz"
[ $((in_handler * 5)) -ge "$total" ] ||
	fail "only $in_handler of $total user-mode samples in handler_work: $(awk '{ print $NF, $0 }' "$dir/default.folded" | sort -nr | head -n 5)"
[ $((good * 100)) -ge $((in_handler * 99)) ] ||
	fail "only $good of $in_handler samples in handler_work unwind through [signal] to main; the others, most frequent first:
$(worst "$dir/default.bad")"
[ $((complete * 100)) -ge $((total * 99)) ] ||
	fail "only $complete of $total user-mode samples reach main; the others, most frequent first:
$(worst "$dir/default.incomplete")"
exit 0
