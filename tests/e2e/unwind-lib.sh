# shellcheck shell=sh
# shellcheck disable=SC2154 # dir and test_name are lib.sh's, sourced before this file
# Shared by the unwind-*.sh tests (sourced after lib.sh): recording a workload into folded
# stacks, and awk functions to read them. A folded line is "comm;root;...;leaf COUNT".

# record NAME [OPTION...] -- COMMAND...: records into $dir/NAME.folded, or fails with stderr.
record() {
	name=$1
	shift
	"$HOTSTACK" record -q -o "$dir/$name.folded" "$@" >"$dir/$name.out" 2>"$dir/$name.err" ||
		fail "hotstack record $* failed: $(cat "$dir/$name.err")"
	[ -s "$dir/$name.folded" ] || fail "hotstack record $*: no samples"
}

# awk functions, to put before a test's own awk program:
#   parse()       splits the current line: comm f[1], frames f[2] (root) .. f[k] (leaf), count n
#   user_leaf()   there is a frame, and the leaf is user code, not a kernel frame
#   main_at()     the index of the first "main" frame, 0 when none
#   chain(i)      the frames from f[i] to the leaf, ";"-joined, each through base()
#   base(name)    a C++ name without mangling or parameters (_Z14compare_blocksPKhS0_m and
#                 "compare_blocks(unsigned char const*, ...)" are both compare_blocks)
#   pseudo(name)  a pseudo frame that ends an unfinished stack: [truncated: stack copy],
#                 [no unwind info], [unmapped], [depth limit], [unknown] ... (a bracketed name
#                 without a dot; not [signal] nor [vdso], nor a module like [libc.so.6])
#   has_pseudo()  any frame of the line is pseudo()
#   squeeze(s)    runs of one frame written name*N, for printing deep chains
#   pct(a, b)     a of b as a percentage with two decimals
# shellcheck disable=SC2016 # awk's $ fields, not the shell's
unwind_awk='
function parse() {
	n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";")
}
function user_leaf() { return k >= 2 && f[k] !~ /_\[k\]$/ }
function main_at(   i) {
	for (i = 2; i <= k; i++) if (f[i] == "main") return i
	return 0
}
function base(s,   len) {
	if (s ~ /^_Z[0-9]+[A-Za-z_]/) {
		s = substr(s, 3); len = s + 0; sub(/^[0-9]+/, "", s); s = substr(s, 1, len)
	}
	sub(/\(.*/, "", s)
	return s
}
function chain(i,   s) {
	s = base(f[i])
	for (i++; i <= k; i++) s = s ";" base(f[i])
	return s
}
function pseudo(s) { return s ~ /^\[[^].]*\]$/ && s != "[signal]" && s != "[vdso]" && s != "[vsyscall]" }
function has_pseudo(   i) {
	for (i = 2; i <= k; i++) if (pseudo(f[i])) return 1
	return 0
}
function squeeze(s,   a, m, i, j, out) {
	m = split(s, a, ";"); out = ""
	for (i = 1; i <= m; i = j) {
		for (j = i + 1; j <= m && a[j] == a[i]; j++) ;
		out = out (out == "" ? "" : ";") a[i] (j - i > 1 ? "*" (j - i) : "")
	}
	return out
}
function pct(a, b) { return b ? sprintf("%.2f%%", 100 * a / b) : "n/a" }
'

# worst FILE: the lines of FILE ("COUNT folded-stack"), most samples first, at most 10, squeezed.
worst() {
	sort -nr "$1" | head -n 10 | awk "$unwind_awk"'{ c = $1; sub(/^[0-9]+ /, ""); print "  " c " " squeeze($0) }'
}
