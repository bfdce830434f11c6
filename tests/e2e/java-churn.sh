#!/bin/sh
# Java frames read while the JVM unloads classes and frees their code: Churn.java loads Dyn in a
# class loader of its own each round, runs it until the JIT compiles it, and unloads it. No
# stack may name a method that is not where the program's call tree has it (a method freed and
# another put at its address is [unknown java], never the other), the recording ends normally,
# and the JVM did unload classes meanwhile (its own log says so). Then processes that map a
# libjvm.so whose tables are garbage (tests/workloads/fake-libjvm.c) are recorded: one line says
# each is refused, and the recording goes on.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
jdk17=/usr/lib/jvm/java-17-openjdk-amd64
[ -x "$jdk17/bin/javac" ] || fail "Debian's OpenJDK 17 is missing (scripts/install-deps installs it)"
trap 'rm -rf "$dir"' EXIT

src=$SRCDIR/tests/workloads/java/churn
mkdir -p "$dir/dyn"
"$jdk17/bin/javac" -d "$dir" "$src/Churn.java" "$src/Dyn.java" 2>"$dir/javac.err" ||
	fail "javac: $(cat "$dir/javac.err")"
mv "$dir/Dyn.class" "$dir/dyn/"

"$HOTSTACK" record -v -d 6 -o "$dir/churn.folded" -- "$jdk17/bin/java" \
	"-Xlog:class+unload=info:file=$dir/unload.log" -cp "$dir" Churn "$dir/dyn" 4 \
	>/dev/null 2>"$dir/churn.err" || fail "record: $(cat "$dir/churn.err")"
unloaded=$(grep -c 'Dyn' "$dir/unload.log" || true)
[ "${unloaded:-0}" -ge 10 ] || fail "the JVM unloaded Dyn only ${unloaded:-0} times: $(head -3 "$dir/unload.log")"
grep -q '^hotstack: Java: frame reader loaded$' "$dir/churn.err" ||
	fail "the Java frame reader did not run: $(cat "$dir/churn.err")"

# the program's own methods, root first, must follow main -> round -> (reflection) -> run -> spin,
# or round -> (the class loader) -> Loader.findClass; from main, unless the stack says it was cut
python3 - "$dir/churn.folded" >"$dir/check" <<'PY' || fail "$(cat "$dir/check")"
import re, sys
order = ["void Churn.main(java.lang.String[])", "void Churn.round(byte[])", "long Dyn.run(int)",
         "long Dyn.spin(int)"]
edges = {(order[i], order[i + 1]) for i in range(3)} | {
    (order[1], "java.lang.Class Churn$Loader.findClass(java.lang.String)"),
    (order[1], "void Churn$Loader.<init>(byte[])")}
def reaches(a, b):
    return (a, b) in edges or any(x == a and reaches(y, b) for x, y in edges)

def follows(own):
    """The program's methods in own follow its call tree, an unknown frame between two any path."""
    known = [(i, f) for i, f in enumerate(own) if f != "[unknown java]"]
    for (i, a), (j, b) in zip(known, known[1:]):
        if (a, b) not in edges and not (j > i + 1 and reaches(a, b)):
            return False
    return True

wrong = named = total = unknown = 0
bad = []
for line in open(sys.argv[1]):
    st, _, n = line.rstrip("\n").rpartition(" ")
    n = int(n)
    total += n
    frames = [re.sub(r"_\[[0-9a-z]\]$", "", f) for f in st.split(";")]
    # an [unknown java] frame (a method the reader could not name at that instant) stands
    # for any frames: the program's methods on either side of one must still follow the tree
    own = [f for f in frames if re.match(r"^\S+ (Churn|Dyn)[.$]", f) or f == "[unknown java]"]
    unknown += n if "[unknown java]" in frames else 0
    if any(f.startswith("long Dyn.") for f in own):
        named += n
    # a stack cut short ([java: ...] at its root side) may start anywhere in the call tree, but
    # what it names must still follow it
    first = next((i for i, f in enumerate(frames) if f in own), len(frames))
    cut = any(f.startswith("[") for f in frames[:first])
    ok = not own or ((cut or own[0] in (order[0], "[unknown java]")) and follows(own))
    if not ok:
        wrong += n
        bad.append(st)
print("java-churn: %d samples, %d with Dyn's methods named, %d with an unknown Java frame, %d wrong"
      % (total, named, unknown, wrong))
if wrong:
    print("misnamed: " + bad[0][:800])
    sys.exit(1)
if named * 10 < total:
    print("Dyn's methods named in only %d of %d samples" % (named, total))
    sys.exit(1)
PY
echo "$(cat "$dir/check"); the JVM unloaded Dyn $unloaded times"

# garbage tables, as a recording meets them
for mode in random stride text endless empty; do
	rm -f "$dir/fake.out"
	FAKE_JVM=$mode "$WORKLOADS/fake-jvm" "$WORKLOADS/libjvm.so" >"$dir/fake.out" 2>&1 &
	fpid=$!
	wait_until 100 has_line "$dir/fake.out" ready || fail "fake-jvm did not start: $(cat "$dir/fake.out")"
	rc=0
	timeout 30 "$HOTSTACK" record -p "$fpid" -d 1 -o "$dir/fake.folded" 2>"$dir/fake.err" || rc=$?
	kill "$fpid" 2>/dev/null || true
	wait "$fpid" 2>/dev/null || true
	[ "$rc" = 0 ] || fail "garbage tables ($mode): record exited $rc: $(cat "$dir/fake.err")"
	[ "$(grep -c 'hotspot: ' "$dir/fake.err")" = 1 ] && grep -q '(Java frames are read for' "$dir/fake.err" ||
		fail "garbage tables ($mode): not one line saying so: $(cat "$dir/fake.err")"
	echo "java-churn: garbage ($mode): $(grep 'hotspot: ' "$dir/fake.err")"
done
