#!/bin/sh
# hotstack top's rows of processes, in its --stdio reports: each row names its process and
# thread name (PID:comm) as the threads set it (the threads workload names its threads spin-N
# with pthread_setname_np, each spinning in spin_thread_N); --sort orders the rows by any column;
# --comm keeps the rows of some thread names; system-wide, the idle task is swapper (pid 0),
# never ":0", in top and in a recording's folded stacks.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

"$WORKLOADS/threads" 2 120 >"$dir/ready" &
busy=$!
trap 'kill $busy 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_until 100 has_line "$dir/ready" ready || fail "the threads workload did not start"

# top --stdio OPTIONS... until it has written 2 reports (at most 20 s), then SIGINT; the last
# report's rows in $dir/rows: "self total owner mark function module".
top_rows() { # NAME OPTIONS...
	out=$dir/$1.txt
	shift
	"$HOTSTACK" top --stdio -d 1 "$@" >"$out" 2>"$dir/top.err" &
	top=$!
	wait_until 200 two_reports "$out" || fail "fewer than 2 reports in 20 s of top $*: $(cat "$out" "$dir/top.err")"
	kill -INT "$top"
	wait "$top" || fail "top $* exited $?: $(cat "$dir/top.err")"
	awk '/^hotstack top / { n = 0; delete r; next } { r[++n] = $0 } END { for (i = 1; i <= n; i++) print r[i] }' \
		"$out" | sed -nE 's/^ *([0-9.]+)% +([0-9.]+)%  ([^ ]+) +(\[[a-z.?]+\]) +([^ ]+) *(.*)$/\1 \2 \3 \4 \5 \6/p' \
		>"$dir/rows"
	[ -s "$dir/rows" ] || [ "${may_be_empty:-}" ] || fail "no rows in the last report of top $*: $(cat "$out")"
}
two_reports() { [ "$(grep -c '^hotstack top .* samples in the last' "$1" 2>/dev/null)" -ge 2 ]; }
# Whether field N of the rows never goes down (sort flags as sort(1)'s, e.g. -n).
in_order() { # N [SORT-FLAGS]
	cut -d' ' -f"$1" "$dir/rows" | LC_ALL=C sort -c ${2:-} 2>/dev/null
}

# every row names its process and thread name; each thread's function is in its own row
top_rows plain -p "$busy"
grep -q "SELF%  total%  pid:comm " "$dir/plain.txt" || fail "no process column in the header: $(head -n 3 "$dir/plain.txt")"
for n in 0 1; do
	grep -q "^[0-9.]* [0-9.]* $busy:spin-$n \[\.\] spin_thread_$n " "$dir/rows" ||
		fail "no row of spin_thread_$n in thread spin-$n of $busy: $(cat "$dir/rows")"
	! grep -q " $busy:spin-$n \[\.\] spin_thread_$((1 - n)) " "$dir/rows" ||
		fail "spin_thread_$((1 - n)) shown in thread spin-$n: $(cat "$dir/rows")"
done
cut -d' ' -f3 "$dir/rows" | grep -v "^$busy:" && fail "rows of another process under -p $busy"
in_order 1 "-g -r" || fail "the rows are not by self: $(cat "$dir/rows")"

# --sort: perf's names for the columns
top_rows total -p "$busy" --sort children
grep -q "self%  TOTAL%" "$dir/total.txt" || fail "the header does not mark total"
in_order 2 "-g -r" || fail "--sort children: the rows are not by total: $(cat "$dir/rows")"
top_rows comm -p "$busy" -s comm
cut -d' ' -f3 "$dir/rows" | cut -d: -f2- | LC_ALL=C sort -c || fail "--sort comm: not by thread name: $(cat "$dir/rows")"
top_rows sym -p "$busy" --sort symbol
in_order 5 || fail "--sort symbol: not by function: $(cat "$dir/rows")"
top_rows dso -p "$busy" --sort dso
in_order 6 || fail "--sort dso: not by module: $(cat "$dir/rows")"

# --comm: only the rows of these thread names, every sample still what shares are of
top_rows comm1 -p "$busy" --comm spin-1
cut -d' ' -f3 "$dir/rows" | grep -v ":spin-1\$" && fail "--comm spin-1 left rows of other threads"
grep -q " spin_thread_1 " "$dir/rows" || fail "--comm spin-1 lost spin_thread_1: $(cat "$dir/rows")"
top_rows comm2 -p "$busy" --comm spin-0,spin-1
grep -q ":spin-0 .* spin_thread_0 " "$dir/rows" && grep -q ":spin-1 .* spin_thread_1 " "$dir/rows" ||
	fail "--comm spin-0,spin-1 did not keep both threads: $(cat "$dir/rows")"

# system-wide: rows by pid, the idle task named swapper (whether a CPU of a loaded machine was
# ever idle in the window is said, not asserted)
top_rows all -a --sort pid
cut -d' ' -f3 "$dir/rows" | cut -d: -f1 | LC_ALL=C sort -c -n || fail "--sort pid: not by pid: $(cat "$dir/rows")"
grep -E ' (:0|0:[^s][^ ]*) ' "$dir/all.txt" && fail "the idle task is not named swapper"
may_be_empty=1 top_rows idle -a --comm swapper
cut -d' ' -f3 "$dir/rows" | grep -v '^0:swapper$' && fail "--comm swapper left rows of other threads"
echo "top-process: idle CPU rows in the window: $(wc -l <"$dir/rows")"

"$HOTSTACK" record -q -a -d 1 -o "$dir/all.folded" || fail "record -a failed"
grep -q "^:0;" "$dir/all.folded" && fail "the idle task is ':0' in folded stacks"
echo "top-process: swapper stacks recorded: $(grep -c '^swapper;' "$dir/all.folded" || true)"

expect_status 2 "$HOTSTACK" top --sort bogus
expect_stderr "invalid --sort 'bogus'"
exit 0
