#!/bin/sh
# record --serve's live flame graph in headless Chromium (tests/browser/serve.test.mjs): after a
# reload of its own it shows the workload's functions, and it does not reload under a reader
# zoomed in. Then 50 slow clients (tests/browser/slow-clients.mjs: 40 reading the page a few
# bytes a second, 10 sending their request a byte at a time) during a recording cost it no more
# than a fifth of the samples of recordings of the same length without them, measured here.
# Needs chromium, node and `npm ci` in tests/browser; skips (77) without them.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

require_browser
require_perf_events

# two spinning threads: the machine's two CPUs busy, so that CPU the server takes shows
"$WORKLOADS/calltree" 600 >/dev/null &
target=$!
"$WORKLOADS/threads" 1 600 >/dev/null &
target2=$!
rec=""
trap 'kill $target $target2 $rec 2>/dev/null || true; rm -rf "$dir"' EXIT

# Starts record --serve with ARGS in the background ($rec) and sets $port from what it says.
serve() { # NAME ARGS...
	_name=$1
	shift
	"$HOTSTACK" record "$@" --serve 127.0.0.1:0 2>"$dir/$_name.err" &
	rec=$!
	wait_until 300 has_line "$dir/$_name.err" 'serving on' || fail "$_name: no 'serving on': $(cat "$dir/$_name.err")"
	port=$(sed -n 's|^hotstack: serving on http://127\.0\.0\.1:\([0-9][0-9]*\)/$|\1|p' "$dir/$_name.err")
	[ -n "$port" ] || fail "$_name: no port in $(cat "$dir/$_name.err")"
}

samples() { # FILE.folded
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

# the page in the browser
serve browser -p "$target" -d 300 --window 5 -o "$dir/browser.folded"
TMPDIR=$dir CHROMIUM=$CHROMIUM node "$browser_dir/serve.test.mjs" "http://127.0.0.1:$port/" leaf a b c main ||
	fail "the live page in Chromium"
kill -TERM "$rec"
wait "$rec" || true
rec=""

# recordings without clients before and after one with 50 slow ones through all of it, so that
# a change in the machine's other load meanwhile cannot pass for the clients' cost; with frame
# pointers (the workloads have them), as DWARF unwinding's own CPU time would make the counts
# vary more than the clients could
"$HOTSTACK" record -q -g fp -p "$target,$target2" -d 6 -o "$dir/quiet1.folded" || fail "the recording without clients"
serve loaded -g fp -p "$target,$target2" -d 6 -o "$dir/loaded.folded"
node "$browser_dir/slow-clients.mjs" "$port" 7 40 10 / >"$dir/clients.json" || fail "slow-clients.mjs failed"
wait "$rec" || fail "the recording with slow clients failed: $(cat "$dir/loaded.err")"
rec=""
"$HOTSTACK" record -q -g fp -p "$target,$target2" -d 6 -o "$dir/quiet2.folded" || fail "the recording without clients"
quiet1=$(samples "$dir/quiet1.folded")
quiet2=$(samples "$dir/quiet2.folded")
quiet=$((quiet1 < quiet2 ? quiet1 : quiet2))
loaded=$(samples "$dir/loaded.folded")
echo "serve-browser: $quiet1 and $quiet2 samples without clients, $loaded with them; clients: $(cat "$dir/clients.json")"
[ "$quiet" -gt 1000 ] || fail "a recording without clients has only $quiet samples"
[ $((loaded * 100)) -ge $((quiet * 80)) ] || fail "50 slow clients cut the samples from $quiet to $loaded"
connected=$(sed -n 's/.*"connected":\([0-9]*\).*/\1/p' "$dir/clients.json")
answered=$(sed -n 's/.*"answered":\([0-9]*\).*/\1/p' "$dir/clients.json")
[ "$connected" -eq 50 ] || fail "$connected of 50 clients connected"
[ "$answered" -ge 30 ] || fail "only $answered of 40 slow readers had an answer: $(cat "$dir/clients.json")"
