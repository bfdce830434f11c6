#!/bin/sh
# A profile whose user-space samples mostly end in code without a function name (shown
# libhot.so+0xADDR) says how to get names, once: the program's work is in a static function of a
# shared library built here and stripped, not the distribution's, so record (and a view of a
# perf.data, whose names are looked up when it is read) say it has no symbols: build it with -g
# and keep them, or give hotstack a debug file (its build-id path only when it has a build-id,
# never a placeholder); a pprof keeps the names it was written with, so its views say nothing.
# The same library unstripped has names, and no warning. And the summary's grammar: "1 sample
# in 1 stack".
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v cc >/dev/null || skip "no C compiler"
command -v strip >/dev/null || skip "no strip"

cat >"$dir/hot.c" <<'EOF'
#include <time.h>
static volatile unsigned long sink;
/* static: named only in .symtab, which strip removes; run() stays in .dynsym */
__attribute__((noinline)) static void crunch(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i * i;
}
void run(double seconds)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		crunch();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}
EOF
cat >"$dir/main.c" <<'EOF'
#include <stdlib.h>
void run(double seconds);
int main(int argc, char **argv)
{
	run(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
EOF
mkdir "$dir/stripped" "$dir/named" "$dir/nobid"
for d in stripped named nobid; do
	bid=
	[ "$d" != nobid ] || bid=-Wl,--build-id=none
	cc -O1 -g -fPIC -shared $bid -o "$dir/$d/libhot.so" "$dir/hot.c" || fail "cannot build libhot.so"
	cc -O1 -o "$dir/$d/main" "$dir/main.c" -L"$dir/$d" -lhot -Wl,-rpath,"$dir/$d" || fail "cannot build main"
done
strip "$dir/stripped/libhot.so" "$dir/nobid/libhot.so"

own="[0-9]+% of the user-space samples are in code without function names, [0-9]+% in $dir/stripped/libhot.so, which has no symbols \\(stripped\\?\\): build it with -g and keep its symbols, or give hotstack a debug file for it \\("
warning="^hotstack: warning: ${own}at /usr/lib/debug/.build-id/[0-9a-f]{2}/[0-9a-f]+\\.debug, where its .gnu_debuglink says, or under --symfs DIR\\)$"

"$HOTSTACK" record -o "$dir/s.pb.gz" -o "$dir/s.folded" -- "$dir/stripped/main" 1.5 2>"$dir/s.err" ||
	fail "record failed: $(cat "$dir/s.err")"
grep -qE '(^|;)libhot\.so\+0x[0-9a-f]+ [0-9]+$' "$dir/s.folded" ||
	fail "the stripped library's frames are not libhot.so+0xADDR: $(head -3 "$dir/s.folded")"
grep -qE "$warning" "$dir/s.err" || fail "record did not say how to get names: $(cat "$dir/s.err")
$(sort -t' ' -k2 -nr "$dir/s.folded" | head -n 5)"
[ "$(grep -c 'without function names' "$dir/s.err")" = 1 ] || fail "said more than once: $(cat "$dir/s.err")"
# the share is most of the samples in user space
share=$(grep -oE 'warning: [0-9]+%' "$dir/s.err" | grep -oE '[0-9]+')
[ "$share" -gt 50 ] || fail "a share of $share% was warned about"
if grep -qE "apt install|dpkg -S|DEBUGINFOD_URLS" "$dir/s.err"; then
	fail "a library built here was given the distribution's advice: $(cat "$dir/s.err")"
fi
# a view of the pprof says nothing: its names are the ones it was written with
"$HOTSTACK" report "$dir/s.pb.gz" >/dev/null 2>"$dir/r.err" || fail "report failed: $(cat "$dir/r.err")"
"$HOTSTACK" flame "$dir/s.pb.gz" -o "$dir/s.svg" 2>>"$dir/r.err" || fail "flame failed: $(cat "$dir/r.err")"
if grep -q 'without function names' "$dir/r.err"; then
	fail "a view of a pprof gave advice that cannot add names to it: $(cat "$dir/r.err")"
fi
# without a build-id: no build-id path, and no placeholder for one
"$HOTSTACK" record -o "$dir/b.folded" -- "$dir/nobid/main" 1.5 2>"$dir/b.err" || fail "record failed: $(cat "$dir/b.err")"
grep -qE "^hotstack: warning: $(echo "$own" | sed "s|/stripped/|/nobid/|")where its .gnu_debuglink says, or under --symfs DIR\\)$" "$dir/b.err" ||
	fail "without a build-id: $(cat "$dir/b.err")
$(sort -t' ' -k2 -nr "$dir/b.folded" | head -n 5)"
if grep -qE "build-id|xx|yyyy" "$dir/b.err"; then fail "a build-id path without a build-id: $(cat "$dir/b.err")"; fi
# a perf.data is named when it is read: its views say it (when perf is here to write one)
if command -v perf >/dev/null && perf record -q -o "$dir/s.data" -- "$dir/stripped/main" 1 >/dev/null 2>&1; then
	"$HOTSTACK" report "$dir/s.data" >/dev/null 2>"$dir/p.err" || fail "report of perf.data failed: $(cat "$dir/p.err")"
	grep -qE "$warning" "$dir/p.err" || fail "report of a perf.data did not say how to get names: $(cat "$dir/p.err")"
fi

# the same library with its symbols: named, no warning
"$HOTSTACK" record -o "$dir/n.folded" -- "$dir/named/main" 1.5 2>"$dir/n.err" || fail "record failed: $(cat "$dir/n.err")"
grep -q 'crunch' "$dir/n.folded" || fail "crunch not named in the unstripped library: $(head -3 "$dir/n.folded")"
if grep -q 'without function names' "$dir/n.err"; then fail "warned with names present: $(cat "$dir/n.err")"; fi

# one sample: "1 sample in 1 stack". As root, exactly one: a tracepoint's one hit, Python's
# getsid(0) (a tracepoint counts every hit, where the kernel's task-clock timer loses time on a
# busy machine, so that 1.2 s of CPU time need not make one sample of a second). Otherwise a
# task-clock sample a CPU second in 1.2 s of CPU time: one, or on a busy machine none.
if [ "$(id -u)" = 0 ]; then
	expect_status 0 "$HOTSTACK" record -g none -e syscalls:sys_enter_getsid -o "$dir/one.folded" -- \
		/usr/bin/python3 -c 'import os; os.getsid(0)'
	n=$(awk '{ s += $NF } END { print s + 0 }' "$dir/one.folded")
	[ "$n" = 1 ] || fail "$n samples of one getsid: $(cat "$dir/.err")"
else
	burn='BEGIN {
	while (1) {
		getline l < "/proc/self/stat"; close("/proc/self/stat")
		sub(/.*\) /, "", l); split(l, f, " ")
		if (f[12] + f[13] >= 1.2 * hz) exit
		for (i = 0; i < 100000; i++) x += i
	}
}'
	expect_status 0 "$HOTSTACK" record -g none -e task-clock -c 1000000000 -o "$dir/one.folded" -- \
		awk -v hz="$(getconf CLK_TCK)" "$burn"
	n=$(awk '{ s += $NF } END { print s + 0 }' "$dir/one.folded")
	[ "$n" -le 1 ] || fail "$n task-clock samples of a second in 1.2 s of CPU time: $(cat "$dir/.err")"
	[ "$n" = 1 ] || exit 0
fi
expect_stderr "^hotstack: 1 sample in 1 stack$"
exit 0
