#!/bin/sh
# A profile whose user-space samples mostly end in code without a function name (shown
# [libhot.so]) says how to get names: record, and the views reading the recording, print one
# warning naming the library, its share, and where its debug symbols would come from (the
# distribution's -dbgsym package, the build-id path, DEBUGINFOD_URLS). The program's work is in
# a static function of a shared library built here and stripped; the same library unstripped
# has names, and no warning.
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
mkdir "$dir/stripped" "$dir/named"
for d in stripped named; do
	cc -O1 -g -fPIC -shared -o "$dir/$d/libhot.so" "$dir/hot.c" || fail "cannot build libhot.so"
	cc -O1 -o "$dir/$d/main" "$dir/main.c" -L"$dir/$d" -lhot -Wl,-rpath,"$dir/$d" || fail "cannot build main"
done
strip "$dir/stripped/libhot.so"

warning="^hotstack: warning: [0-9]+% of the user-space samples are in code without function names, [0-9]+% in $dir/stripped/libhot.so: install its debug symbols \\(Debian: 'apt install PACKAGE-dbgsym' from the debug archive, PACKAGE as 'dpkg -S $dir/stripped/libhot.so' names it; or a debug file at /usr/lib/debug/.build-id/[0-9a-fx]{2}/[0-9a-fy]+\\.debug\\), or set DEBUGINFOD_URLS"

"$HOTSTACK" record -o "$dir/s.pb.gz" -o "$dir/s.folded" -- "$dir/stripped/main" 1.5 2>"$dir/s.err" ||
	fail "record failed: $(cat "$dir/s.err")"
grep -q '\[libhot.so\]' "$dir/s.folded" || fail "the stripped library's frames are not [libhot.so]: $(head -3 "$dir/s.folded")"
grep -qE "$warning" "$dir/s.err" || fail "record did not say how to get names: $(cat "$dir/s.err")"
[ "$(grep -c 'without function names' "$dir/s.err")" = 1 ] || fail "said more than once: $(cat "$dir/s.err")"
# the share is most of the samples in user space
share=$(grep -oE 'warning: [0-9]+%' "$dir/s.err" | grep -oE '[0-9]+')
[ "$share" -gt 50 ] || fail "a share of $share% was warned about"
# a view of the recording says it too
"$HOTSTACK" report "$dir/s.pb.gz" >/dev/null 2>"$dir/r.err" || fail "report failed: $(cat "$dir/r.err")"
grep -qE "$warning" "$dir/r.err" || fail "report did not say how to get names: $(cat "$dir/r.err")"

# the same library with its symbols: named, no warning
"$HOTSTACK" record -o "$dir/n.folded" -- "$dir/named/main" 1.5 2>"$dir/n.err" || fail "record failed: $(cat "$dir/n.err")"
grep -q 'crunch' "$dir/n.folded" || fail "crunch not named in the unstripped library: $(head -3 "$dir/n.folded")"
if grep -q 'without function names' "$dir/n.err"; then fail "warned with names present: $(cat "$dir/n.err")"; fi
exit 0
