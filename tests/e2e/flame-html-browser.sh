#!/bin/sh
# The HTML flame graph of a profile of 100,000 distinct stacks, driven in headless Chromium
# (tests/browser/flame-html.test.mjs): load time, hover, zoom, search, all on a canvas.
# Needs chromium, node and `npm ci` in tests/browser; skips (77) without them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

require_browser

awk 'BEGIN {
	for (i = 0; i < 100000; i++)
		printf "big;main;group_%d;sub_%d;leaf_%d %d\n", i % 100, i % 1000, i, 1 + i % 5
	print "big;main;hot;spin 300000"
}' >"$dir/big.folded"
"$HOTSTACK" flame "$dir/big.folded" -o "$dir/big.html" || fail "hotstack flame -o big.html failed"
[ -s "$dir/big.html" ] || fail "no HTML written"
# the same profile as an SVG stays bounded by merging narrow frames; the HTML keeps them all
"$HOTSTACK" flame "$dir/big.folded" -o "$dir/big.svg" || fail "hotstack flame -o big.svg failed"
echo "flame-html-browser: big.html $(wc -c <"$dir/big.html") bytes, big.svg $(wc -c <"$dir/big.svg") bytes"
TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/flame-html.test.mjs" "$dir/big.html"
