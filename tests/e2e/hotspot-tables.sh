#!/bin/sh
# The HotSpot reader (src/hotspot/) on every JDK installed under /usr/lib/jvm, read from outside
# by tests/tools/hs-jvm-probe while tests/workloads/java/Hot.java runs (no JVM flag): the tables
# are accepted; the code cache's walk finds Hot's nmethods, C1 and C2 both, and the segment map
# lookup of each nmethod's code finds that very nmethod; each is named exactly as the JVM's own
# perf map (jcmd Compiler.perfmap) names the code at its address, with its source file and the
# lines of Hot.java it spans (or left unknown: a method handle intrinsic's Method* is in no
# class's method array, so the check cannot vouch for it); an inline chain has square() inlined into a caller; the side
# thread is among the Java threads by its tid; the sleeping thread, walked from its frame anchor
# through its interpreted and compiled frames to the call stub, is nap <- doze <- run at the
# lines of the source. A process mapping a libjvm.so whose tables are
# garbage is refused in one line, quickly.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
probe=$BUILDDIR/tests/tools/hs-jvm-probe
[ -x "$probe" ] || fail "no $probe"

# garbage tables: a refusal in one line, within the timeout
for mode in random stride text endless empty; do
	rm -f "$dir/fake.out"
	FAKE_JVM=$mode "$WORKLOADS/fake-jvm" "$WORKLOADS/libjvm.so" >"$dir/fake.out" 2>&1 &
	fpid=$!
	wait_until 100 has_line "$dir/fake.out" ready || fail "fake-jvm did not start: $(cat "$dir/fake.out")"
	rc=0
	timeout 20 "$probe" "$fpid" >"$dir/fake.probe" 2>"$dir/fake.err" || rc=$?
	kill "$fpid" 2>/dev/null || true
	wait "$fpid" 2>/dev/null || true
	[ "$rc" = 2 ] || fail "garbage tables ($mode): exit $rc, not a refusal: $(cat "$dir/fake.err")"
	[ "$(wc -l <"$dir/fake.err")" = 1 ] && grep -q '^hotspot: ' "$dir/fake.err" ||
		fail "garbage tables ($mode): not one line: $(cat "$dir/fake.err")"
	echo "hotspot-tables: garbage ($mode) refused: $(cat "$dir/fake.err")"
done

# the JDKs: one each per libjvm.so (java-17-openjdk-amd64 and its alias are one)
jdks=
for java in /usr/lib/jvm/*/bin/java; do
	[ -x "$java" ] && [ -x "${java}c" ] || continue
	home=${java%/bin/java}
	lib=$(readlink -f "$home/lib/server/libjvm.so" 2>/dev/null) || continue
	case " $jdks " in *" $lib "*) continue ;; esac
	jdks="$jdks $lib"
	set -- "$@" "$home"
done
[ $# -gt 0 ] || skip "no JDK under /usr/lib/jvm (apt-get install openjdk-17-jdk-headless)"

src=$SRCDIR/tests/workloads/java/Hot.java
nlines=$(wc -l <"$src")
fib_lo=$(grep -n 'if (n < 2)' "$src" | cut -d: -f1)
fib_hi=$(grep -n 'return fib(n - 1)' "$src" | cut -d: -f1)
nap=$(grep -n 'Thread.sleep(20);' "$src" | cut -d: -f1)
doze=$(grep -n '	nap();' "$src" | cut -d: -f1)
run=$(grep -n '	doze();' "$src" | cut -d: -f1)

check_jdk() { # HOME
	home=$1
	n=$(basename "$home")
	out=$dir/$n
	mkdir -p "$out"
	"$home/bin/javac" -d "$out" "$src" 2>"$out/javac.err" || fail "$n: javac: $(cat "$out/javac.err")"
	"$note_pid" "$home/bin/java" -cp "$out" Hot 60 >"$out/java.out" 2>&1 &
	jpid=$!
	wait_until 600 has_line "$out/java.out" ready || fail "$n: the JVM did not start: $(cat "$out/java.out")"
	major=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
	rc=0
	"$probe" "$jpid" >"$out/probe1" 2>"$out/probe.err" || rc=$?
	if [ "${major:-0}" -lt 17 ] || [ "${major:-0}" -gt 25 ]; then
		# outside what the reader knows: refused in one line
		[ "$rc" = 2 ] && [ "$(wc -l <"$out/probe.err")" = 1 ] ||
			fail "$n (JDK $major): exit $rc, not a one-line refusal: $(cat "$out/probe.err")"
		kill "$jpid"
		echo "hotspot-tables: $n (JDK $major) refused: $(cat "$out/probe.err")"
		return 0
	fi
	[ "$rc" = 0 ] || fail "$n: the tables were refused ($rc): $(cat "$out/probe.err")"
	"$home/bin/jcmd" "$jpid" Compiler.perfmap >"$out/jcmd.out" 2>&1 || fail "$n: jcmd: $(cat "$out/jcmd.out")"
	"$probe" "$jpid" >"$out/probe2" 2>"$out/probe.err" || fail "$n: second probe: $(cat "$out/probe.err")"
	cp "/tmp/perf-$jpid.map" "$out/perf.map" || fail "$n: the JVM wrote no perf map"
	side=$(grep -l '^side$' /proc/"$jpid"/task/*/comm | head -n1 | cut -d/ -f5)
	sleeper=$(grep -l '^sleeper$' /proc/"$jpid"/task/*/comm | head -n1 | cut -d/ -f5)
	kill "$jpid"

	# nmethods seen by both probes (the same address and compile id: not freed or moved in
	# between), against the perf map the JVM wrote between them
	awk -v nlines="$nlines" -v fib_lo="$fib_lo" -v fib_hi="$fib_hi" -v side="$side" -v sleeper="$sleeper" \
		-v nap="$nap" -v doze="$doze" -v run="$run" '
	BEGIN { chain = " void Hot\\$Sleeper\\.nap\\(\\) @" nap " ; [a-zA-Z0-9]+ void Hot\\$Sleeper\\.doze\\(\\) @" doze \
		" ; [a-zA-Z0-9]+ void Hot\\$Sleeper\\.run\\(\\) @" run "$" }
	# the sleeper walked from its anchor while it sleeps: every complete walk is exactly the
	# chain of the source, and one at least is complete
	$1 == "walk" && $2 == "tid=" sleeper && $3 == "end=entry" {
		if ($0 ~ chain) walked++
		else { printf "sleeper walked wrong: %s\n", $0; bad++ }
	}
	FILENAME == ARGV[1] { if ($1 == "nmethod") first[$2 " " $5] = 1; next }
	FILENAME == ARGV[2] {
		if ($1 == "0x0000000000000000") next
		start = $1; sub(/^0x0*/, "", start); size = $2; sub(/^0x0*/, "", size)
		line = $0; sub(/^[^ ]* [^ ]* /, "", line)
		map[start] = line; mapsize[start] = size; next
	}
	$1 == "nmethod" {
		if (!(($2 " " $5) in first)) next
		if ($9 != "lookup=same") { printf "segment map lookup of %s: %s\n", $2, $9; bad++ }
		split($8, code, /[=+]/); begin = code[2]; sub(/^0x/, "", begin); size = code[3]
		rest = $0; for (i = 0; i < 9; i++) sub(/^[^ ]* /, "", rest); split(rest, f, "|")
		if (f[1] == "[unknown java]") {
			# a method the check cannot vouch for (a method handle intrinsic is in the method
			# array of no class): unnamed, never misnamed
			unknown++
			if (begin in map && map[begin] !~ / java\.lang\.invoke\.MethodHandle\.(linkTo[A-Za-z]*|invokeBasic)\(/) {
				printf "code at %s: unknown, the JVM says \"%s\"\n", begin, map[begin]; bad++
			}
			next
		}
		if (begin in map) {
			checked++
			if (map[begin] != f[1]) { printf "code at %s: we say \"%s\", the JVM \"%s\"\n", begin, f[1], map[begin]; bad++ }
			if (mapsize[begin] != size) { printf "code at %s: size %s, the JVM %s\n", begin, size, mapsize[begin]; bad++ }
		}
		if (f[2] !~ /^Hot(\$|$)/ || f[2] ~ /Lambda/) next
		hot[$3]++
		named[f[3]]++
		if (f[5] != "Hot.java") { printf "%s: file %s\n", f[1], f[5]; bad++ }
		split(f[6], l, /[=-]/)
		if (l[2] < 1 || l[3] > nlines || l[2] > l[3]) { printf "%s: lines %s of %d\n", f[1], f[6], nlines; bad++ }
		if (f[3] == "fib" && (l[2] != fib_lo || l[3] != fib_hi)) { printf "fib: %s, not %d-%d\n", f[6], fib_lo, fib_hi; bad++ }
		next
	}
	$1 == "inline" && $0 ~ /; int Hot\.square\(int\)\|[^;]*; [^;]*\|Hot(\$[A-Za-z]+)?\|/ { inlined++ }
	$1 == "blob" && $3 == "interpreter" { interp++ }
	$1 == "thread" && $2 == "tid=" side { sidethread++ }
	END {
		for (m in named) names = names " " m
		printf "checked %d against the perf map, %d unknown; C1 %d, C2 %d; Hot methods:%s; square inlined %d; interpreter %d; side thread %d; sleeper walked %d\n",
			checked, unknown, hot["C1"], hot["C2"], names, inlined, interp, sidethread, walked
		if (checked < 10) { print "fewer than 10 nmethods in the perf map"; bad++ }
		if (!hot["C1"] || !hot["C2"]) { print "not both C1 and C2"; bad++ }
		split("fib shapes area streams square work", want, " ")
		for (i in want) if (!(want[i] in named)) { printf "no nmethod of Hot.%s\n", want[i]; bad++ }
		if (!inlined) { print "square() inlined nowhere"; bad++ }
		if (interp != 1) { print "no interpreter blob"; bad++ }
		if (side == "" || !sidethread) { printf "side thread %s not among the Java threads\n", side; bad++ }
		if (!walked) { print "the sleeper thread was never walked to its entry"; bad++ }
		exit bad ? 1 : 0
	}' "$out/probe1" "$out/perf.map" "$out/probe2" >"$out/check" || fail "$n: $(cat "$out/check")"
	echo "hotspot-tables: $n ($(sed -n 's/^jvm //p' "$out/probe2" | cut -d' ' -f1)): $(tail -n1 "$out/check")"
}

for home; do
	check_jdk "$home"
done
