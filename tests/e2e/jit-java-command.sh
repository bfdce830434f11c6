#!/bin/sh
# A JVM run as the recorded command (record -- java ...), with no JVM flag and no option: it has
# exited when the recording ends, so its perf map must have been asked for while it ran. Its hot
# Java methods are named in most samples and few end in unnamed JIT code. A JVM that cannot be
# attached to says so in one line with what to do, and what that line advises
# (-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit) names its methods. The Java frame
# reader is left out (--no-java): this is the perf map, what runs where it cannot.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_spin_java

# shares NAME: of the samples in $dir/NAME.folded, "TOTAL NAMED ANON": those with one of Spin's
# methods as a frame, and those whose leaf is JIT code nothing named
shares() {
	awk '
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		total += n
		if (line ~ /;double Spin\.(work|middle)\(int\)_\[j\]/) named += n
		if (line ~ /;\[anon\]_\[j\]$/) anon += n
	}
	END { printf "%d %d %d\n", total, named, anon }' "$dir/$1.folded"
}

# -- no flag: named while it ran (the JVM writes /tmp/perf-PID.map, removed by the EXIT trap)
"$HOTSTACK" record --no-java -v -o "$dir/cmd.folded" -- "$note_pid" java -cp "$dir" Spin 3 >"$dir/cmd.out" 2>"$dir/cmd.err" ||
	fail "record -- java: $(cat "$dir/cmd.err")"
read -r total named anon <<EOF
$(shares cmd)
EOF
echo "jit-java-command: $total samples, $named with Spin's methods named, $anon ending in unnamed JIT code"
grep "JVM" "$dir/cmd.err" || true
[ "$total" -ge 300 ] || fail "only $total samples of a 3 s JVM"
[ $((named * 100)) -ge $((total * 60)) ] ||
	fail "only $named of $total samples name Spin's methods: $(sort -t' ' -k2 -nr "$dir/cmd.folded" | head -3)"
[ $((anon * 100)) -le $((total * 15)) ] ||
	fail "$anon of $total samples end in unnamed JIT code: $(grep 'anon' "$dir/cmd.err" "$dir/cmd.folded" | head -3)"
grep -q "JVM [0-9]* wrote its perf map" "$dir/cmd.err" || fail "no perf map asked for: $(cat "$dir/cmd.err")"

# -- attach disabled: unnamed, and one line says why and what to do
"$HOTSTACK" record --no-java -o "$dir/off.folded" -- "$note_pid" java -XX:+DisableAttachMechanism -cp "$dir" Spin 2 \
	>"$dir/off.out" 2>"$dir/off.err" || fail "record -- java without attach: $(cat "$dir/off.err")"
read -r total named anon <<EOF
$(shares off)
EOF
[ "$named" -eq 0 ] || fail "Java names without a perf map: $(grep 'Spin\.' "$dir/off.folded" | head -2)"
[ $((anon * 100)) -ge $((total * 50)) ] || fail "attach disabled: only $anon of $total samples in unnamed JIT code"
[ "$(grep -c 'JVM' "$dir/off.err")" -eq 1 ] || fail "not one line about the JVM: $(cat "$dir/off.err")"
grep -q "^hotstack: warning: cannot get Java method names from JVM [0-9]*: attach is disabled .*[0-9]% of its samples.*-XX:+DumpPerfMapAtExit" \
	"$dir/off.err" || fail "attach disabled: no line that says why and what to do: $(cat "$dir/off.err")"
echo "jit-java-command: $(grep JVM "$dir/off.err")"

# -- what the line advises: the JVM writes its map as it exits, and its methods are named
"$HOTSTACK" record --no-java -o "$dir/exit.folded" -- "$note_pid" java -XX:+DisableAttachMechanism \
	-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$dir" Spin 2 >"$dir/exit.out" 2>"$dir/exit.err" || fail "record -- java, map at exit: $(cat "$dir/exit.err")"
read -r total named anon <<EOF
$(shares exit)
EOF
[ $((named * 100)) -ge $((total * 60)) ] ||
	fail "-XX:+DumpPerfMapAtExit: only $named of $total samples name Spin's methods"
if grep -q "JVM" "$dir/exit.err"; then fail "a line about a JVM whose methods are named: $(cat "$dir/exit.err")"; fi
echo "jit-java-command: with -XX:+DumpPerfMapAtExit, $named of $total samples name Spin's methods"
exit 0
