# shellcheck shell=sh
# shellcheck disable=SC2154 # dir and test_name are lib.sh's, sourced before this file
# Shared by the jit-node-*.sh tests (sourced after lib.sh): a recursive JavaScript program, and
# the check of a recording of it.
command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install nodejs)"
require_perf_events

# fib recurses about 25 deep under outer, called from the script's top level
cat >"$dir/rec.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function outer() { let s = 0; for (let i = 0; i < 20; i++) s += fib(24); return s; }
const end = Date.now() + 1800;
let total = 0;
while (Date.now() < end) total += outer();
if (total < 0) console.log(total);
JS

# check_node NAME: in NAME.folded, the samples with a JavaScript fib frame (named as V8 names
# it: "JS:*fib /path/rec.js:1:13", tiers ~ ^ + *); those of them whose stack continues below the
# JavaScript frames through V8's entry (Builtins_JSEntry) and node's native frames down to the
# process's start (_start, __libc_start_call_main, node::Start: Debian's node reaches node::Start
# by a tail jump from main, so main itself is never on the stack); the deepest run of fib frames.
check_node() {
	awk '
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		total += n
		fibs = 0; run = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /^JS:[~^+*]?fib .*rec\.js:[0-9:]*_\[j\]$/) { fibs++; run++; if (run > deepest) deepest = run }
			else run = 0
		}
		if (!fibs) next
		js += n
		if (line ~ /;_start;__libc_start_main;__libc_start_call_main;(main;)?node::Start\(int, char\*\*\);/ &&
		    line ~ /;Builtins_JSEntry;/ && line !~ /;\[(unknown|no unwind info|unmapped|truncated: stack copy)\]/)
			complete += n
		else
			print n " " substr(line, 1, 400) > "/dev/stderr"
	}
	END { printf "%d %d %d %d\n", total, js, complete, deepest }' "$dir/$1.folded"
}

# expect_node NAME: at least half the samples run fib, 98% of those reach the process's start
# (100% in practice; V8's optimized code pops rbp in its epilogue and its unwinding records still
# say rbp is saved: before the unwinder took such a slot below the stack pointer as dead, 4% of
# the samples stopped two frames into fib)
expect_node() {
	read -r total js complete deepest <<EOF2
$(check_node "$1" 2>"$dir/$1.bad")
EOF2
	echo "$test_name: $total samples, $js with JavaScript fib frames, $complete of them down to node::Start, up to $deepest fib frames deep"
	[ "$total" -ge 200 ] || fail "only $total samples"
	[ $((js * 2)) -ge "$total" ] || fail "only $js of $total samples have named fib frames: $(sort -t' ' -k2 -nr "$dir/$1.folded" | head -3 | cut -c1-600)"
	[ $((complete * 100)) -ge $((js * 98)) ] || fail "only $complete of $js stacks reach node::Start: $(sort -nr "$dir/$1.bad" | head -3)"
	[ "$deepest" -ge 10 ] || fail "at most $deepest fib frames in a row: the recursion is not walked"
}
