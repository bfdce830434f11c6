#!/bin/sh
# A toy JIT (tests/workloads/toy-jit.c) generates functions into anonymous executable memory and
# describes them with libhotstack-jit: jit_alpha at address A, then moved to B (CODE_MOVE), then
# jit_beta generated at A (a re-JIT of the same address) — three phases of equal work, each with
# source lines and call frame information. hotstack record reads the jitdump file natively while
# recording. Asserted, from the samples in generated code:
#  - every one is named, and the names split as the phases do: jit_alpha (at A, then at B) about
#    2/3, jit_beta about 1/3 (time-aware lookups: A resolves to jit_alpha before the re-JIT and to
#    jit_beta after; B to jit_alpha after the move) — with wrong answers A would be all jit_beta
#    (2/3) or B unnamed;
#  - the generated code keeps no frame pointer, so only its CFI (CODE_UNWINDING_INFO) finds its
#    caller: at least 95% of them are directly under run_phase, whose frame a frame-pointer step
#    would skip;
#  - --lines shows the lines the jitdump gives: jit_alpha:toy.jit:11, jit_beta:toy.jit:21;
#  - the same with the TSC as the file's clock (HSJIT_ARCH_TIMESTAMP).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$WORKLOADS/toy-jit" ] || skip "the toy JIT is built on x86-64 only"
require_perf_events

# check NAME: the JIT samples of NAME.folded, split by name and by caller
check() {
	awk '
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		for (i = 2; i <= k; i++) {
			if (f[i] !~ /_\[j\]$/) continue
			jit += n
			if (f[i] ~ /^jit_alpha/) alpha += n
			else if (f[i] ~ /^jit_beta/) beta += n
			else { other += n; print "unnamed JIT frame: " f[i] > "/dev/stderr" }
			if (f[i - 1] ~ /^run_phase/) under += n
			break
		}
	}
	END { printf "%d %d %d %d %d\n", jit, alpha, beta, other, under }' "$dir/$1.folded"
}

run() {
	name=$1
	shift
	(cd "$dir" && env "$@" "$HOTSTACK" record -q -o "$dir/$name.folded" -- "$WORKLOADS/toy-jit" 0.7 \
		>"$dir/$name.out" 2>"$dir/$name.err") || fail "record $name: $(cat "$dir/$name.err")"
	read -r jit alpha beta other under <<EOF
$(check "$name" 2>"$dir/$name.check")
EOF
	echo "jit-toy: $name: $jit JIT samples: jit_alpha $alpha, jit_beta $beta, unnamed $other, under run_phase $under"
	[ "$jit" -ge 300 ] || fail "$name: only $jit samples in generated code"
	[ "$other" -eq 0 ] || fail "$name: $other samples in unnamed JIT code: $(head -3 "$dir/$name.check")"
	# 2/3 and 1/3, give or take
	[ $((alpha * 100)) -ge $((jit * 55)) ] && [ $((alpha * 100)) -le $((jit * 78)) ] ||
		fail "$name: jit_alpha has $alpha of $jit samples, expected about 2/3"
	[ $((beta * 100)) -ge $((jit * 22)) ] && [ $((beta * 100)) -le $((jit * 45)) ] ||
		fail "$name: jit_beta has $beta of $jit samples, expected about 1/3"
	[ $((under * 100)) -ge $((jit * 95)) ] ||
		fail "$name: only $under of $jit JIT frames are under run_phase (CFI not used?): $(sort -t' ' -k2 -nr "$dir/$name.folded" | head -3)"
	[ -z "$(cat "$dir/$name.err")" ] || fail "$name: unexpected messages: $(cat "$dir/$name.err")"
}

run monotonic TOYJIT_TSC=0
run tsc TOYJIT_TSC=1

(cd "$dir" && "$HOTSTACK" record -q --lines -o "$dir/lines.folded" -- "$WORKLOADS/toy-jit" 0.3 >/dev/null 2>"$dir/lines.err") ||
	fail "record --lines: $(cat "$dir/lines.err")"
grep -q ';jit_alpha:toy.jit:11_\[j\] ' "$dir/lines.folded" || fail "no jit_alpha:toy.jit:11: $(cat "$dir/lines.folded")"
grep -q ';jit_beta:toy.jit:21_\[j\] ' "$dir/lines.folded" || fail "no jit_beta:toy.jit:21: $(cat "$dir/lines.folded")"
echo "jit-toy: source lines from the jitdump"
exit 0
