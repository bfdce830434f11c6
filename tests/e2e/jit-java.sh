#!/bin/sh
# A running JVM, started with no agent and no perf map option (only -XX:+PreserveFramePointer, so
# that its compiled frames can be walked), attached with -p for a few seconds: at the end of the
# recording hotstack asks it for its perf map through the attach mechanism (Compiler.perfmap, as
# jcmd does), and the Java methods appear as JIT frames, under the interpreter's and the call
# stub's frames and continuing into libjvm.so (JavaCalls::call_helper) and down to the thread's
# start. With --no-jvm-perfmap the JVM is not asked and the same code stays unnamed. A JVM with
# attach disabled (on its command line, or in JAVA_TOOL_OPTIONS) gets one warning line and no
# wait; one that exits while hotstack waits for its attach listener leaves no trigger file. The
# Java frame reader, which names the same frames from outside, is left out (--no-java): this is
# the perf map, what runs where it cannot.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_spin_java
java -XX:+PreserveFramePointer -cp "$dir" Spin 30 >"$dir/java.out" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "/tmp/perf-$pid.map"; rm -rf "$dir"' EXIT
wait_until 100 has_line "$dir/java.out" ready || fail "the JVM did not start: $(cat "$dir/java.out")"
sleep 1.5 # for the JIT compilers to compile work() and middle()

# nothing left by an earlier process of this pid: the map must come from this JVM, now
rm -f "/tmp/perf-$pid.map"
"$HOTSTACK" record --no-java -v -p "$pid" -d 3 -o "$dir/java.folded" >"$dir/rec.out" 2>"$dir/rec.err" ||
	fail "record -p: $(cat "$dir/rec.err")"
kill -0 "$pid" 2>/dev/null || fail "the JVM did not survive"
[ -s "/tmp/perf-$pid.map" ] || fail "the JVM wrote no perf map: $(cat "$dir/rec.err")"
grep -q "JVM $pid wrote its perf map" "$dir/rec.err" || fail "hotstack did not ask the JVM: $(cat "$dir/rec.err")"

# samples with Java method frames (HotSpot names them "double Spin.work(int)"), and of those the
# ones that continue into libjvm.so and down to the thread's start
awk '
{
	n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	total += n
	if (line !~ /;double Spin\.(work|middle)\(int\)_\[j\]/) next
	java += n
	if (line ~ /;start_thread;/ && line ~ /;JavaCalls::call_helper\(/) deep += n
}
END { printf "%d %d %d\n", total, java, deep }' "$dir/java.folded" >"$dir/counts"
read -r total java deep <"$dir/counts"
echo "jit-java: $total samples, $java with Java method frames, $deep of them through libjvm.so to start_thread"
[ "$java" -ge 100 ] || fail "only $java of $total samples name Spin's methods: $(sort -t' ' -k2 -nr "$dir/java.folded" | head -3)"
[ $((deep * 100)) -ge $((java * 90)) ] ||
	fail "only $deep of $java Java stacks reach libjvm.so: $(grep 'Spin\.' "$dir/java.folded" | grep -v call_helper | head -3)"

# not asked: the JIT code stays unnamed
rm -f "/tmp/perf-$pid.map"
"$HOTSTACK" record --no-java -q --no-jvm-perfmap -p "$pid" -d 1 -o "$dir/no.folded" 2>"$dir/no.err" ||
	fail "record --no-jvm-perfmap: $(cat "$dir/no.err")"
[ ! -e "/tmp/perf-$pid.map" ] || fail "--no-jvm-perfmap: the JVM was asked anyway"
if grep -q 'Spin\.' "$dir/no.folded"; then fail "--no-jvm-perfmap: Java names without a perf map"; fi
grep -q '\[anon\]_\[j\]' "$dir/no.folded" || fail "--no-jvm-perfmap: no unnamed JIT frames: $(head -3 "$dir/no.folded")"
echo "jit-java: --no-jvm-perfmap leaves them unnamed"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

# a JVM that refuses attaching: one line that says why, and the recording is still written
java -XX:+PreserveFramePointer -XX:+DisableAttachMechanism -cp "$dir" Spin 30 >"$dir/java2.out" 2>&1 &
pid=$!
wait_until 100 has_line "$dir/java2.out" ready || fail "the JVM did not start: $(cat "$dir/java2.out")"
sleep 1
"$HOTSTACK" record --no-java -p "$pid" -d 1 -o "$dir/dis.folded" 2>"$dir/dis.err" ||
	fail "record of a JVM without attach: $(cat "$dir/dis.err")"
[ -s "$dir/dis.folded" ] || fail "no profile written for a JVM without attach"
grep -q "^hotstack: warning: cannot get Java method names from JVM $pid: attach is disabled" "$dir/dis.err" ||
	fail "no warning for a JVM with attach disabled: $(cat "$dir/dis.err")"
[ "$(grep -c JVM "$dir/dis.err")" -eq 1 ] || fail "more than one line for a JVM with attach disabled: $(cat "$dir/dis.err")"
kill -0 "$pid" 2>/dev/null || fail "the JVM with attach disabled did not survive"
echo "jit-java: a JVM with attach disabled: $(grep JVM "$dir/dis.err")"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

# attach disabled through JAVA_TOOL_OPTIONS (not on its command line): said at once as well
mkdir "$dir/cwd3"
(cd "$dir/cwd3" && JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism exec java -cp "$dir" Spin 30) >"$dir/java3.out" 2>&1 &
pid=$!
wait_until 100 has_line "$dir/java3.out" ready || fail "the JVM did not start: $(cat "$dir/java3.out")"
"$HOTSTACK" record --no-java -p "$pid" -d 1 -o "$dir/env.folded" 2>"$dir/env.err" ||
	fail "record of a JVM without attach (environment): $(cat "$dir/env.err")"
grep -q "^hotstack: warning: cannot get Java method names from JVM $pid: attach is disabled" "$dir/env.err" ||
	fail "no warning for a JVM with attach disabled in JAVA_TOOL_OPTIONS: $(cat "$dir/env.err")"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

# a JVM whose attach listener never starts (disabled where hotstack cannot see it: an options
# file) and that exits while hotstack waits for it: one line, and its trigger file is removed
# although the JVM's /proc entry is gone by then
echo "-XX:+DisableAttachMechanism" >"$dir/vm.options"
mkdir "$dir/cwd4"
(cd "$dir/cwd4" && exec java -XX:VMOptionsFile="$dir/vm.options" -cp "$dir" Spin 3) >"$dir/java4.out" 2>&1 &
pid=$!
wait_until 100 has_line "$dir/java4.out" ready || fail "the JVM did not start: $(cat "$dir/java4.out")"
"$HOTSTACK" record --no-java -p "$pid" -d 1 -o "$dir/gone.folded" 2>"$dir/gone.err" ||
	fail "record of a JVM that exits during attach: $(cat "$dir/gone.err")"
[ -s "$dir/gone.folded" ] || fail "no profile written for a JVM that exits during attach"
grep -q "^hotstack: warning: cannot get Java method names from JVM $pid: " "$dir/gone.err" ||
	fail "no warning for a JVM that exits during attach: $(cat "$dir/gone.err")"
wait "$pid" 2>/dev/null || true
left=$(ls -A "$dir/cwd4"; [ ! -e "/tmp/.attach_pid$pid" ] || echo "/tmp/.attach_pid$pid")
[ -z "$left" ] || fail "attach trigger files left behind: $left"
echo "jit-java: a JVM that exits during attach: $(grep JVM "$dir/gone.err")"
exit 0
