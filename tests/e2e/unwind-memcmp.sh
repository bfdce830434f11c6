#!/bin/sh
# DWARF unwinding out of glibc's hand-written assembly: memcmp (a C++ program, -O2
# -fomit-frame-pointer) spends its time in glibc's memcmp (__memcmp_avx2_movbe,
# __memcmp_evex_movbe, ... or "libc.so.6+0xADDR" where only .dynsym names libc's code) called as
# main -> scan -> compare_blocks -> memcmp. With the default call-graph mode at least 95% of the
# samples in libc have exactly main;scan;compare_blocks;<libc leaf> from main down, and libc
# has at least 90% of the user-mode samples (the premise). -g fp is measured for comparison.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
[ -x "$WORKLOADS/memcmp" ] || skip "the memcmp workload was not built (no C++ compiler: apt-get install g++)"
require_perf_events

# in_libc(name): a frame in glibc's memcmp, by name or as libc without names (not memcmp@plt)
libc_awk='
function in_libc(s) { return s ~ /^(__)?memcmp/ && s !~ /@plt$/ || s ~ /^libc\.so\.6\+0x[0-9a-f]+$/ }
'

# check NAME: "user in_libc good percentage" of $dir/NAME.folded; libc samples without the
# chain into $dir/NAME.bad
check() {
	awk "$unwind_awk$libc_awk"'
	{
		parse()
		if (!user_leaf()) next
		user += n
		if (!in_libc(f[k])) next
		libc += n
		m = main_at()
		if (m > 0 && k - m == 3 && chain(m + 1) ~ /^scan;compare_blocks;/) good += n
		else print n, line > bad
	}
	END { printf "%d %d %d %s\n", user, libc, good, pct(good, libc) }' bad="$dir/$1.bad" "$dir/$1.folded"
}

record default -- "$WORKLOADS/memcmp" 2
read -r user libc good percent <<EOF2
$(check default)
EOF2
record fp -g fp -- "$WORKLOADS/memcmp" 1
read -r fp_user fp_libc fp_good fp_percent <<EOF2
$(check fp)
EOF2
leaves=$(awk "$unwind_awk$libc_awk"'{ parse(); if (user_leaf() && in_libc(f[k])) s[f[k]] += n }
	END { for (l in s) { printf "%s%s %d", sep, l, s[l]; sep = ", " } }' "$dir/default.folded")
echo "unwind-memcmp: default mode: $percent ($good of $libc samples in libc) have main;scan;compare_blocks;<libc>; libc leaves: $leaves; $libc of $user user-mode samples in libc"
echo "unwind-memcmp: -g fp: $fp_percent ($fp_good of $fp_libc samples in libc; $fp_libc of $fp_user user-mode samples in libc)"

[ "$user" -ge 200 ] || fail "only $user user-mode samples in 2 s at 999 Hz"
[ $((libc * 100)) -ge $((user * 90)) ] ||
	fail "only $libc of $user user-mode samples in libc's memcmp: $(awk '{ print $NF, $0 }' "$dir/default.folded" | sort -nr | head -n 5)"
[ $((good * 100)) -ge $((libc * 95)) ] ||
	fail "only $good of $libc samples in libc have main;scan;compare_blocks above; the others, most frequent first:
$(worst "$dir/default.bad")"
exit 0
