#!/bin/sh
# perf.data files recorded here by perf: hotstack's stacks equal perf's (perf script, collapsed)
# stack for stack for frame-pointer recordings; for DWARF recordings hotstack completes at least
# what perf completes, and what it cannot finish ends in [truncated: stack copy] only; a binary
# rebuilt since the recording is noticed and never used, and perf's build-id cache supplies the
# original.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v perf >/dev/null 2>&1 || skip "perf is not installed"
# perf keeps copies of the binaries it sampled in $HOME/.debug: in the scratch dir
require_perf_record
command -v cc >/dev/null 2>&1 || skip "no C compiler"
mkdir -p "$dir/empty"

# -- frame pointers: the same stacks, sample for sample (user-mode samples; perf and hotstack
#    may name a kernel function by different aliases)
perf record -q -g -o "$dir/fp.data" -- "$WORKLOADS/calltree" 1 >/dev/null 2>"$dir/perf.err" ||
	skip "perf record failed: $(head -n1 "$dir/perf.err")"
"$HOTSTACK" convert "$dir/fp.data" --inline-annotate -o "$dir/hs.folded" 2>"$dir/convert.err" ||
	fail "convert: $(cat "$dir/convert.err")"
perf script -i "$dir/fp.data" -F comm,pid,tid,time,event,ip,sym,dso 2>/dev/null |
	"$HOTSTACK" collapse --kernel >"$dir/perf.folded" || fail "collapse failed"
# perf script shows no inline frames without --inline: hotstack's are left out (and the stacks
# they told apart added up again) for the comparison
awk '{ n = $NF; sub(/ [0-9]+$/, ""); gsub(/;[^;]*_\[i\]/, ""); c[$0] += n } END { for (k in c) print k " " c[k] }' \
	"$dir/hs.folded" | grep -v '_\[k\]' | sort >"$dir/hs.user"
# hotstack shows versioned symbols (clock_gettime@@GLIBC_2.17) without their version
# perf names a caller by its return address, hotstack by the call instruction before it: they
# differ where a call is the last instruction before a label, as in ld.so's _start, whose call
# to _dl_start returns to the label _dl_start_user
grep -v '_\[k\]' "$dir/perf.folded" | sed -E 's/@@?[A-Z][A-Za-z0-9_.]*//g; s/;_dl_start_user;/;_start;/' |
	sort >"$dir/perf.user"
main_hs=$(grep -c ';main;' "$dir/hs.user" || true)
[ "$main_hs" -ge 2 ] || fail "hotstack's stacks do not reach main: $(head -5 "$dir/hs.user")"
# perf leaves some frames unnamed ([unknown], or "@plt" for a PLT entry of no symbol's, as the C
# library's own) where hotstack names them; compare the stacks perf resolved completely
grep -v '\[unknown\]' "$dir/perf.user" | grep -v ';@plt\( \|;\)' >"$dir/perf.complete"
while read -r line; do
	grep -qxF "$line" "$dir/hs.user" || fail "perf's stack '$line' is not in hotstack's output: $(cat "$dir/hs.user")"
done <"$dir/perf.complete"
echo "fp: $(wc -l <"$dir/perf.complete") of perf's complete user stacks found identically in hotstack's output"

# -- DWARF: perf's 8 KiB copies of a 120-deep recursion
perf record -q --call-graph dwarf -o "$dir/dw.data" -- "$WORKLOADS/recursive" 1 >/dev/null 2>"$dir/perf.err" ||
	skip "perf record failed: $(head -n1 "$dir/perf.err")"
"$HOTSTACK" convert "$dir/dw.data" -o "$dir/dw.folded" 2>/dev/null || fail "convert of a dwarf recording failed"
perf script -i "$dir/dw.data" -F comm,pid,tid,time,event,ip,sym,dso 2>/dev/null |
	"$HOTSTACK" collapse >"$dir/dw.perf.folded" || fail "collapse failed"
count_main() { awk '{ n = $NF; t += n; if ($0 ~ /;main(;| )/) m += n } END { printf "%d %d\n", m + 0, t + 0 }' "$1"; }
read -r hs_main hs_total <<EOF2
$(count_main "$dir/dw.folded")
EOF2
read -r perf_main perf_total <<EOF2
$(count_main "$dir/dw.perf.folded")
EOF2
echo "dwarf: hotstack reaches main in $hs_main of $hs_total samples, perf in $perf_main of $perf_total"
[ "$hs_main" -ge "$perf_main" ] || fail "hotstack completes fewer stacks than perf from the same file"
# what hotstack could not finish, it ended for the one real reason: the copy ran out (stacks
# outside main that start at the entry point, _start, are complete: ld.so's start-up, exit)
unfinished() { awk '!/;main(;| )/ && !/^[^;]*;_start;/' "$dir/dw.folded" | grep -v '^[^;]*;\[truncated: stack copy\]'; }
bad=$(unfinished | grep -cv '_\[k\] [0-9]*$' || true)
[ "$bad" -le 2 ] || fail "$bad incomplete stacks end for another reason: $(unfinished | grep -v '_\[k\] [0-9]*$' | head -n 3)"

# -- the same input gives the same bytes: DWARF is opened by threads and names come late or
# early as they finish, which must not show in the order of a pprof file's tables
for data in fp dwarf; do
	for _ in 1 2 3 4 5 6 7 8; do
		"$HOTSTACK" convert "$SRCDIR/tests/fixtures/perf-data/$data.data" -o - --format pprof 2>/dev/null | cksum
	done >"$dir/sums.$data"
	[ "$(sort -u "$dir/sums.$data" | wc -l)" -eq 1 ] ||
		fail "$data.data: the pprof output differs between runs: $(sort -u "$dir/sums.$data" | tr '\n' ' ')"
done

# -- a binary rebuilt since the recording
cat >"$dir/prog.c" <<'C'
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void first_version_spin(void) { for (int i = 0; i < 100000000; i++) sink += i; }
int main(void) { first_version_spin(); return 0; }
C
cc -O1 -fno-omit-frame-pointer -o "$dir/prog" "$dir/prog.c"
perf record -q -g -o "$dir/prog.data" -- "$dir/prog" >/dev/null 2>"$dir/perf.err" ||
	skip "perf record failed: $(head -n1 "$dir/perf.err")"
sed -i 's/first_version_spin/other_version_spin/g; s/100000000/100000001/' "$dir/prog.c"
cc -O1 -fno-omit-frame-pointer -o "$dir/prog" "$dir/prog.c"
# with perf's build-id cache: the recorded binary is found there
"$HOTSTACK" convert "$dir/prog.data" -o "$dir/cached.folded" 2>"$dir/cached.err" || fail "convert failed"
grep -q "first_version_spin" "$dir/cached.folded" || fail "the cached original was not used: $(cat "$dir/cached.folded")"
if grep -q "other_version" "$dir/cached.folded"; then fail "the rebuilt binary was used"; fi
# without it: a warning, and no names from the wrong file
HOME="$dir/empty" "$HOTSTACK" convert "$dir/prog.data" -o "$dir/stale.folded" 2>"$dir/stale.err" || fail "convert failed"
grep -q "changed since the recording" "$dir/stale.err" || fail "no warning about the rebuilt binary: $(cat "$dir/stale.err")"
if grep -q "version_spin" "$dir/stale.folded"; then fail "names were taken from the rebuilt binary: $(cat "$dir/stale.folded")"; fi
grep -q ";\[prog\]" "$dir/stale.folded" || fail "the rebuilt binary's frames are not [prog]: $(cat "$dir/stale.folded")"
exit 0
