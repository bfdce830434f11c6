#!/bin/sh
# hotstack's speedscope JSON in the speedscope app, in headless Chromium
# (tests/browser/speedscope.test.mjs): tests/fixtures/flame-small.folded converted, and where
# perf_event_open is allowed a recording of tests/workloads/threads (a profile per thread).
# Needs chromium, node and `npm ci` in tests/browser; skips (77) without them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

require_browser speedscope

"$HOTSTACK" convert "$SRCDIR/tests/fixtures/flame-small.folded" -o "$dir/small.speedscope.json" ||
	fail "convert to speedscope failed"
threads=
if "$HOTSTACK" record -q -g none -o "$dir/.probe.folded" -- true 2>/dev/null; then
	"$HOTSTACK" record -q -F 499 -o "$dir/threads.speedscope.json" -- "$WORKLOADS/threads" 3 0.3 >/dev/null ||
		fail "record failed"
	threads=$dir/threads.speedscope.json
fi
TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/speedscope.test.mjs" "$dir/small.speedscope.json" $threads
