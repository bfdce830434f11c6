#!/bin/sh
# node --perf-prof running a recursive JavaScript program: V8 writes jit-PID.dump in its working
# directory and maps it as a marker; hotstack notices the mapping and reads the file while it
# records (no perf inject step), and names the JavaScript frames from it alone: no perf map is
# read (hotstack -v counts them). --interpreted-frames-native-stack gives interpreted functions
# code of their own, as --perf-basic-prof users do; --perf-prof-unwinding-info adds V8's
# unwinding records.
# The JavaScript frame reader is left out (--no-js): this is the jitdump, what runs where it
# cannot.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=jit-node-lib.sh
. "$(dirname "$0")/jit-node-lib.sh"
(cd "$dir" && node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack -e 0 2>/dev/null) ||
	skip "this node does not know --perf-prof"
(cd "$dir" && "$HOTSTACK" record --no-js -v -o "$dir/dump.folded" -- \
	node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack "$dir/rec.js" \
	>"$dir/dump.out" 2>"$dir/dump.err") || fail "record: $(cat "$dir/dump.err")"
ls "$dir"/jit-*.dump >/dev/null 2>&1 || fail "node wrote no jitdump file"
grep -q 'JIT: 1 jitdump files (.*), 0 perf maps' "$dir/dump.err" ||
	fail "not from the jitdump alone: $(grep JIT "$dir/dump.err")"
expect_node dump
exit 0
