#!/bin/sh
# --symfs DIR: a perf.data names files that are not at their paths here but under DIR (another
# machine's or an image's root). Recorded by perf, the program is then moved from P to DIR/P:
# without --symfs its frames are [prog], with it they are named, from the program itself or
# from its debug file under DIR/usr/lib/debug; a different build at DIR/P is never used.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null 2>&1 || skip "perf is not installed (apt-get install linux-perf)"
for t in objcopy strip readelf; do
	command -v $t >/dev/null 2>&1 || skip "$t is not installed (apt-get install binutils)"
done
require_perf_events
require_perf_record
# perf's build-id cache would hold a copy of the program: keep it empty, and in the scratch dir
mkdir -p "$dir/home"
export HOME="$dir/home" PERF_BUILDID_DIR="$dir/home/.debug"
unset HOTSTACK_DEBUG_DIR DEBUGINFOD_URLS

# two builds of one program whose functions are alpha_* and omega_* (tests/workloads/prefixed-spin.c)
for v in alpha omega; do
	cp "$WORKLOADS/prefixed-spin-$v" "$dir/$v"
done

# perf record NAME PROGRAM: PROGRAM runs at $dir/app/prog, is recorded, and is gone after
record() {
	mkdir -p "$dir/app"
	cp "$2" "$dir/app/prog"
	perf record -q -N -g -o "$dir/$1.data" -- "$dir/app/prog" 0.5 >/dev/null 2>"$dir/$1.perf.err" ||
		fail "perf record failed: $(cat "$dir/$1.perf.err")"
	rm -rf "$dir/app"
}

# convert NAME [ARGS...]: hotstack convert ARGS NAME.data into NAME.folded
convert() {
	name=$1
	shift
	"$HOTSTACK" convert "$@" "$dir/$name.data" -o "$dir/$name.folded" 2>"$dir/$name.err" ||
		fail "convert $*: $(cat "$dir/$name.err")"
	grep -q . "$dir/$name.folded" || fail "no samples in $name.data"
}

expect_names() {
	grep -q ';alpha_inner_spin[; ]' "$dir/$1.folded" ||
		fail "$1: alpha_inner_spin is not named: $(grep -v '\[k\]' "$dir/$1.folded" | head -3)"
}

expect_no_names() {
	if grep -q 'alpha_\|omega_' "$dir/$1.folded"; then
		fail "$1: names from a file that is not the recorded one: $(head -3 "$dir/$1.folded")"
	fi
	# the stripped program's functions by their addresses alone (prog+0xADDR, from .eh_frame)
	grep -qE '\[prog\]|;prog\+0x[0-9a-f]+[; ]' "$dir/$1.folded" || fail "$1: no [prog] frame: $(head -3 "$dir/$1.folded")"
}

# -- the program itself under DIR
record plain "$dir/alpha"
convert plain
expect_no_names plain
mkdir -p "$dir/sysroot/$dir/app"
cp "$dir/alpha" "$dir/sysroot/$dir/app/prog"
cp "$dir/plain.data" "$dir/symfs.data"
convert symfs --symfs "$dir/sysroot"
expect_names symfs
# the other readers of perf.data take it too
"$HOTSTACK" script --symfs "$dir/sysroot" "$dir/plain.data" >"$dir/script.txt" 2>"$dir/script.err" ||
	fail "script --symfs: $(cat "$dir/script.err")"
grep -q 'alpha_inner_spin' "$dir/script.txt" || fail "script --symfs does not name alpha_inner_spin"
"$HOTSTACK" report --symfs "$dir/sysroot" "$dir/plain.data" >"$dir/report.txt" 2>"$dir/report.err" ||
	fail "report --symfs: $(cat "$dir/report.err")"
grep -q 'alpha_inner_spin' "$dir/report.txt" || fail "report --symfs does not name alpha_inner_spin"
echo "symfs: named from DIR/P; [prog] without --symfs"

# -- another build at DIR/P (its build-id differs): never used
cp "$dir/omega" "$dir/sysroot/$dir/app/prog"
cp "$dir/plain.data" "$dir/other.data"
convert other --symfs "$dir/sysroot"
expect_no_names other
grep -q "changed since the recording" "$dir/other.err" || fail "no warning of the changed file: $(cat "$dir/other.err")"
echo "symfs: a different build at DIR/P is refused"

# -- a stripped program under DIR, its debug file under DIR/usr/lib/debug/.build-id
objcopy --only-keep-debug "$dir/alpha" "$dir/alpha.debug"
cp "$dir/alpha" "$dir/alpha.stripped"
strip --strip-all "$dir/alpha.stripped"
record stripped "$dir/alpha.stripped"
cp "$dir/alpha.stripped" "$dir/sysroot/$dir/app/prog"
convert stripped --symfs "$dir/sysroot"
expect_no_names stripped
id=$(readelf -n "$dir/alpha" | awk '/Build ID/ { print $3; exit }')
tail=${id#??}
mkdir -p "$dir/sysroot/usr/lib/debug/.build-id/${id%"$tail"}"
cp "$dir/alpha.debug" "$dir/sysroot/usr/lib/debug/.build-id/${id%"$tail"}/$tail.debug"
convert stripped --symfs "$dir/sysroot"
expect_names stripped
echo "symfs: a stripped DIR/P named from DIR/usr/lib/debug/.build-id"

# -- record takes it too, and every command refuses a DIR that is not a directory
"$HOTSTACK" record -q --symfs "$dir/sysroot" -o "$dir/rec.folded" -- "$dir/alpha" 0.3 2>"$dir/rec.err" ||
	fail "record --symfs: $(cat "$dir/rec.err")"
expect_names rec
expect_status 2 "$HOTSTACK" convert --symfs "$dir/nowhere" "$dir/plain.data" -o "$dir/x.folded"
expect_stderr "symfs.*not a directory"
expect_status 2 "$HOTSTACK" record --symfs "$dir/nowhere" -o "$dir/x.folded" -- true
expect_stderr "symfs.*not a directory"
