#!/bin/sh
# Draws tests/fixtures/flame-small.folded (hand-written) with `hotstack flame` and drives the
# SVG in headless Chromium (tests/browser/flame.test.mjs): hover, zoom, reset, search.
# Needs chromium, node and `npm ci` in tests/browser; skips (77) without them.
set -eu

skip() {
	echo "flame-browser: skipped: $*" >&2
	exit 77
}

: "${HOTSTACK:?}" "${SRCDIR:?}"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
browser_dir=$SRCDIR/tests/browser

[ -x "$CHROMIUM" ] || skip "no $CHROMIUM (apt-get install chromium)"
command -v node >/dev/null 2>&1 || skip "no node (apt-get install nodejs npm)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || skip "node $node_major is older than 18, which playwright-core needs"
[ -d "$browser_dir/node_modules/playwright-core" ] ||
	skip "no $browser_dir/node_modules (run 'npm ci' there)"

work=$(mktemp -d "${TMPDIR:-/tmp}/flame-browser.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

"$HOTSTACK" flame "$SRCDIR/tests/fixtures/flame-small.folded" -o "$work/small.svg"
[ -s "$work/small.svg" ] || { echo "flame-browser: hotstack flame wrote no SVG" >&2; exit 1; }
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$work/small.svg"
fi
TMPDIR=$work CHROMIUM=$CHROMIUM node "$browser_dir/flame.test.mjs" "$work/small.svg"
