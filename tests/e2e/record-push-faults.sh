#!/bin/sh
# record --push where things go wrong, against ingest-receiver.py's misbehaving modes: a SIGKILL
# with the store down leaves every finished period in the spool, and the next recording sends
# each once, oldest first, periods tiling time; a store that moved (307, 308) gets its
# profiles; one that never answers or answers without end does not hold the end past the
# flush time, nor gets a profile twice, and a resend carries the same identity; a password in
# the URL is never shown; a spool that is a link, someone else's or writable by all is
# refused, and files in it that hotstack did not write are left alone, a huge one unread.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
# shellcheck source=push-lib.sh
. "$(dirname "$0")/push-lib.sh"

# for longer than the test takes on a loaded machine (killed at its end)
"$WORKLOADS/threads" 1 900 >/dev/null &
target=$!
trap 'kill $target $pids 2>/dev/null || true; rm -rf "$dir"' EXIT

# DIR: each profile the receiver took, in the order it came: "name from until key"
received() {
	python3 - "$1" <<'EOF'
import json, os, sys
d = sys.argv[1]
n = sorted(int(f[:-5]) for f in os.listdir(d) if f.endswith('.json'))
for i in n:
    m = json.load(open(os.path.join(d, '%d.json' % i)))
    q = m['query']
    print(q['name'], q['from'], q['until'], m['headers'].get('idempotency-key', '-'))
EOF
}

now() { date +%s.%N; }
# the seconds from $1 to now, whole
since() { echo "$1 $(now)" | awk '{ printf "%d", $2 - $1 }'; }

count() { # PATTERN: files matching it
	# shellcheck disable=SC2086 # the pattern is to be expanded
	set -- $1
	[ -e "$1" ] || { echo 0; return; }
	echo $#
}

# 1. SIGKILL with the store down: every period that ended is in the spool already; the next
# recording sends each of them once, in time order, before its own, and periods tile time
port=$(free_port)
mkdir "$dir/k"
"$HOTSTACK" record -p "$target" --switch-output=1s --push "http://127.0.0.1:$port" --push-spool "$dir/spool" \
	-o "$dir/k/p.folded" 2>"$dir/k.err" &
rec=$!
pids="$pids $rec"
three_periods() { [ "$(count "$dir/k/p.*.folded")" -ge 3 ]; }
wait_until 300 three_periods || fail "no three periods in 30 s: $(cat "$dir/k.err")"
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
periods=$(count "$dir/k/p.*.folded")
spooled=$(count "$dir/spool/*.push")
[ "$spooled" -ge "$periods" ] || fail "SIGKILL with the store down: $spooled profiles in the spool of $periods periods"
# a temporary file a kill left in the middle of a write
: >"$dir/spool/00000000000000000001-0000000001.push.tmp"
receive "$port" "$dir/in1"
"$HOTSTACK" record -v -p "$target" -d 1 --push "http://127.0.0.1:$port" --push-spool "$dir/spool" \
	>/dev/null 2>"$dir/k2.err" || fail "the next recording failed: $(cat "$dir/k2.err")"
[ "$(count "$dir/spool/*.push*")" -eq 0 ] || fail "the spool was not emptied: $(ls "$dir/spool")"
grep -q "not a profile" "$dir/k2.err" && fail "a temporary file of hotstack's taken for someone else's: $(cat "$dir/k2.err")"
received "$dir/in1" >"$dir/in1.txt"
[ "$(wc -l <"$dir/in1.txt")" -ge $((spooled + 1)) ] || fail "$spooled spooled, received: $(cat "$dir/in1.txt")"
[ "$(cut -d' ' -f1-3 "$dir/in1.txt" | sort | uniq -d)" = "" ] || fail "a profile sent twice: $(cat "$dir/in1.txt")"
# in the order they came: each period's from its predecessor's until, whole seconds
awk -v n="$spooled" 'NR > 1 && NR <= n && $2 != until { print "period " NR " from " $2 ", the last until " until; bad = 1 }
	NR <= n && $3 < $2 { print "period " NR ": until before from"; bad = 1 }
	{ until = $3 } END { exit bad }' "$dir/in1.txt" >"$dir/order.txt" ||
	fail "the spooled profiles out of order, or not tiling time: $(cat "$dir/order.txt") in $(cat "$dir/in1.txt")"
awk -v n="$spooled" 'NR == n { last = $3 } NR == n + 1 && $2 < last { exit 1 }' "$dir/in1.txt" ||
	fail "the new recording's profile went before the spooled ones: $(cat "$dir/in1.txt")"

# 2. a store that moved: followed, the profile POSTed where the redirect says
for code in 307 308; do
	port=$(free_port)
	receive "$port" "$dir/r$code" --redirect "$code"
	"$HOTSTACK" record -p "$target" -d 2 --switch-output=1s --push "http://127.0.0.1:$port" \
		2>"$dir/r$code.err" || fail "record against a store answering $code failed: $(cat "$dir/r$code.err")"
	[ "$(count "$dir/r$code/*.json")" -ge 2 ] || fail "a store answering $code got $(count "$dir/r$code/*.json") profiles"
	grep -q "not pushed" "$dir/r$code.err" && fail "$code: $(cat "$dir/r$code.err")"
done

# 3. a store that takes the profile and never answers: the end waits the flush time (10 s) and
# a second for the request under way, no longer (a generous bound here); the profile sent once
# and kept in the spool, whose resend carries the same identity
port=$(free_port)
receive "$port" "$dir/hang" --hang
t=$(now)
"$HOTSTACK" record -p "$target" -d 2 --push "http://127.0.0.1:$port" --push-spool "$dir/spool2" 2>"$dir/hang.err" ||
	fail "record against a store that never answers failed: $(cat "$dir/hang.err")"
took=$(since "$t")
[ "$took" -lt 25 ] || fail "a 2 s recording with a store that never answers took $took s"
[ "$(count "$dir/hang/*.json")" -eq 1 ] || fail "the one profile was sent $(count "$dir/hang/*.json") times"
[ "$(count "$dir/spool2/*.push")" -eq 1 ] || fail "the profile with no answer is not kept in the spool"
port=$(free_port)
receive "$port" "$dir/again"
"$HOTSTACK" record -p "$target" -d 1 --push "http://127.0.0.1:$port" --push-spool "$dir/spool2" 2>"$dir/again.err" ||
	fail "the resending recording failed: $(cat "$dir/again.err")"
first=$(received "$dir/hang")
[ "$(received "$dir/again" | head -n1)" = "$first" ] ||
	fail "the resend is not the same profile: $first, then $(received "$dir/again" | head -n1)"
echo "$first" | grep -q ' "hotstack-[0-9]*-[0-9a-f]*"$' || fail "no Idempotency-Key: $first"

# 4. a store that accepts with an answer that never ends: taken at its status, each profile once
port=$(free_port)
receive "$port" "$dir/endless" --endless
t=$(now)
"$HOTSTACK" record -p "$target" -d 3 --switch-output=1s --push "http://127.0.0.1:$port" 2>"$dir/endless.err" ||
	fail "record against an endless answer failed: $(cat "$dir/endless.err")"
took=$(since "$t")
[ "$took" -lt 20 ] || fail "a 3 s recording with an endless answer took $took s"
received "$dir/endless" >"$dir/endless.txt"
[ "$(wc -l <"$dir/endless.txt")" -ge 3 ] || fail "an endless answer: $(cat "$dir/endless.txt")"
[ "$(cut -d' ' -f1-3 "$dir/endless.txt" | sort | uniq -d)" = "" ] || fail "a profile sent twice: $(cat "$dir/endless.txt")"
grep -q "not pushed" "$dir/endless.err" && fail "an endless answer: $(cat "$dir/endless.err")"

# 5. a password in the URL is never shown: the store down, then its warnings
port=$(free_port)
"$HOTSTACK" record -v -p "$target" -d 3 --switch-output=1s --push "http://me:pw-never-shown@127.0.0.1:$port" \
	>/dev/null 2>"$dir/pw.err" || fail "record with a password in the URL failed: $(cat "$dir/pw.err")"
grep -q "cannot push to http://\*\*\*@127.0.0.1:$port/ingest" "$dir/pw.err" || fail "no warning: $(cat "$dir/pw.err")"
grep -q "pw-never-shown" "$dir/pw.err" && fail "the password shown: $(cat "$dir/pw.err")"

# 6. spools that are not safe to use: a link, someone else's, writable by all
mkdir "$dir/elsewhere"
ln -s "$dir/elsewhere" "$dir/link"
expect_status 2 "$HOTSTACK" record -p "$target" -d 1 --push http://127.0.0.1:1 --push-spool "$dir/link"
expect_stderr "^hotstack: --push: the push spool '.*/link' is a symbolic link: refused"
[ "$(count "$dir/elsewhere/*")" -eq 0 ] || fail "written through the link: $(ls "$dir/elsewhere")"
mkdir -m 700 "$dir/theirs"
chown 65534 "$dir/theirs"
expect_status 2 "$HOTSTACK" record -p "$target" -d 1 --push http://127.0.0.1:1 --push-spool "$dir/theirs"
expect_stderr "the push spool '.*/theirs' belongs to uid 65534, not to this user \(uid 0\): refused"
mkdir -m 777 "$dir/open"
expect_status 2 "$HOTSTACK" record -p "$target" -d 1 --push http://127.0.0.1:1 --push-spool "$dir/open"
expect_stderr "the push spool '.*/open' is writable by others \(mode 0777\): refused"
[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "more than one line: $(cat "$dir/.err")"

# 7. files in a good spool that hotstack did not write: left alone, said once; a huge sparse one
# in its format is not read (bounded memory)
mkdir -m 700 "$dir/spool3"
printf 'not a profile\n' >"$dir/spool3/00000000000000000001-0000000001.push"
printf 'mine\n' >"$dir/spool3/notes.push"
printf 'HSPUSH1 1 2 24\nforged-service{env=prod}\n' >"$dir/spool3/00000000000000000002-0000000002.push"
truncate -s 1G "$dir/spool3/00000000000000000002-0000000002.push"
ls -l "$dir/spool3" >"$dir/spool3.before"
port=$(free_port)
receive "$port" "$dir/in3"
/usr/bin/time -f %M -o "$dir/rss" "$HOTSTACK" record -p "$target" -d 2 --switch-output=1s \
	--push "http://127.0.0.1:$port" --push-spool "$dir/spool3" 2>"$dir/spool3.err" ||
	fail "record with others' files in the spool failed: $(cat "$dir/spool3.err")"
ls -l "$dir/spool3" >"$dir/spool3.after"
cmp -s "$dir/spool3.before" "$dir/spool3.after" ||
	fail "files hotstack did not write were touched: $(cat "$dir/spool3.before") then $(cat "$dir/spool3.after")"
[ "$(grep -c "not a profile hotstack spooled: left alone" "$dir/spool3.err")" -eq 1 ] ||
	fail "the files left alone were not said once: $(cat "$dir/spool3.err")"
received "$dir/in3" | grep -q forged && fail "a file hotstack did not write was sent: $(received "$dir/in3")"
[ "$(count "$dir/in3/*.json")" -ge 2 ] || fail "the recording's own profiles were not sent"
rss=$(tail -n1 "$dir/rss")
[ "$rss" -lt 262144 ] || fail "a 1 GiB sparse file in the spool: $rss KiB resident"
exit 0
