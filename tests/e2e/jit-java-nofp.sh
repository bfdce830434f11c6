#!/bin/sh
# A JVM without -XX:+PreserveFramePointer, attached with -p: its compiled Java methods save rbp
# without making it their frame pointer (or use it as a register). A frame-pointer walk through
# rbp then skips them and their interpreted caller, and shows the call stub (StubRoutines)
# calling a compiled method directly, a stack that looks complete. Every sample with a Java
# method frame must either be the true chain (call stub, interpreter, Spin.middle, Spin.work,
# down to start_thread through libjvm.so) or end in a pseudo-frame saying why it stopped; and
# none may blame the copy ([truncated: stack copy]): these stacks are a few KiB deep. The Java
# frame reader, which walks them whole, is left out (--no-java): this is the fallback's walk.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_spin_java
java -cp "$dir" Spin 30 >"$dir/java.out" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "/tmp/perf-$pid.map"; rm -rf "$dir"' EXIT
wait_until 100 has_line "$dir/java.out" ready || fail "the JVM did not start: $(cat "$dir/java.out")"
sleep 1.5 # for the JIT compilers to compile work() and middle()

rm -f "/tmp/perf-$pid.map"
"$HOTSTACK" record --no-java -v -p "$pid" -d 3 -o "$dir/java.folded" >"$dir/rec.out" 2>"$dir/rec.err" ||
	fail "record -p: $(cat "$dir/rec.err")"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

# per sample with a Spin frame: true (the interpreter between the call stub and Spin, down to
# start_thread: main's frame, and middle's too while middle is not compiled yet, which on a busy
# machine can be a while), cut (ends in a pseudo-frame), lie (a Spin method right under the
# call stub, or anything else that looks complete), copy (cut with [truncated: stack copy])
awk '
{
	n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	if (line !~ /;double Spin\.(work|middle)\(int\)_\[j\]/) next
	java += n
	if (line ~ /^[^;]*;\[[^];.]*\];/) {
		cut += n
		if (line ~ /^[^;]*;\[truncated: stack copy\];/) copy += n
		end = line; sub(/^[^;]*;/, "", end); sub(/;.*/, "", end); ends[end] += n
	} else if (line ~ /;start_thread;/ && line ~ /;JavaCalls::call_helper\(/ &&
		   line ~ /;StubRoutines \(1\)_\[j\];(Interpreter_\[j\];)+double Spin\./) {
		good += n
	} else {
		lie += n
		print n, substr(line, 1, 600) > bad
	}
}
END {
	for (e in ends) { s = s sep e " " ends[e]; sep = ", " }
	printf "%d %d %d %d %d %s\n", java, good, cut, lie, copy, s
}' bad="$dir/lies" "$dir/java.folded" >"$dir/counts"
read -r java good cut lie copy endings <"$dir/counts"
echo "jit-java-nofp: $java samples with Java method frames: $good complete through the interpreter, $cut cut (${endings:-none}), $lie that look complete but are not"
grep "frame-pointer steps" "$dir/rec.err" || true
[ "$java" -ge 100 ] || fail "only $java samples name Spin's methods: $(sort -t' ' -k2 -nr "$dir/java.folded" | head -3)"
[ $((lie * 100)) -le "$java" ] || fail "$lie of $java Java stacks look complete and are not:
$(sort -nr "$dir/lies" | head -n 3)"
[ $((copy * 100)) -le "$java" ] || fail "$copy of $java Java stacks blame the stack copy"
exit 0
