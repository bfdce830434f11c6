#!/bin/sh
# record --push URL against a receiver of the ingest contract (ingest-receiver.py): every
# period arrives, each a profile go tool pprof reads, named SERVICE{labels}, with the
# credentials and tenant from the environment; a store down for the first seconds, or busy,
# loses nothing, and the periods pushed tile time; with -a a series per service; with
# --push-spool what the store could not take waits on disk and goes first next time. Needs go
# tool pprof (golang-go).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v go >/dev/null 2>&1 || skip "go is not installed (apt-get install golang-go)"
export PPROF_TMPDIR="$dir" HOME="$dir"
# shellcheck source=push-lib.sh
. "$(dirname "$0")/push-lib.sh"

# for longer than the test takes on a loaded machine (killed at its end)
"$WORKLOADS/threads" 1 900 >/dev/null &
target=$!
trap 'kill $target $pids 2>/dev/null || true; rm -rf "$dir"' EXIT

total() { # the samples of profiles, through hotstack's own reading
	for f in "$@"; do "$HOTSTACK" convert "$f" -o - --format folded; done | awk '{ n += $NF } END { print n + 0 }'
}

query() { # FILE.json KEY: a query parameter the receiver saw
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["query"][sys.argv[2]])' "$1" "$2"
}

header() { # FILE.json NAME
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["headers"].get(sys.argv[2], ""))' "$1" "$2"
}

# 1. the store down for the first 5 s of an 8 s recording: every period arrives all the same
port=$(free_port)
mkdir "$dir/in1"
(sleep 5 && exec python3 "$receiver" "$port" "$dir/in1") &
pids="$pids $!"
mkdir "$dir/files"
HOTSTACK_PUSH_TOKEN=s3cret HOTSTACK_PUSH_TENANT=team-a "$HOTSTACK" record -p "$target" -d 8 --switch-output=1s \
	--push "http://127.0.0.1:$port" --push-label env=test --push-label region=here -o "$dir/files/p.folded" \
	2>"$dir/push1.err" || fail "record --push failed: $(cat "$dir/push1.err")"
periods=$(find "$dir/files" -name 'p.*.folded' | wc -l)
got=$(find "$dir/in1" -name '*.pb.gz' | wc -l)
[ "$periods" -ge 6 ] || fail "8 s at --switch-output=1s made $periods periods"
[ "$got" -eq "$periods" ] || fail "$got profiles arrived of $periods periods"
grep -q "cannot push to http://127.0.0.1:$port/ingest" "$dir/push1.err" ||
	fail "the store being down was not said: $(cat "$dir/push1.err")"
[ "$(grep -c 'cannot push' "$dir/push1.err")" -eq 1 ] || fail "the store being down was said more than once"
[ "$(total "$dir"/in1/*.pb.gz)" -eq "$(cat "$dir"/files/p.*.folded | awk '{ n += $NF } END { print n }')" ] ||
	fail "the profiles pushed and the files of the same periods hold different samples"
last=0
for j in "$dir"/in1/*.json; do
	[ "$(query "$j" name)" = "threads{env=test,region=here}" ] || fail "$j: series $(query "$j" name)"
	[ "$(query "$j" format)" = pprof ] || fail "$j: format $(query "$j" format)"
	[ "$(query "$j" sampleRate)" = 999 ] || fail "$j: sampleRate $(query "$j" sampleRate)"
	[ "$(header "$j" authorization)" = "Bearer s3cret" ] || fail "$j: no bearer token"
	[ "$(header "$j" x-scope-orgid)" = team-a ] || fail "$j: no X-Scope-OrgID"
	from=$(query "$j" from)
	[ "$from" -ge "$last" ] && [ "$(query "$j" until)" -ge "$from" ] || fail "$j: from/until out of order"
	last=$from
	go tool pprof -top "${j%.json}.pb.gz" >"$dir/top.txt" 2>"$dir/top.err" ||
		fail "go tool pprof does not read ${j%.json}.pb.gz: $(cat "$dir/top.err")"
	grep -q spin_thread "$dir/top.txt" || fail "${j%.json}.pb.gz: no spin_thread"
done
# the periods tile time: each one's from (whole seconds) is the last one's until
for j in "$dir"/in1/*.json; do echo "$(query "$j" from) $(query "$j" until)"; done | sort -n >"$dir/periods.txt"
awk 'NR > 1 && $1 != until { exit 1 } { until = $2 }' "$dir/periods.txt" ||
	fail "the periods pushed overlap or leave gaps: $(cat "$dir/periods.txt")"

# 2. system-wide, a busy store (503 twice), basic authentication: a series per service
port=$(free_port)
receive "$port" "$dir/in2" --fail-first 2
HOTSTACK_PUSH_USER=me HOTSTACK_PUSH_PASSWORD=pw "$HOTSTACK" record -q -a -d 3 --push "http://127.0.0.1:$port/" \
	2>"$dir/push2.err" || fail "record -a --push failed: $(cat "$dir/push2.err")"
names=$(for j in "$dir"/in2/*.json; do query "$j" name; done | sort -u)
# the workload's program: its name alone where the checkout's directories are root's alone
echo "$names" | grep -qxE '(user-[0-9]+[.])?threads\{\}' || fail "-a: no series for the threads workload: $names"
[ "$(echo "$names" | wc -l)" -ge 2 ] || fail "-a: one series for the whole system: $names"
[ "$(header "$dir/in2/1.json" authorization)" = "Basic $(printf me:pw | base64)" ] || fail "no basic authentication"

# 3. --push-spool: the store down all along, then up: what waited goes first
port=$(free_port)
"$HOTSTACK" record -p "$target" -d 2 --switch-output=1s --push "http://127.0.0.1:$port" --push-spool "$dir/spool" \
	2>"$dir/push3.err" || fail "record --push-spool failed: $(cat "$dir/push3.err")"
spooled=$(find "$dir/spool" -name '*.push' | wc -l)
[ "$spooled" -ge 2 ] || fail "the store down: $spooled profiles in the spool"
grep -q "wait in $dir/spool" "$dir/push3.err" || fail "the profiles left in the spool were not said"
[ "$(stat -c %a "$dir/spool")" = 700 ] || fail "the spool is not the user's own"
receive "$port" "$dir/in3"
"$HOTSTACK" record -v -p "$target" -d 1 --push "http://127.0.0.1:$port" --push-spool "$dir/spool" \
	>/dev/null 2>"$dir/push3b.err" || fail "the second record --push-spool failed: $(cat "$dir/push3b.err")"
grep -q "$spooled were waiting in $dir/spool from an earlier recording" "$dir/push3b.err" ||
	fail "what the spool held was not said: $(cat "$dir/push3b.err")"
got=$(find "$dir/in3" -name '*.pb.gz' | wc -l)
[ "$got" -ge $((spooled + 1)) ] || fail "$got profiles arrived, $spooled of them spooled before"
[ "$(find "$dir/spool" -name '*.push' | wc -l)" -eq 0 ] || fail "the spool was not emptied"
[ "$(query "$dir/in3/1.json" from)" -le "$(query "$dir/in3/$got.json" from)" ] || fail "the spooled profiles did not go first"

# 4. the agent's command line, as contrib/hotstack-agent.service runs it: a SIGTERM (systemctl
# stop) sends the current period, a minute's not yet over, before hotstack exits
unit=$SRCDIR/contrib/hotstack-agent.service
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|/usr/local/bin/hotstack|$HOTSTACK|" "$unit" >"$dir/hotstack-agent.service"
	systemd-analyze verify "$dir/hotstack-agent.service" >"$dir/verify.txt" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$dir/verify.txt")"
fi
port=$(free_port)
receive "$port" "$dir/in4"
cmd=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/^ExecStart=//; s/\\$//' | tr -d '\t\n')
cmd=$(echo "$cmd" | sed "s|/usr/local/bin/hotstack|$HOTSTACK|; s|\${HOTSTACK_PUSH_URL}|http://127.0.0.1:$port|;
	s|/var/lib/hotstack-agent|$dir/agent|; s|%H|testhost|")
mkdir "$dir/agent"
# shellcheck disable=SC2086 # the unit's words, split as systemd splits them
$cmd &
agent=$!
sleep 3
kill -TERM "$agent"
set +e
wait "$agent"
status=$?
set -e
[ "$status" -eq 143 ] || fail "the agent stopped by SIGTERM exited $status"
[ -e "$dir/in4/1.json" ] || fail "the agent stopped before its first minute pushed nothing"
query "$dir/in4/1.json" name | grep -q '{host=testhost}$' || fail "the agent's series: $(query "$dir/in4/1.json" name)"

# 5. what is refused, at once
expect_status 2 "$HOTSTACK" record -a -d 1 --push ftp://example
expect_stderr "is not a URL hotstack pushes to: http\\(s\\):// \\(Pyroscope.s /ingest\\)"
expect_status 2 "$HOTSTACK" record -a -d 1 --push http://127.0.0.1:1 --push-label 'bad label'
expect_stderr "invalid --push-label"
expect_status 2 "$HOTSTACK" record -a -d 1 --push-label env=x -o "$dir/x.folded"
expect_stderr "go with --push URL"
exit 0
