#!/bin/sh
# An always-on recording under churn: record -a -g dwarf --switch-output=1s while short-lived
# processes come and go: toy JITs that describe their code in jitdump files and exit, and
# programs run from files that are removed once they end. At each period's end, what was kept of
# the processes that exited (their JIT code, names and unwinding information) and of the files no
# process maps any more (symbols, DWARF, unwinding tables) is forgotten, and what is left is
# packed again. Asserted in every period after the first in which a long-lived toy JIT ran: its
# generated code is all named (jit_alpha, jit_beta) and unwound by its own CFI into run_phase, as
# before any forgetting; and the programs from the files that came and went (a thread each,
# spin-0) are named (spin_thread_0): each new file is read when it is mapped.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$WORKLOADS/toy-jit" ] || skip "the toy JIT is built on x86-64 only"
require_perf_events

mkdir "$dir/p" "$dir/long" "$dir/short"
cp "$WORKLOADS/toy-jit" "$dir/long/toy-long"
touch "$dir/churning"
(
	cd "$dir/short"
	i=0
	while [ -e "$dir/churning" ]; do
		i=$((i + 1))
		"$note_pid" "$WORKLOADS/toy-jit" 0.02 >/dev/null 2>&1 || true
		cp "$WORKLOADS/threads" "prog$i"
		"./prog$i" 1 0.1 >/dev/null 2>&1 || true
		rm -f "prog$i" jit-*.dump
	done
) &
churn=$!
(cd "$dir/long" && exec "$note_pid" ./toy-long 1.5 >"$dir/long.out" 2>&1) &
long=$!
trap 'rm -f "$dir/churning"; kill $long 2>/dev/null || true; wait 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT

"$HOTSTACK" record -q -a -g dwarf -F 499 --switch-output=1s -d 5 -o "$dir/p/p.folded" 2>"$dir/rec.err" ||
	fail "record -a -g dwarf --switch-output=1s failed: $(cat "$dir/rec.err")"
rm -f "$dir/churning"
wait "$churn" || true
wait "$long" || fail "the long-lived toy JIT failed: $(cat "$dir/long.out")"

# per period: the long JIT's samples in generated code, named, and under run_phase; the
# programs' samples, and those in spin_thread_0
periods=0
checked=0
progs=0
for f in $(find "$dir/p" -name 'p.*.folded' | sort); do
	periods=$((periods + 1))
	read -r jit named under prog spin <<EOF
$(awk '
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, fr, ";")
		if (fr[1] == "spin-0") { # the thread of a program from a new file
			prog += n
			if (line ~ /;spin_thread_0/) spin += n
			next
		}
		if (fr[1] != "toy-long") next
		for (i = 2; i <= k; i++) {
			if (fr[i] !~ /_\[j\]$/) continue
			jit += n
			if (fr[i] ~ /^jit_(alpha|beta)/) named += n
			if (fr[i - 1] ~ /^run_phase/) under += n
			break
		}
	}
	END { printf "%d %d %d %d %d\n", jit, named, under, prog, spin }' "$f")
EOF
	echo "record-churn: ${f##*/}: toy-long: $jit samples in JIT code, $named named, $under under run_phase; programs from new files: $prog samples, $spin in spin_thread_0"
	if [ "$periods" -gt 1 ] && [ "$jit" -ge 30 ]; then
		checked=$((checked + 1))
		[ "$named" -eq "$jit" ] || fail "${f##*/}: $((jit - named)) of $jit samples in the long JIT's code are unnamed"
		[ $((under * 100)) -ge $((jit * 90)) ] ||
			fail "${f##*/}: only $under of $jit samples in the long JIT's code are under run_phase (its CFI lost?)"
	fi
	if [ "$periods" -gt 1 ] && [ "$prog" -ge 20 ]; then
		progs=$((progs + 1))
		[ $((spin * 100)) -ge $((prog * 50)) ] ||
			fail "${f##*/}: only $spin of $prog samples of the programs from new files are in spin_thread_0"
	fi
done
[ "$periods" -ge 4 ] || fail "5 s at --switch-output=1s wrote $periods periods"
[ "$checked" -ge 2 ] || fail "the long toy JIT had enough samples in only $checked periods after the first"
[ "$progs" -ge 2 ] || fail "the programs from new files had enough samples in only $progs periods after the first"
echo "record-churn: OK ($periods periods; the long JIT checked in $checked, the new files in $progs)"
