#!/bin/sh
# record --serve: while a recording of a known call tree runs, go tool pprof reads Go's
# /debug/pprof/profile?seconds=2 from it and lists the workload's functions over about those
# seconds; /folded and /profile.pb.gz hold everything so far (hotstack report reads the latter),
# under --switch-output too (at least the samples of the periods written);
# a bad seconds is a 400, an unknown path a 404, a method other than GET and HEAD a 405; with
# only a port it listens on 127.0.0.1 alone, on the port it names; a bad --serve is a usage
# error, a port in use an error; and the recording's files are written as without --serve.
# Needs go tool pprof (golang-go).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v go >/dev/null 2>&1 || skip "go is not installed (apt-get install golang-go)"
go tool -n pprof >/dev/null 2>&1 || skip "this Go has no 'go tool pprof'"
mkdir "$dir/home"
export HOME="$dir/home" GOCACHE="$dir/home/go-cache" PPROF_TMPDIR="$dir/home"

# GET (or another method) of a URL: the body in OUT, the status on stdout, 000 without an answer
fetch() { # URL OUT [METHOD]
	python3 - "$@" <<'EOF'
import sys, urllib.error, urllib.request
url, out = sys.argv[1], sys.argv[2]
method = sys.argv[3] if len(sys.argv) > 3 else 'GET'
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for 127.0.0.1
req = urllib.request.Request(url, method=method, data=b'x=1' if method == 'POST' else None)
try:
    with opener.open(req, timeout=120) as r:
        status, body = r.status, r.read()
except urllib.error.HTTPError as e:
    status, body = e.code, e.read()
except OSError:
    status, body = 0, b''
open(out, 'wb').write(body)
print('%03d' % status)
EOF
}

samples() { # the samples of a profile, through hotstack's own reading
	"$HOTSTACK" convert "$1" -o - --format folded | awk '{ n += $NF } END { print n + 0 }'
}

expect_status 2 "$HOTSTACK" record --serve 70000 -- true
expect_stderr "invalid --serve '70000'"
expect_status 2 "$HOTSTACK" record --serve '::1:80' -- true
expect_stderr "brackets"
expect_status 2 "$HOTSTACK" record --window 5 -- true
expect_stderr "--window goes with --serve"

"$WORKLOADS/calltree" 300 >/dev/null &
target=$!
rec=""
trap 'kill $target $rec 2>/dev/null || true; rm -rf "$dir"' EXIT

# only a port, 0: any free one, on 127.0.0.1
"$HOTSTACK" record -p "$target" -d 120 --serve 0 -o "$dir/rec.folded" 2>"$dir/rec.err" &
rec=$!
wait_until 300 has_line "$dir/rec.err" 'serving on' || fail "no 'serving on' line: $(cat "$dir/rec.err")"
line=$(grep 'serving on' "$dir/rec.err")
port=$(echo "$line" | sed -n 's|^hotstack: serving on http://127\.0\.0\.1:\([0-9][0-9]*\)/$|\1|p')
{ [ -n "$port" ] && [ "$port" -gt 0 ]; } || fail "not a 127.0.0.1 address with its port: $line"
url=http://127.0.0.1:$port

# 127.0.0.1 only: no other address listens on the port
ss -ltnH "sport = :$port" >"$dir/ss.txt"
grep -q "127\.0\.0\.1:$port " "$dir/ss.txt" || fail "ss does not show 127.0.0.1:$port listening: $(cat "$dir/ss.txt")"
[ "$(wc -l <"$dir/ss.txt")" -eq 1 ] || fail "more than 127.0.0.1 listens on $port: $(cat "$dir/ss.txt")"

# the port is taken: one line, exit 1, and nothing recorded
expect_status 1 "$HOTSTACK" record --serve "127.0.0.1:$port" -o "$dir/never.folded" -- true
expect_stderr "^hotstack: --serve: cannot listen on 127\.0\.0\.1:$port: "
[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "more than a line for a port in use: $(cat "$dir/.err")"
[ ! -e "$dir/never.folded" ] || fail "a recording ran without its server"

# go tool pprof, as people run it against a Go program
go tool pprof -top "$url/debug/pprof/profile?seconds=2" >"$dir/top.txt" 2>"$dir/top.err" ||
	fail "go tool pprof failed: $(cat "$dir/top.err")"
for f in leaf a b c main; do
	grep -qE " $f\$" "$dir/top.txt" || fail "go tool pprof -top lists no $f: $(cat "$dir/top.txt")"
done
# the seconds asked for, as near as a tick of a loaded machine allows
grep -qE '^Duration: (1\.9[0-9]*|2|2\.[0-9]+|3\.[0-9]+)s,' "$dir/top.txt" ||
	fail "not a profile of about 2 s: $(grep Duration "$dir/top.txt")"
saved=$(find "$dir/home" -name 'pprof.*.pb.gz' | head -n1)
[ -n "$saved" ] || fail "go tool pprof saved no profile"
next2=$(samples "$saved")
[ "$next2" -gt 0 ] || fail "the 2 s profile has no samples"

# everything so far: more than those 2 s, as folded stacks and as pprof
status=$(fetch "$url/folded" "$dir/all.folded")
[ "$status" = 200 ] || fail "/folded: $status"
grep -q '^calltree;.*;main;a;b;leaf [0-9][0-9]*$' "$dir/all.folded" || fail "/folded has no main;a;b;leaf: $(head -n5 "$dir/all.folded")"
grep -q '^calltree;.*;main;c;leaf [0-9][0-9]*$' "$dir/all.folded" || fail "/folded has no main;c;leaf"
status=$(fetch "$url/profile.pb.gz" "$dir/all.pb.gz")
[ "$status" = 200 ] || fail "/profile.pb.gz: $status"
gunzip -t "$dir/all.pb.gz" || fail "/profile.pb.gz is not gzip"
"$HOTSTACK" report "$dir/all.pb.gz" >"$dir/report.txt" 2>"$dir/report.err" ||
	fail "hotstack report cannot read /profile.pb.gz: $(cat "$dir/report.err")"
grep -qw leaf "$dir/report.txt" || fail "the report of /profile.pb.gz has no leaf"
[ "$(samples "$dir/all.pb.gz")" -gt "$next2" ] || fail "everything so far is no more than the 2 s after the start"

# errors, as Go's net/http/pprof gives them, and the methods
status=$(fetch "$url/debug/pprof/profile?seconds=abc" "$dir/abc.txt")
[ "$status" = 400 ] || fail "seconds=abc: $status"
grep -q seconds "$dir/abc.txt" || fail "seconds=abc: no message: $(cat "$dir/abc.txt")"
[ "$(fetch "$url/no/such/page" "$dir/404.txt")" = 404 ] || fail "an unknown path is not a 404"
[ "$(fetch "$url/folded" "$dir/post.txt" POST)" = 405 ] || fail "POST is not a 405"
[ "$(fetch "$url/" "$dir/head.txt" HEAD)" = 200 ] || fail "HEAD / is not a 200"
[ ! -s "$dir/head.txt" ] || fail "HEAD / has a body"
status=$(fetch "$url/" "$dir/page.html")
[ "$status" = 200 ] || fail "/: $status"
grep -q 'id="flamedata"' "$dir/page.html" || fail "/ is not the flame graph"
grep -q 'Live: reloads every' "$dir/page.html" || fail "/ does not say it is live"

# clients that ask for an hour and hang up are let go: their places are free again for others
python3 - "$port" <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
socks = []
for _ in range(48):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'GET /debug/pprof/profile?seconds=3600 HTTP/1.1\r\nHost: x\r\n\r\n')
    socks.append(s)
time.sleep(1)
for s in socks:
    s.close()
EOF
one_second() { [ "$(fetch "$url/debug/pprof/profile?seconds=1" "$dir/one.pb.gz")" = 200 ]; }
wait_until 200 one_second || fail "a profile is refused after 48 clients asked for an hour and hung up: $(cat "$dir/one.pb.gz")"

# the recording goes on, and ends as it would without --serve, its file written; a profile of
# the next 30 s asked for just before the end is sent with what there was
kill -0 "$rec" 2>/dev/null || fail "the recording ended early: $(cat "$dir/rec.err")"
fetch "$url/debug/pprof/profile?seconds=30" "$dir/last.pb.gz" >"$dir/last.status" &
last=$!
connected() { [ -n "$(ss -tnH state established "dport = :$port")" ]; }
wait_until 300 connected || fail "the client did not connect"
sleep 1 # a tick or four of the recording: the request seen, its seconds begun
kill -TERM "$rec"
set +e
wait "$rec"
got=$?
wait "$last"
set -e
rec=""
[ "$(cat "$dir/last.status")" = 200 ] || fail "a profile asked for before the end: $(cat "$dir/last.status")"
[ "$(samples "$dir/last.pb.gz")" -gt 0 ] || fail "a profile asked for before the end has no samples"
[ "$got" -eq 143 ] || fail "record --serve ended by SIGTERM exited $got: $(cat "$dir/rec.err")"
grep -q ';main;a;b;leaf ' "$dir/rec.folded" || fail "the recording's file has no main;a;b;leaf"
[ "$(fetch "$url/folded" "$dir/gone.txt")" = 000 ] || fail "the server answers after the recording"

# --switch-output: /folded and /profile.pb.gz are still everything so far, the periods that
# ended included, not the current period alone
mkdir "$dir/per"
"$HOTSTACK" record -p "$target" -d 120 --switch-output=1s --serve 0 -o "$dir/per/p.folded" 2>"$dir/per.err" &
rec=$!
wait_until 300 has_line "$dir/per.err" 'serving on' || fail "--switch-output: no 'serving on' line: $(cat "$dir/per.err")"
port=$(sed -n 's|^hotstack: serving on http://127\.0\.0\.1:\([0-9][0-9]*\)/$|\1|p' "$dir/per.err")
periods() { find "$dir/per" -name 'p.2*.folded' | wc -l; }
three_periods() { [ "$(periods)" -ge 3 ]; }
wait_until 300 three_periods || fail "--switch-output=1s wrote $(periods) periods: $(cat "$dir/per.err")"
ended=$(cat "$dir"/per/p.2*.folded | awk '{ n += $NF } END { print n + 0 }')
sleep 1.2 # past a step: no answer made before these files were written is served any more
status=$(fetch "http://127.0.0.1:$port/folded" "$dir/per-all.folded")
[ "$status" = 200 ] || fail "--switch-output: /folded: $status"
so_far=$(awk '{ n += $NF } END { print n + 0 }' "$dir/per-all.folded")
[ "$so_far" -ge "$ended" ] ||
	fail "--switch-output: /folded holds $so_far samples, fewer than the $ended of the $(periods) periods written"
status=$(fetch "http://127.0.0.1:$port/profile.pb.gz" "$dir/per-all.pb.gz")
[ "$status" = 200 ] || fail "--switch-output: /profile.pb.gz: $status"
[ "$(samples "$dir/per-all.pb.gz")" -ge "$ended" ] ||
	fail "--switch-output: /profile.pb.gz holds $(samples "$dir/per-all.pb.gz") samples, fewer than $ended"
kill -INT "$rec"
wait "$rec" || true
rec=""

# top --serve: the same end, with nothing to write that would give the answer time to go
"$HOTSTACK" top --stdio -p "$target" --serve 0 >"$dir/top.out" 2>"$dir/top.err" &
rec=$!
wait_until 300 has_line "$dir/top.err" 'serving on' || fail "top: no 'serving on' line: $(cat "$dir/top.err")"
port=$(sed -n 's|^hotstack: serving on http://127\.0\.0\.1:\([0-9][0-9]*\)/$|\1|p' "$dir/top.err")
fetch "http://127.0.0.1:$port/debug/pprof/profile?seconds=30" "$dir/toplast.pb.gz" >"$dir/toplast.status" &
last=$!
wait_until 300 connected || fail "the client of top did not connect"
sleep 1
kill -INT "$rec"
wait "$rec" || fail "top --serve ended by SIGINT exited $?: $(cat "$dir/top.err")"
wait "$last"
rec=""
[ "$(cat "$dir/toplast.status")" = 200 ] || fail "top: a profile asked for before the end: $(cat "$dir/toplast.status")"
[ "$(samples "$dir/toplast.pb.gz")" -gt 0 ] || fail "top: a profile asked for before the end has no samples"
echo "serve: port $port, 2 s: $next2 samples, so far: $(samples "$dir/all.pb.gz"), periods: $ended, so far: $so_far"
