#!/bin/sh
# Draws tests/fixtures/flame-small.folded (hand-written) with `hotstack flame` and drives the
# SVG in headless Chromium (tests/browser/flame.test.mjs): hover, zoom, reset, search.
# Needs chromium, node and `npm ci` in tests/browser; skips (77) without them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

require_browser

"$HOTSTACK" flame "$SRCDIR/tests/fixtures/flame-small.folded" -o "$dir/small.svg"
[ -s "$dir/small.svg" ] || fail "hotstack flame wrote no SVG"
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$dir/small.svg"
fi
TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/flame.test.mjs" "$dir/small.svg"
