#!/bin/sh
# node --perf-basic-prof running a recursive JavaScript program: V8 writes /tmp/perf-PID.map as
# it compiles, hotstack names the JavaScript frames from it at the end of the recording (frames
# in JIT code are named late: the map may only be complete then), as JIT frames (_[j]); the
# stack continues below them, walked by frame pointers through V8's code and by CFI through
# node's, down to the process's start.
# The JavaScript frame reader, which names the same frames from outside, is left out
# (--no-js): this is the perf map, what runs where the reader cannot.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=jit-node-lib.sh
. "$(dirname "$0")/jit-node-lib.sh"
(cd "$dir" && "$HOTSTACK" record --no-js -v -o "$dir/map.folded" -- "$note_pid" node --perf-basic-prof "$dir/rec.js" >"$dir/map.out" 2>"$dir/map.err") ||
	fail "record: $(cat "$dir/map.err")"
grep -q 'JIT: .* [1-9][0-9]* perf maps' "$dir/map.err" || fail "no perf map was read: $(grep JIT "$dir/map.err")"
expect_node map
exit 0
