#!/bin/sh
# record as a perf user types it: -g alone (the default call graph, the word after it a mode
# only when it names one; last on the line, and in clusters as -ga, -ag), -s KEYS for the
# text report it writes, -t TID (those threads only), -C CPUS (system-wide on those CPUs, an
# offline one refused), -p and -t winning over -a and -C as in perf, the last default output
# kept as hotstack.pb.gz.old, and -o DIR refused as a directory by every command before any
# work.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

pids=""
trap 'kill $pids 2>/dev/null || true; rm -rf "$dir"' EXIT
cd "$dir"

# -- -g alone, before the command, before another option, and as --call-graph with a mode
expect_status 0 "$HOTSTACK" record -q -g -- sleep 0.2
[ -s hotstack.pb.gz ] || fail "record -g -- sleep 0.2 wrote no hotstack.pb.gz"
expect_status 0 "$HOTSTACK" record -q -g -F 499 -o g.folded -- "$WORKLOADS/calltree" 1
grep -q ';main;' g.folded || fail "-g alone: stacks do not reach main: $(head -3 g.folded)"
# "-g none" is still a mode: the sampled instruction only, no stack reaches main
expect_status 0 "$HOTSTACK" record -q -g none -o none.folded -- "$WORKLOADS/calltree" 1
grep -q . none.folded || fail "-g none recorded nothing"
if grep -q ';main;' none.folded; then fail "-g none was not taken as a mode: $(head -3 none.folded)"; fi
expect_status 0 "$HOTSTACK" record -q --call-graph=dwarf,16384 -o dw.folded -- "$WORKLOADS/calltree" 1
grep -q ';main;' dw.folded || fail "--call-graph=dwarf,16384: stacks do not reach main"
# -g last on the line (perf's -g takes no value), and in a cluster before or after others;
# the rest of a cluster is a mode only when it names one (-gfp)
"$WORKLOADS/calltree" 30 >/dev/null &
gp=$!
pids="$pids $gp"
expect_status 0 "$HOTSTACK" record -q -o gt.folded -p "$gp" -d 1 -g
grep -q ';main;' gt.folded || fail "-p PID -g: stacks do not reach main: $(head -3 gt.folded)"
for cluster in -gq -qg; do
	expect_status 0 "$HOTSTACK" record "$cluster" -o "g$cluster.folded" -- "$WORKLOADS/calltree" 1
	[ ! -s "$dir/.err" ] || fail "record $cluster: -q not taken: $(cat "$dir/.err")"
	grep -q ';main;' "g$cluster.folded" || fail "record $cluster: stacks do not reach main"
done
expect_status 0 "$HOTSTACK" record -q -gfp -o gfp.folded -- "$WORKLOADS/calltree" 1
grep -q ';main;' gfp.folded || fail "-gfp: stacks do not reach main"
kill "$gp"
# -s KEYS, as --sort, for the text report record writes (perf record's -s is --stat)
expect_status 0 "$HOTSTACK" record -q -o s.txt -s dso -- "$WORKLOADS/calltree" 1
grep -q 'shared object$' s.txt || fail "record -s dso: the report is not by shared object: $(head -8 s.txt)"
grep -qE '^ +[0-9.]+% .* calltree$' s.txt || fail "record -s dso: no row for calltree: $(head -8 s.txt)"
expect_status 2 "$HOTSTACK" record --call-graph foo -- true
expect_stderr "^hotstack: unknown call-graph mode 'foo'"
expect_status 2 "$HOTSTACK" record -g dwarf,3 -- true
expect_stderr "^hotstack: invalid stack copy size '3'"

# -- -t: one thread of a process of three, not the others
"$WORKLOADS/threads" 3 30 >ready &
tp=$!
pids="$pids $tp"
wait_until 300 has_line ready ready || fail "the threads workload did not start"
tid=""
for t in /proc/"$tp"/task/*; do
	[ "$(cat "$t/comm")" = spin-1 ] && tid=${t##*/}
done
[ -n "$tid" ] || fail "no thread spin-1 in process $tp"
expect_status 0 "$HOTSTACK" record -q -t "$tid" -d 1.5 --root tid -o t.folded
grep -q "^spin-1-$tp/$tid;.*spin_thread_1" t.folded || fail "-t $tid: spin-1 not sampled: $(cut -d';' -f1 t.folded | sort -u)"
others=$(grep -vc "^spin-1-$tp/$tid;" t.folded || true)
[ "$others" = 0 ] || fail "-t $tid recorded other threads: $(cut -d';' -f1 t.folded | sort -u)"
# -a with -p or -t: those only (on every CPU), as perf ("PID/TID switch overriding SYSTEM")
expect_status 0 "$HOTSTACK" record -a -p "$tp" -d 1 --root pid -o ap.folded
expect_stderr "^hotstack: warning: -p overrides -a: only the given processes are recorded, on every CPU, as perf does$"
grep -q "^spin-1-$tp;" ap.folded || fail "-a -p $tp: the process was not sampled: $(cut -d';' -f1 ap.folded | sort -u)"
others=$(grep -vc "^spin-[0-9]-$tp;" ap.folded || true)
[ "$others" = 0 ] || fail "-a -p $tp recorded other processes: $(cut -d';' -f1 ap.folded | sort -u)"
expect_status 0 "$HOTSTACK" record -q -a -t "$tid" -d 1 --root tid -o at.folded
grep -q "^spin-1-$tp/$tid;" at.folded || fail "-a -t $tid: the thread was not sampled"
others=$(grep -vc "^spin-1-$tp/$tid;" at.folded || true)
[ "$others" = 0 ] || fail "-a -t $tid recorded other threads: $(cut -d';' -f1 at.folded | sort -u)"
expect_status 1 "$HOTSTACK" record -t 1073741823 -d 1 -o x.folded
expect_stderr "^hotstack: no such thread: 1073741823$"
expect_status 2 "$HOTSTACK" record -t 12x -d 1
expect_stderr "^hotstack: invalid thread id list '12x'"
# -t alone ends when its threads have ended (5 s: time for a busy machine to start it)
"$WORKLOADS/threads" 1 5 >ready2 &
tp2=$!
pids="$pids $tp2"
wait_until 300 has_line ready2 ready || fail "the second threads workload did not start"
tid2=$(grep -l '^spin-0$' /proc/"$tp2"/task/*/comm | head -n1 | cut -d/ -f5)
expect_status 0 timeout 60 "$HOTSTACK" record -q -t "$tid2" -o t2.folded
grep -q "spin_thread_0" t2.folded || fail "-t on a thread that ends: no samples"

# -- -C: system-wide on one CPU; a process pinned to the other CPU is never sampled there
ncpu=$(getconf _NPROCESSORS_ONLN)
online=$(cat /sys/devices/system/cpu/online)
if [ "$ncpu" -ge 2 ] && [ "$online" = "0-$((ncpu - 1))" ]; then
	# long-lived (killed at the end): the steps below take minutes in a sanitizer build on a busy machine
	taskset -c 0 "$WORKLOADS/threads" 1 300 >/dev/null &
	on0=$!
	taskset -c 1 "$WORKLOADS/threads" 1 300 >/dev/null &
	on1=$!
	pids="$pids $on0 $on1"
	sleep 0.3
	"$HOTSTACK" record -q -C 1 -d 1.5 --root pid -o c.folded 2>c.err || {
		grep -q permission c.err && skip "system-wide recording is not permitted here"
		fail "record -C 1 failed: $(cat c.err)"
	}
	grep -q "^spin-0-$on1;" c.folded || fail "-C 1: the process pinned to CPU 1 was not sampled"
	if grep -q -- "-$on0;" c.folded; then fail "-C 1: the process pinned to CPU 0 was sampled"; fi
	# -C with -a, and a range (2 s: a system-wide start reads every process's maps first, which
	# in a sanitizer build on a busy machine can take most of a shorter window)
	expect_status 0 "$HOTSTACK" record -q -a -C "0-$((ncpu - 1))" -d 2 --root pid -o c2.folded
	grep -q "^spin-0-$on0;" c2.folded || fail "-a -C 0-$((ncpu - 1)): CPU 0's process not sampled"
	# -C with -p: the process on every CPU, as perf ("PID/TID switch overriding CPU")
	expect_status 0 "$HOTSTACK" record -C 0 -p "$on1" -d 2 --root pid -o cp.folded
	expect_stderr "^hotstack: warning: -p overrides -C: "
	grep -q "^spin-0-$on1;" cp.folded || fail "-C 0 -p $on1: the process on CPU 1 was not sampled"
	others=$(grep -vc "^spin-0-$on1;" cp.folded || true)
	[ "$others" = 0 ] || fail "-C 0 -p $on1 recorded other processes: $(cut -d';' -f1 cp.folded | sort -u)"
	# -g in a cluster with -a, on either side of it
	for cluster in -ga -ag; do
		expect_status 0 "$HOTSTACK" record -q "$cluster" -d 2 --root pid -o "c$cluster.folded"
		grep -qE "^spin-0-$on0;[^ ]+;spin_thread_0" "c$cluster.folded" || fail "record $cluster: CPU 0's process not sampled with stacks"
	done
fi
expect_status 2 "$HOTSTACK" record -C "$ncpu" -d 1 -o x.folded
expect_stderr "^hotstack: CPU $ncpu is not online \(online: $online\)$"
expect_status 2 "$HOTSTACK" record -C 0-x -d 1 -o x.folded
expect_stderr "^hotstack: invalid CPU list '0-x'"
[ ! -e x.folded ] || fail "a refused -C wrote an output"

# -- no -o: the last hotstack.pb.gz kept as hotstack.pb.gz.old, as perf.data.old
rm -f hotstack.pb.gz hotstack.pb.gz.old
expect_status 0 "$HOTSTACK" record -q -- "$WORKLOADS/calltree" 1
cp hotstack.pb.gz first.pb.gz
[ ! -e hotstack.pb.gz.old ] || fail "a .old appeared with nothing to keep"
expect_status 0 "$HOTSTACK" record -q -- "$WORKLOADS/threads" 1 1
cmp -s first.pb.gz hotstack.pb.gz.old || fail "the first recording was not kept as hotstack.pb.gz.old"
"$HOTSTACK" convert hotstack.pb.gz -o now.folded
grep -q spin_thread_0 now.folded || fail "hotstack.pb.gz is not the new recording"
cp hotstack.pb.gz second.pb.gz
# with -o, or a recording that fails, nothing is moved
expect_status 0 "$HOTSTACK" record -q -o other.folded -- true
expect_status 127 "$HOTSTACK" record -q -- ./no-such-command
cmp -s second.pb.gz hotstack.pb.gz || fail "hotstack.pb.gz changed without a recording to it"
cmp -s first.pb.gz hotstack.pb.gz.old || fail "hotstack.pb.gz.old changed without a recording to hotstack.pb.gz"

# -- -o DIR: said to be a directory, before any work (the command never runs)
mkdir out
expect_status 2 "$HOTSTACK" record -o out -- touch ran
expect_stderr "^hotstack: cannot write 'out': Is a directory$"
[ ! -e ran ] || fail "record -o DIR ran the command before refusing"
expect_status 2 "$HOTSTACK" record --format svg -o out -- touch ran
expect_stderr "^hotstack: cannot write 'out': Is a directory$"
[ ! -e ran ] || fail "record --format svg -o DIR ran the command before refusing"
for cmd in "flame g.folded" "convert g.folded" "report g.folded" "diff g.folded dw.folded"; do
	for fmt in "" "--format=svg"; do
		set +e
		# shellcheck disable=SC2086 # the command, its files and the option as words
		"$HOTSTACK" $cmd $fmt -o out >/dev/null 2>err
		st=$?
		set -e
		[ "$st" != 0 ] || fail "$cmd $fmt -o DIR succeeded"
		[ "$(cat err)" = "hotstack: cannot write 'out': Is a directory" ] ||
			fail "$cmd $fmt -o DIR said: $(cat err)"
	done
done
[ -z "$(ls -A out)" ] || fail "something was written in the directory: $(ls -A out)"
exit 0
