#!/bin/sh
# What a flame graph opens on and what it is called, flame chart lanes, and speedscope files
# read back: a deep recursion drawn as SVG and HTML opens (headless Chromium, where installed)
# with the base frame "all" in the window; the graph is titled with the recorded command and
# the sample count; --flamechart gives each thread its own lane named with its tid; a
# a deep stack holding little (a cold tower) opens cut and shows on a click (flame-cut); a
# recording written as speedscope and read back has the same functions and the same CPU time
# as its pprof; speedscope files name the command and carry nanoseconds; hostile JSON gets
# one error line.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

H=$HOTSTACK
require_perf_events

# ---- a deep graph: titles ----
"$H" record -q -g dwarf -o "$dir/deep.svg" -o "$dir/deep.html" -o "$dir/deep.pb.gz" \
	-o "$dir/deep.speedscope.json" -- "$WORKLOADS/recursive" 1 400 || fail "record of recursive failed"
grep -q "<text id=\"title\" x=\"600\" y=\"24\">$WORKLOADS/recursive 1 400</text>" "$dir/deep.svg" ||
	fail "the SVG is not titled with the command: $(grep -o '<text id="title"[^<]*' "$dir/deep.svg")"
grep -Eq '<text id="subtitle" x="600" y="44">[0-9][0-9,]* samples</text>' "$dir/deep.svg" ||
	fail "no sample count under the title: $(grep -o '<text id="subtitle"[^<]*' "$dir/deep.svg")"
grep -Eq '<div id="subtitle">[0-9][0-9,]* samples</div>' "$dir/deep.html" || fail "no sample count in the HTML"
height=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$dir/deep.svg")
[ "$height" -gt 2000 ] || fail "the graph of a 400-deep recursion is only $height px tall"
"$H" flame -q "$dir/deep.pb.gz" --title 'my run' -o "$dir/titled.svg" || fail "flame --title failed"
grep -q '<text id="title" x="600" y="24">my run</text>' "$dir/titled.svg" || fail "--title not kept"
if grep -q 'id="subtitle"' "$dir/titled.svg"; then fail "--title still got a subtitle of its own"; fi

# ---- speedscope: named, in nanoseconds, and read back ----
grep -q "\"name\":\"$WORKLOADS/recursive 1 400\",\"activeProfileIndex\"" "$dir/deep.speedscope.json" ||
	fail "the speedscope file is not named after the command"
grep -q '"unit":"nanoseconds"' "$dir/deep.speedscope.json" || fail "speedscope weights carry no time unit"
"$H" convert "$dir/deep.pb.gz" --value cpu -o "$dir/pprof.folded" || fail "convert of the pprof failed"
"$H" convert "$dir/deep.speedscope.json" --value time -o "$dir/back.folded" || fail "convert of the speedscope file failed"
sort "$dir/pprof.folded" >"$dir/a"
sort "$dir/back.folded" >"$dir/b"
cmp -s "$dir/a" "$dir/b" || fail "speedscope read back differs from the pprof: $(diff "$dir/a" "$dir/b" | head -5)"
grep -q ';rec;rec;rec;' "$dir/b" || fail "the read-back stacks lost the recursion"
"$H" convert "$dir/deep.speedscope.json" -o "$dir/back.pb.gz" || fail "convert speedscope to pprof failed"
"$H" report "$dir/back.pb.gz" >"$dir/report.txt" || fail "report of the converted file failed"
grep -q ' work$' "$dir/report.txt" || fail "no work in the report of the read-back: $(head "$dir/report.txt")"
gzip -c "$dir/deep.speedscope.json" >"$dir/deep.json.gz"
"$H" report "$dir/deep.json.gz" >/dev/null || fail "a gzipped speedscope file is not read"

# ---- hostile speedscope files: one error line each ----
{
	printf '{"shared":{},"profiles":[],"x":'
	head -c 200000 /dev/zero | tr '\0' '['
} >"$dir/deep.json"
printf '{"shared":{"frames":[]},"profiles":[{"type":"sampled","samples":[[7]],"weights":[1e999]}]}' >"$dir/big.json"
printf '{"shared":{"frames":[{"name":"x"}]},"profiles":[{"type":"sampled","samples":[[0]],"weights":[1]}' >"$dir/cut.json"
for f in deep:'nested deeper than 64' big:'out of range' cut:'ends early'; do
	expect_status 1 "$H" report "$dir/${f%%:*}.json"
	expect_stderr "^hotstack: .*${f#*:}"
	[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "${f%%:*}.json: more than one line: $(cat "$dir/.err")"
done

# ---- flame chart: a lane per thread, named with its tid ----
"$H" record -q -o "$dir/chart.svg" --flamechart -- "$WORKLOADS/threads" 2 1 >/dev/null || fail "record --flamechart failed"
# frames in depth-first order: the lanes are one row above "all"; each spinner must sit in
# lanes of one tid only (threads striped into one lane would share it)
awk '
	/<g class="frame/ {
		name = $0; sub(/.*<title>/, "", name); sub(/ \([0-9]+ [^<]*<\/title>.*/, "", name)
		y = $0; sub(/.*<rect x="[^"]*" y="/, "", y); sub(/".*/, "", y); y += 0
		if (!seen++) { base = y; next }
		if (y == base - 16) { lane = name; lanes++; if (lane !~ /-[0-9]+\/[0-9]+$/) bad = bad " unnamed:" lane; next }
		if (name ~ /^spin_thread_[0-9]$/) { tid = lane; sub(/.*\//, "", tid); if (name in t && t[name] != tid) bad = bad " " name; t[name] = tid }
	}
	END { n = 0; for (k in t) n++; if (n < 2 || bad != "") { print "lanes " lanes ", spinners " n ":" bad; exit 1 } }
' "$dir/chart.svg" || fail "flame chart lanes: $(awk '/<g class="frame/' "$dir/chart.svg" | head -3)"

# ---- what a person sees first, in a browser ----
if have_browser; then
	awk 'BEGIN { print "main;work;hot 900"; s = "main"; for (i = 0; i < 60; i++) s = s ";imp" i; print s " 30" }' \
		>"$dir/cold.folded"
	"$H" flame -q "$dir/cold.folded" -o "$dir/cold.svg" || fail "flame of a cold tower failed"
	TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/flame-cut.test.mjs" "$dir/cold.svg" ||
		fail "the cold tower is not cut, or not shown on a click"
	for f in deep.svg deep.html; do
		TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/flame-view.test.mjs" "$dir/$f" || fail "$f opens on the wrong place"
	done
else
	echo "flame-open: the browser checks skipped: $browser_missing" >&2
fi
