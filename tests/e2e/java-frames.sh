#!/bin/sh
# Java frames read from outside the JVM at sample time, with no flag, agent or attach: a program
# with a known call tree (tests/workloads/java/Hot.java) recorded as the command and attached
# to with -p after its warm-up, and run with -XX:+PreserveFramePointer, -Xint and
# -XX:TieredStopAtLevel=1, on Debian's JDK 17 and on every other JDK 17 or later installed.
# java-check.py checks each profile: 95% of Hot.fib's samples carry the whole Java chain over
# the thread's native base, no stack is complete but wrong, and interpreted, compiled and
# inlined frames are told apart. The JVM is never asked for its perf map; without the rights to
# load BPF programs (as nobody) one line says so and the perf map names the compiled methods.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
jdk17=/usr/lib/jvm/java-17-openjdk-amd64
[ -x "$jdk17/bin/javac" ] || fail "Debian's OpenJDK 17 is missing (scripts/install-deps installs it)"
check="$SRCDIR/tests/e2e/java-check.py"
pid=
trap 'kill "$pid" 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT

"$jdk17/bin/javac" -d "$dir" "$SRCDIR/tests/workloads/java/Hot.java" 2>"$dir/javac.err" ||
	fail "javac: $(cat "$dir/javac.err")"

# started: record NAME JAVA [JVM OPTIONS] [-- CHECK OPTIONS]
started() {
	name=$1 java=$2
	shift 2
	opts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086 # opts are words
	"$HOTSTACK" record -v -d 5 -o "$dir/$name.folded" -- "$java" $opts -cp "$dir" Hot 4 30 \
		>"$dir/$name.out" 2>"$dir/$name.err" || fail "$name: record: $(cat "$dir/$name.err")"
	verify "$name" "$@"
}

verify() { # NAME [CHECK OPTIONS]
	name=$1
	shift
	if grep -q "wrote its perf map" "$dir/$name.err"; then
		fail "$name: the JVM was asked for its perf map: $(cat "$dir/$name.err")"
	fi
	grep -q '^hotstack: Java: frame reader loaded$' "$dir/$name.err" ||
		fail "$name: the Java frame reader did not run: $(cat "$dir/$name.err")"
	python3 "$check" "$dir/$name.folded" "$@" >"$dir/$name.check" 2>&1 ||
		fail "$name: $(cat "$dir/$name.check")"
	echo "java-frames: $name: $(cat "$dir/$name.check")"
}

started jdk17 "$jdk17/bin/java"
started jdk17-fp "$jdk17/bin/java" -XX:+PreserveFramePointer
started jdk17-c1 "$jdk17/bin/java" -XX:TieredStopAtLevel=1
started jdk17-xint "$jdk17/bin/java" -Xint -- --no-compiled

# attached after its warm-up
"$jdk17/bin/java" -cp "$dir" Hot 30 >"$dir/java.out" 2>&1 &
pid=$!
wait_until 300 has_line "$dir/java.out" ready || fail "the JVM did not warm up: $(cat "$dir/java.out")"
"$HOTSTACK" record -v -p "$pid" -d 3 -o "$dir/attached.folded" >/dev/null 2>"$dir/attached.err" ||
	fail "record -p: $(cat "$dir/attached.err")"
kill -0 "$pid" 2>/dev/null || fail "the JVM did not survive the recording"
verify attached
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=

# without the right to load BPF programs: one line says so, and the perf map, asked for while
# the JVM runs, names its compiled methods instead (at -F 199: a user's rings are as big as it
# may lock, and a sanitizer's build on a busy machine lost half the samples at 999 Hz, and the
# mappings that tell a JVM with them)
chmod 777 "$dir"
runuser -u nobody -- "$HOTSTACK" record -F 199 -o "$dir/nobpf.folded" -d 5 -- "$note_pid" "$jdk17/bin/java" -cp "$dir" Hot 3 30 \
	>/dev/null 2>"$dir/nobpf.err" || fail "record as nobody: $(cat "$dir/nobpf.err")"
[ "$(grep -c 'reading Java frames needs root, or CAP_BPF and CAP_PERFMON' "$dir/nobpf.err")" = 1 ] ||
	fail "no one line on BPF rights: $(cat "$dir/nobpf.err")"
grep -q 'long Hot.fib(int)_\[j\]' "$dir/nobpf.folded" ||
	fail "without BPF rights, the perf map names no compiled method: $(sort -t' ' -k2 -nr "$dir/nobpf.folded" | head -3); record said: $(cat "$dir/nobpf.err")"
if grep -q '_\[0\]' "$dir/nobpf.folded"; then fail "interpreted Java frames without BPF rights?"; fi
echo "java-frames: as nobody: $(grep 'Java frames needs' "$dir/nobpf.err")"

# every other JDK here
for home in /usr/lib/jvm/*; do
	[ -x "$home/bin/java" ] && [ ! -L "$home" ] || continue
	[ "$(readlink -f "$home")" = "$(readlink -f "$jdk17")" ] && continue
	case $(basename "$home") in java-1.*) continue ;; esac
	started "$(basename "$home")" "$home/bin/java"
done
