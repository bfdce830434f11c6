#!/bin/sh
# hotstack's speedscope JSON in the speedscope app, in headless Chromium
# (tests/browser/speedscope.test.mjs): tests/fixtures/flame-small.folded converted, and where
# perf_event_open is allowed a recording of tests/workloads/threads (a profile per thread).
# Needs chromium, node and `npm ci` in tests/browser; skips (77) without them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
browser_dir=$SRCDIR/tests/browser
[ -x "$CHROMIUM" ] || skip "no $CHROMIUM (apt-get install chromium)"
command -v node >/dev/null 2>&1 || skip "no node (apt-get install nodejs npm)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || skip "node $node_major is older than 18, which playwright-core needs"
for m in playwright-core speedscope; do
	[ -d "$browser_dir/node_modules/$m" ] || skip "no $browser_dir/node_modules/$m (run 'npm ci' there)"
done

"$HOTSTACK" convert "$SRCDIR/tests/fixtures/flame-small.folded" -o "$dir/small.speedscope.json" ||
	fail "convert to speedscope failed"
threads=
if "$HOTSTACK" record -q -g none -o "$dir/.probe.folded" -- true 2>/dev/null; then
	"$HOTSTACK" record -q -F 499 -o "$dir/threads.speedscope.json" -- "$WORKLOADS/threads" 3 0.3 >/dev/null ||
		fail "record failed"
	threads=$dir/threads.speedscope.json
fi
TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/speedscope.test.mjs" "$dir/small.speedscope.json" $threads
