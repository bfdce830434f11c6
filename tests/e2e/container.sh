#!/bin/sh
# A process in its own mount namespace (as in a container) runs a program, and has its debug
# file, at paths that do not exist outside it. hotstack names the program's functions through
# /proc/PID/root: from a perf.data read while the process lives (no descriptor was captured,
# the file is opened by path), and from its own recording of the process (hotstack record -p).
# Once the process is gone, the same perf.data has nothing to name them from.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null 2>&1 || skip "unshare is not installed (apt-get install util-linux)"
command -v perf >/dev/null 2>&1 || skip "perf is not installed (apt-get install linux-perf)"
for t in objcopy strip; do
	command -v $t >/dev/null 2>&1 || skip "$t is not installed (apt-get install binutils)"
done
require_perf_events
require_perf_record
mkdir -p "$dir/ns" "$dir/home" "$dir/empty"
unshare -m --propagation private sh -c 'mount -t tmpfs none "$1"' sh "$dir/ns" 2>"$dir/unshare.err" ||
	skip "no private mount namespace here: $(head -n1 "$dir/unshare.err")"
export HOME="$dir/home" PERF_BUILDID_DIR="$dir/home/.debug" HOTSTACK_DEBUG_DIR="$dir/empty"
unset DEBUGINFOD_URLS

# a program whose functions are boxed_inner_spin and boxed_outer_spin
cp "$WORKLOADS/prefixed-spin-boxed" "$dir/prog"
# stripped, with its debug file beside it by .gnu_debuglink: both only inside the namespace
objcopy --only-keep-debug "$dir/prog" "$dir/prog.debug"
cp "$dir/prog" "$dir/prog.stripped"
strip --strip-all "$dir/prog.stripped"
objcopy --add-gnu-debuglink="$dir/prog.debug" "$dir/prog.stripped"

# unshare execs sh, which execs the program: $! is the program's pid
unshare -m --propagation private sh -c \
	'mount -t tmpfs none "$1" && cp "$2" "$1/prog" && cp "$3" "$1/prog.debug" && exec "$1/prog" 30' \
	sh "$dir/ns" "$dir/prog.stripped" "$dir/prog.debug" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
	case $(readlink "/proc/$pid/exe" 2>/dev/null) in
	*/ns/prog) break ;;
	esac
	kill -0 "$pid" 2>/dev/null || fail "the program in the namespace did not start"
	sleep 0.05
done
[ ! -e "$dir/ns/prog" ] || fail "the program's path exists outside its namespace: the test proves nothing"
[ -e "/proc/$pid/root$dir/ns/prog.debug" ] || fail "the program is not running from its namespace's tmpfs"

# expect_names NAME FUNCTION...: each FUNCTION is named in NAME.folded
expect_names() {
	name=$1
	shift
	for f in "$@"; do
		grep -q ";${f}[; ]" "$dir/$name.folded" ||
			fail "$name: $f is not named: $(grep -v '\[k\]' "$dir/$name.folded" | head -3)"
	done
}

# -- perf.data: files opened by path, through /proc/PID/root
perf record -q -N -g -p "$pid" -o "$dir/ns.data" -- sleep 1 >/dev/null 2>"$dir/perf.err" ||
	fail "perf record -p failed: $(cat "$dir/perf.err")"
"$HOTSTACK" convert "$dir/ns.data" -o "$dir/live.folded" 2>"$dir/convert.err" ||
	fail "convert: $(cat "$dir/convert.err")"
# (perf -g walks frame pointers, which gcc leaves out of leaf functions: their caller is skipped)
expect_names live boxed_inner_spin
echo "perf.data: named through /proc/$pid/root (program and debug file)"

# -- hotstack's own recording of the process
"$HOTSTACK" record -q -p "$pid" -d 1 -o "$dir/rec.folded" 2>"$dir/rec.err" || fail "record -p: $(cat "$dir/rec.err")"
expect_names rec boxed_inner_spin boxed_outer_spin
echo "record -p: named (its debug file found inside the namespace)"

# -- the process gone, nothing names them
kill "$pid"
wait "$pid" 2>/dev/null || true
"$HOTSTACK" convert "$dir/ns.data" -o "$dir/gone.folded" 2>/dev/null || fail "convert after the exit failed"
if grep -q 'boxed_' "$dir/gone.folded"; then
	fail "names without the process's root: $(head -3 "$dir/gone.folded")"
fi
grep -q '\[prog\]' "$dir/gone.folded" || fail "no [prog] frame once the process is gone: $(head -3 "$dir/gone.folded")"
echo "after the exit: [prog]"
