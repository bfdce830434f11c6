#!/bin/sh
# Code built without unwind tables keeps its CFI in .debug_frame; split into a separate debug
# file (found through .gnu_debuglink, its CRC checked), it still unwinds completely. Without the
# debug file, the stacks end honestly in [no unwind info] rather than in made-up frames. The
# compiled tables are cached (a cache directory of the test's own): the debug file that comes,
# goes or changes makes the cached table stale each time.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v cc >/dev/null 2>&1 || skip "no C compiler"
command -v objcopy >/dev/null 2>&1 || skip "no objcopy"
mkdir -m 700 "$dir/cache"
export HOTSTACK_CACHE_DIR="$dir/cache"

cat >"$dir/df.c" <<'C'
#include <time.h>
static volatile unsigned long sink;
__attribute__((noipa)) void work(void) { for (int i = 0; i < 200000; i++) sink += i; }
__attribute__((noipa)) int rec(int d)
{
	volatile char buf[184];
	buf[d % 184] = (char)d;
	if (d > 0)
		return rec(d - 1) + buf[3];
	work();
	return buf[0];
}
int main(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rec(20);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 1);
	return 0;
}
C
cc -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables -g -o "$dir/df.full" "$dir/df.c"
readelf -S "$dir/df.full" | grep -q debug_frame || skip "this compiler put no .debug_frame in the binary"
objcopy --only-keep-debug "$dir/df.full" "$dir/df.debug"
objcopy --strip-debug --add-gnu-debuglink="$dir/df.debug" "$dir/df.full" "$dir/df"
if readelf -S "$dir/df" | grep -q '\.debug_frame'; then fail "the stripped binary still has .debug_frame"; fi

complete_pct() { # folded -> percentage of the samples in work() (the user leaf; interrupts above
	# it are left out) whose chain is exactly main;rec...;work
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); while (k > 1 && f[k] ~ /_\[k\]$/) k--
		if (f[k] != "work") next
		t += n; ok = 0
		for (i = 1; i <= k; i++) if (f[i] == "main") { ok = (k > i + 1); for (j = i + 1; j < k; j++) if (f[j] != "rec") ok = 0; break }
		if (ok) g += n } END { printf "%d\n", t ? 100 * g / t : 0 }' "$1"
}

"$HOTSTACK" record -q -g dwarf -o "$dir/with.folded" -- "$dir/df" || fail "record failed"
with=$(complete_pct "$dir/with.folded")
echo "with the debug file: $with% of the samples have the exact chain"
[ "$with" -ge 95 ] || fail "only $with% complete with the debug file: $(grep -v ';main;rec;' "$dir/with.folded" | head -n 5)"

# a debug file whose CRC does not match is not used
cp "$dir/df.debug" "$dir/df.debug.good"
printf 'x' >>"$dir/df.debug"
"$HOTSTACK" record -q -g dwarf -o "$dir/bad.folded" -- "$dir/df" || fail "record failed"
grep -q "main;rec" "$dir/bad.folded" && fail "a debug file with the wrong CRC was used"
cp "$dir/df.debug.good" "$dir/df.debug"

rm "$dir/df.debug"
"$HOTSTACK" record -q -g dwarf -o "$dir/without.folded" -- "$dir/df" || fail "record failed"
grep -q "\[no unwind info\]" "$dir/without.folded" || fail "no [no unwind info] ending without CFI: $(head -3 "$dir/without.folded")"
grep -q "main;rec" "$dir/without.folded" && fail "frames without CFI were made up in dwarf mode"

# the debug file back, after a table without it was cached: its CFI is used again
mv "$dir/df.debug.good" "$dir/df.debug"
"$HOTSTACK" record -q -g dwarf -o "$dir/again.folded" -- "$dir/df" || fail "record failed"
again=$(complete_pct "$dir/again.folded")
[ "$again" -ge 95 ] || fail "only $again% complete with the debug file back: a table cached without it was used"
echo "with the debug file back: $again%"
exit 0
