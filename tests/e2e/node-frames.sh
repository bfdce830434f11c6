#!/bin/sh
# JavaScript frames read from outside node at sample time, with no flag: a program with a known
# call tree (tests/workloads/node/hot.js) recorded as the command and attached to with -p after
# its warm-up, run with --no-opt --no-sparkplug (all interpreted), --always-sparkplug,
# --perf-basic-prof (its perf map names no frame twice) and --stress-compaction (what a function
# shares moved all the time: what moved before it was named is unknown, never misnamed). node-check.py checks each profile: 95% of
# fib's samples carry the whole chain over node::Start, no stack is complete but wrong, the cold
# function is named. Interpreted, baseline and optimised frames are told apart; V8's builtins
# show only with --js-internals. Without the rights to load BPF programs (as nobody) one line says
# so and what to pass to node.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
node=$(command -v node) || fail "no node (scripts/install-deps --test installs it)"
check="$SRCDIR/tests/e2e/node-check.py"
hot="$SRCDIR/tests/workloads/node/hot.js"
pid=
trap 'kill "$pid" 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT
# node writes its perf map to /tmp (removed at the end by remove_jit_files) and, with
# --perf-basic-prof, its V8 log to the working directory: the scratch directory
cd "$dir"
if ! "$BUILDDIR/tests/tools/hs-v8-probe" --file "$(readlink -f "$node")" >/dev/null 2>"$dir/probe.err"; then
	grep -q 'is not supported' "$dir/probe.err" && skip "$(cat "$dir/probe.err")"
	fail "node's metadata refused: $(cat "$dir/probe.err")"
fi

verify() { # NAME [CHECK OPTIONS]
	grep -q '^hotstack: JavaScript: frame reader loaded$' "$dir/$1.err" ||
		fail "$1: the JavaScript frame reader did not run: $(cat "$dir/$1.err")"
	"$HOTSTACK" report "$dir/$1.pb.gz" --lines -o "$dir/$1.folded" 2>"$dir/$1.rep" ||
		fail "$1: report: $(cat "$dir/$1.rep")"
	name=$1
	shift
	python3 "$check" "$dir/$name.folded" "$@" >"$dir/$name.check" 2>&1 || fail "$name: $(cat "$dir/$name.check")"
	echo "node-frames: $name: $(cat "$dir/$name.check")"
}

started() { # NAME [NODE OPTIONS] [-- RECORD OPTIONS [-- CHECK OPTIONS]]
	name=$1
	shift
	opts='' ropts=''
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		ropts="$ropts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086 # opts are words
	"$HOTSTACK" record -v -d 6 $ropts -o "$dir/$name.pb.gz" -- "$note_pid" "$node" $opts "$hot" 4 \
		>"$dir/$name.out" 2>"$dir/$name.err" || fail "$name: record: $(cat "$dir/$name.err")"
	verify "$name" "$@"
}

started default
# kinds: fib optimised, the cold function interpreted, and V8's builtins left out (but for the
# first milliseconds, before the reader knows the process: its code range is made as node starts)
"$HOTSTACK" report "$dir/default.pb.gz" -o "$dir/kinds.folded" 2>/dev/null
grep -q ';fib_\[j\]' "$dir/kinds.folded" || fail "no optimised fib: $(head -c 2000 "$dir/kinds.folded")"
grep -q ';coldLoop_\[0\]' "$dir/kinds.folded" || fail "no interpreted coldLoop: $(head -c 2000 "$dir/kinds.folded")"
python3 - "$dir/kinds.folded" <<'PY' || fail "V8's builtins shown without --js-internals"
import sys
total = shown = 0
for line in open(sys.argv[1]):
    st, _, n = line.rstrip("\n").rpartition(" ")
    total += int(n)
    if "_[b]" in st or "Builtins_" in st:
        shown += int(n)
print("node-frames: builtins in %d of %d samples" % (shown, total))
sys.exit(shown * 50 > total)
PY
started interpreted --no-opt --no-sparkplug
"$HOTSTACK" report "$dir/interpreted.pb.gz" -o "$dir/interpreted.kinds.folded" 2>/dev/null
if grep -q 'fib_\[j\]\|fib_\[1\]' "$dir/interpreted.kinds.folded"; then
	fail "compiled fib with --no-opt --no-sparkplug: $(grep -c 'fib_\[j\]\|fib_\[1\]' "$dir/interpreted.kinds.folded") of $(wc -l <"$dir/interpreted.kinds.folded") stacks, as $(grep -m2 'fib_\[j\]\|fib_\[1\]' "$dir/interpreted.kinds.folded" | cut -c1-600)"
fi
started baseline --always-sparkplug
started perfmap --perf-basic-prof
started internals -- --js-internals
# the collector moving what functions share all the time: never a wrong name
started moving --stress-compaction -- -- --moving
"$HOTSTACK" report "$dir/internals.pb.gz" -o "$dir/internals.kinds.folded" 2>/dev/null
grep -q 'Builtins_JSEntry_\[b\]\|Builtins_JSEntry;' "$dir/internals.kinds.folded" ||
	fail "no V8 builtins with --js-internals: $(head -c 1500 "$dir/internals.kinds.folded")"

# attached after its warm-up
"$node" "$hot" 30 >"$dir/node.out" 2>&1 &
pid=$!
wait_until 300 has_line "$dir/node.out" ready || fail "node did not warm up: $(cat "$dir/node.out")"
"$HOTSTACK" record -v -p "$pid" -d 3 -o "$dir/attached.pb.gz" >/dev/null 2>"$dir/attached.err" ||
	fail "record -p: $(cat "$dir/attached.err")"
kill -0 "$pid" 2>/dev/null || fail "node did not survive the recording"
verify attached
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=

# without the right to load BPF programs: one line says so, and what node is to be given
chmod 777 "$dir"
cp "$hot" "$dir/hot.js"
chmod 644 "$dir/hot.js"
runuser -u nobody -- "$HOTSTACK" record -o "$dir/nobpf.folded" -d 3 -- "$node" "$dir/hot.js" 2 \
	>/dev/null 2>"$dir/nobpf.err" || fail "record as nobody: $(cat "$dir/nobpf.err")"
[ "$(grep -c 'reading JavaScript frames needs root, or CAP_BPF and CAP_PERFMON.*node --perf-basic-prof' "$dir/nobpf.err")" = 1 ] ||
	fail "no one line on BPF rights: $(cat "$dir/nobpf.err")"
echo "node-frames: as nobody: $(grep 'JavaScript frames needs' "$dir/nobpf.err")"
