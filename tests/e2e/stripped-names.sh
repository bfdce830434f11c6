#!/bin/sh
# Stripped code is named per function: a shared library built here and stripped
# (strip --strip-all) has two hot static functions, mix_a and mix_b, that only its .eh_frame
# knows of, and a hot exported one, spin_exported, that its .dynsym names. The report shows
# spin_exported by name and the two others as libsx.so+0xADDR rows of their own, each ADDR the
# start of an FDE (readelf --debug-dump=frames) and the address that nm gives mix_a and mix_b
# in the unstripped library (addr2line -f -e takes it back to the name). Then xz compressing
# random bytes, where the distribution's liblzma is stripped and has no debug file here: its
# functions are rows of their own, and the advice names the path dpkg knows the file by, its
# -dbgsym package, and the build-id path of its debug file.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v cc >/dev/null || skip "no C compiler"
for t in strip readelf nm addr2line; do command -v $t >/dev/null || skip "no $t (binutils)"; done

cat >"$dir/sx.c" <<'EOF'
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void mix_a(void)
{
	for (unsigned long i = 0; i < 400000; i++)
		sink += i * i;
}
__attribute__((noinline)) static void mix_b(void)
{
	for (unsigned long i = 0; i < 400000; i++)
		sink ^= i * 2654435761u;
}
__attribute__((noinline)) void spin_exported(void)
{
	for (unsigned long i = 0; i < 400000; i++)
		sink += i >> 3;
}
void run(double seconds)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		mix_a();
		mix_b();
		spin_exported();
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
cc -O1 -fPIC -shared -o "$dir/full.so" "$dir/sx.c" || fail "cannot build the library"
cp "$dir/full.so" "$dir/libsx.so"
strip --strip-all "$dir/libsx.so"
[ -z "$(nm "$dir/libsx.so" 2>/dev/null)" ] || fail "strip --strip-all left a .symtab"
cc -O1 -o "$dir/main" "$dir/main.c" -L"$dir" -lsx -Wl,-rpath,"$dir" || fail "cannot build main"

addr_of() { nm "$dir/full.so" | awk -v f="$1" '$3 == f { sub(/^0+/, "", $1); print $1 }'; }
a=$(addr_of mix_a)
b=$(addr_of mix_b)
[ -n "$a" ] && [ -n "$b" ] || fail "nm does not show mix_a and mix_b: $(nm "$dir/full.so")"
nm -D --defined-only "$dir/libsx.so" | grep -q ' T spin_exported$' || fail "spin_exported is not in .dynsym"
readelf --debug-dump=frames "$dir/libsx.so" | sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$dir/fde"
grep -qx "$a" "$dir/fde" && grep -qx "$b" "$dir/fde" || fail "no FDE starts at mix_a ($a) and mix_b ($b): $(cat "$dir/fde")"

"$HOTSTACK" record -o "$dir/s.pb.gz" -o "$dir/s.folded" -- "$dir/main" 2 2>"$dir/s.err" ||
	fail "record failed: $(cat "$dir/s.err")"
"$HOTSTACK" report "$dir/s.pb.gz" >"$dir/report" 2>"$dir/r.err" || fail "report failed: $(cat "$dir/r.err")"
# the leaves by self: the functions of the library as the report names them
awk '/^Top functions by self/ { t = 1; next } t && /^$/ { exit } t && $5 ~ /^(libsx\.so\+0x|spin_exported$)/ { print $5 }' \
	"$dir/report" >"$dir/rows"
grep -qx spin_exported "$dir/rows" || fail "the exported function is not named from .dynsym: $(cat "$dir/report")"
grep -qx "libsx.so+0x$a" "$dir/rows" || fail "mix_a is not libsx.so+0x$a: $(cat "$dir/report")"
grep -qx "libsx.so+0x$b" "$dir/rows" || fail "mix_b is not libsx.so+0x$b: $(cat "$dir/report")"
# every address name is an FDE's start, and addr2line names it from the unstripped copy
for r in $(grep '^libsx' "$dir/rows"); do
	off=${r#libsx.so+0x}
	grep -qx "$off" "$dir/fde" || fail "$r is no FDE's start: $(cat "$dir/fde")"
done
[ "$(addr2line -f -e "$dir/full.so" "0x$a" | head -n1)" = mix_a ] || fail "addr2line does not take 0x$a to mix_a"
[ "$(addr2line -f -e "$dir/full.so" "0x$b" | head -n1)" = mix_b ] || fail "addr2line does not take 0x$b to mix_b"
# the folded stacks too: no frame of the library is the whole file
if grep -q '\[libsx\.so\]' "$dir/s.folded"; then fail "a frame of the library is [libsx.so]: $(grep -m3 'libsx' "$dir/s.folded")"; fi
echo "stripped-names: $(grep -c . "$dir/rows") functions of libsx.so in the report: $(tr '\n' ' ' <"$dir/rows")"

# the distribution's stripped library: liblzma, under xz
command -v xz >/dev/null || exit 0
lz=$(ldd "$(command -v xz)" | awk '$1 ~ /^liblzma/ { print $3 }')
[ -n "$lz" ] || exit 0
lz=$(readlink -f "$lz")
case $lz in /usr/local/*) exit 0 ;; /usr/* | /lib*) ;; *) exit 0 ;; esac
if [ -n "$(nm "$lz" 2>/dev/null)" ]; then
	echo "stripped-names: $lz has a symbol table: its part not tried"
	exit 0
fi
bid=$(readelf -n "$lz" | awk '/Build ID/ { print $3 }')
if [ -n "$bid" ] && [ -e "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ]; then
	echo "stripped-names: $lz has a debug file here: its part not tried"
	exit 0
fi
head -c 4000000 /dev/urandom >"$dir/random"
"$HOTSTACK" record -o "$dir/xz.folded" -- xz -9 -T1 -c "$dir/random" >/dev/null 2>"$dir/xz.err" ||
	fail "record of xz failed: $(cat "$dir/xz.err")"
base=$(basename "$lz")
n=$(tr ';' '\n' <"$dir/xz.folded" | sed 's/ [0-9]*$//' | grep -E "^$(echo "$base" | sed 's/\./\\./g')\\+0x[0-9a-f]+$" | sort -u | wc -l)
[ "$n" -ge 2 ] || fail "$base is not named per function: $(sort -t' ' -k2 -nr "$dir/xz.folded" | head -n 3)"
grep -q 'without function names' "$dir/xz.err" ||
	fail "no advice for $base: $(cat "$dir/xz.err"); the leaves: $(awk '{ n = split($0, f, ";"); sub(/ [0-9]+$/, "", f[n])
		s[f[n]] += $NF } END { for (l in s) print s[l], l }' "$dir/xz.folded" | sort -nr | head -n 8 | tr '\n' ' ')"
if [ -n "$bid" ]; then
	grep -qF "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" "$dir/xz.err" ||
		fail "the advice has no build-id path: $(cat "$dir/xz.err")"
fi
grep -q 'DEBUGINFOD_URLS' "$dir/xz.err" || fail "the advice does not name DEBUGINFOD_URLS: $(cat "$dir/xz.err")"
owner=
if command -v dpkg >/dev/null; then
	owner=$(dpkg -S "$lz" "$(echo "$lz" | sed 's|^/usr/|/|')" 2>/dev/null | grep -v '^diversion' | head -n1 || true)
fi
if [ -n "$owner" ]; then
	pkg=${owner%%:*}
	known=${owner#*: }
	grep -qF "'apt install $pkg-dbgsym'" "$dir/xz.err" || fail "the advice does not name $pkg-dbgsym: $(cat "$dir/xz.err")"
	grep -qF "dpkg -S $known: $pkg" "$dir/xz.err" || fail "the advice does not name $known, as dpkg knows it: $(cat "$dir/xz.err")"
fi
echo "stripped-names: $n functions of $base under xz; $(grep -o 'install its debug symbols[^;]*' "$dir/xz.err" | head -n1)"
exit 0
