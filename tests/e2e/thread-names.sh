#!/bin/sh
# Thread names as the program set them, in every output: the threads workload names its C
# threads spin-N (pthread_setname_np), py-threads.py its Python threads worker-1 and worker-2
# (threading.Thread(name=...), given to the operating system as CPython 3.14 does itself). Each
# thread's function sits under its thread's name in folded stacks, in the text report's rows by
# command and by thread, in the pprof's comm labels (read back), and in top's rows.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
py=/usr/bin/python3.11
[ -x "$py" ] || py=python3
prog="$SRCDIR/tests/workloads/py-threads.py"

# C threads: the pprof's labels name them (report-threads.sh checks the other outputs)
"$HOTSTACK" record -q -o "$dir/c.pb.gz" -- "$WORKLOADS/threads" 2 1 >/dev/null || fail "record of threads failed"
"$HOTSTACK" report "$dir/c.pb.gz" --sort comm,sym >"$dir/c.txt" || fail "report of the pprof failed"
for n in 0 1; do
	grep -Eq "  spin-$n +spin_thread_$n\$" "$dir/c.txt" ||
		fail "the pprof's labels do not put spin_thread_$n in thread spin-$n: $(cat "$dir/c.txt")"
done

# Python threads
"$HOTSTACK" record -q -o "$dir/py.folded" -o "$dir/py.pb.gz" -- "$py" "$prog" 2 os-names 2>"$dir/py.err" ||
	fail "record of py-threads.py failed: $(cat "$dir/py.err")"
for n in 1 2; do
	fn=$(if [ $n = 1 ]; then echo spin_a; else echo spin_b; fi)
	other=$(if [ $n = 1 ]; then echo spin_b; else echo spin_a; fi)
	grep -q "^worker-$n;.*;$fn" "$dir/py.folded" || fail "no folded stack of $fn under worker-$n"
	! grep -q "^worker-$n;.*;$other" "$dir/py.folded" || fail "$other under worker-$n"
done
"$HOTSTACK" report "$dir/py.pb.gz" --sort comm >"$dir/comm.txt" || fail "report --sort comm failed"
"$HOTSTACK" report "$dir/py.pb.gz" --sort tid >"$dir/tid.txt" || fail "report --sort tid failed"
"$HOTSTACK" report "$dir/py.pb.gz" >"$dir/report.txt" || fail "report failed"
for n in 1 2; do
	grep -Eq "  worker-$n\$" "$dir/comm.txt" || fail "no row of worker-$n by command: $(cat "$dir/comm.txt")"
	grep -Eq "  [0-9]+:worker-$n\$" "$dir/tid.txt" || fail "no row TID:worker-$n by thread: $(cat "$dir/tid.txt")"
done
grep -q "spin_a" "$dir/report.txt" && grep -q "spin_b" "$dir/report.txt" ||
	fail "the report does not name the threads' functions: $(cat "$dir/report.txt")"

# top: each thread's function in a row of its thread's name
"$HOTSTACK" top --stdio -d 1 -- "$py" "$prog" 3 os-names >"$dir/top.txt" 2>"$dir/top.err" ||
	fail "top -- py-threads.py failed: $(cat "$dir/top.err")"
grep -Eq "^ *[0-9.]+% +[0-9.]+%  [0-9]+:worker-1 +\[py\] +spin_a " "$dir/top.txt" ||
	fail "top has no row of spin_a in worker-1: $(cat "$dir/top.txt")"
grep -Eq "^ *[0-9.]+% +[0-9.]+%  [0-9]+:worker-2 +\[py\] +spin_b " "$dir/top.txt" ||
	fail "top has no row of spin_b in worker-2: $(cat "$dir/top.txt")"
! grep -Eq ":worker-1 +\[py\] +spin_b |:worker-2 +\[py\] +spin_a " "$dir/top.txt" ||
	fail "top shows a function in the other thread's rows"
exit 0
