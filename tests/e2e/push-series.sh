#!/bin/sh
# record -a --push: series that users cannot forge or flood. In cgroups of its own (a unit's,
# hs-unit-N.service, and a session's scope), beside a root unit whose short-lived processes are
# pushed as the unit's and a root program in root's directory, nobody renames a process after
# both (prctl), runs a copy of the program under its name, and one mounted over it in a mount
# namespace of its own: none of them gets their series. 150 programs of nobody's make at most
# HS_SERVICE_MAX_SERIES + 1 series a period, the rest as one, said once. --push-series-by comm
# names processes by command name, as before: there the renamed process gets the unit's series.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
[ "$(id -u)" -eq 0 ] || skip "needs root: processes of another user, cgroups"
nobody=$(id -u nobody 2>/dev/null) || skip "no user nobody"
python=/usr/bin/python3
[ -x "$python" ] || skip "no $python for nobody to run"
cgroot=/sys/fs/cgroup
[ "$(stat -fc %T $cgroot 2>/dev/null)" = cgroup2fs ] || cgroot=/sys/fs/cgroup/unified
[ "$(stat -fc %T $cgroot 2>/dev/null)" = cgroup2fs ] || skip "no cgroup2 hierarchy to place the processes in"
cap=$(sed -n 's/^#define HS_SERVICE_MAX_SERIES \([0-9]*\).*/\1/p' "$SRCDIR/src/push/service.h")
[ -n "$cap" ] || fail "no HS_SERVICE_MAX_SERIES in src/push/service.h"
receiver=$SRCDIR/tests/e2e/ingest-receiver.py
# what is refused, at once
expect_status 2 "$HOTSTACK" record -a -d 1 --push http://127.0.0.1:1 --push-series-by pid
expect_stderr "^hotstack: invalid --push-series-by 'pid' \(service or comm\)$"
expect_status 2 "$HOTSTACK" record -a -d 1 --push-series-by comm -o "$dir/x.folded"
expect_stderr "^hotstack: --push-series-by goes with --push URL$"
spin=$WORKLOADS/duty
tag=$(($$ % 100000))
unit=hs-unit-$tag prog=hsprog$tag short=hsshort$tag
slice=$cgroot/hs-series-$tag.slice
pids="" recs="" # receivers, recordings

# programs in a directory of root's (under /tmp, root's and sticky), and in one of nobody's
sys=$(mktemp -d /tmp/hs-series-sys.XXXXXX)
usr=$(mktemp -d /tmp/hs-series-usr.XXXXXX)
stop_workloads() { # all that runs in the test's cgroups, which it started
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		# shellcheck disable=SC2046 # a list of pids
		kill $(cat "$slice"/*/cgroup.procs "$slice/cgroup.procs" 2>/dev/null) 2>/dev/null || true
		rmdir "$slice/$unit.service" "$slice/session-$tag.scope" "$slice" 2>/dev/null || true
		[ -d "$slice" ] || break
		sleep 0.3
	done
}
cleanup() {
	# shellcheck disable=SC2086 # lists of pids
	kill $recs $pids 2>/dev/null || true
	stop_workloads
	rm -rf "$sys" "$usr" "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
chmod 755 "$sys"
cp "$spin" "$sys/$prog"
cp "$spin" "$sys/$short"
chown "$nobody" "$usr"
mkdir "$slice" 2>/dev/null || skip "cannot make a cgroup under $cgroot"
mkdir "$slice/$unit.service" "$slice/session-$tag.scope"
scope=$slice/session-$tag.scope
# in-cgroup CGROUP CMD...: CMD in CGROUP; as-nobody CMD...: CMD as nobody. Each execs: a
# command started with them in the background is $!.
printf '#!/bin/sh\necho $$ >"$1/cgroup.procs" || exit 1\nshift\nexec "$@"\n' >"$dir/in-cgroup"
printf '#!/bin/sh\nexec setpriv --reuid %s --regid %s --clear-groups "$@"\n' "$nobody" "$(id -g nobody)" \
	>"$dir/as-nobody"
chmod +x "$dir/in-cgroup" "$dir/as-nobody"
in_cgroup=$dir/in-cgroup as_nobody=$dir/as-nobody
free_port() {
	"$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
profiles() { # DIR: "FROM SERIES FILE.pb.gz" of every profile the receiver took, series without {}
	"$python" -c 'import glob, json, sys
for j in sorted(glob.glob(sys.argv[1] + "/*.json")):
    q = json.load(open(j))["query"]
    print(q["from"], q["name"].split("{")[0], j[:-5] + ".pb.gz")' "$1"
}

# the unit: short-lived processes (30 ms of CPU each), a few a second, each gone before its
# period ends; root's program outside any unit, at a low rate. Both above the priority of the
# rest, so that a busy machine still runs them.
"$in_cgroup" "$slice/$unit.service" nice -n -5 sh -c 'while :; do "$0" 0.03; sleep 0.1; done' "$sys/$short" &
"$in_cgroup" "$scope" nice -n -5 sh -c 'while :; do "$0" 0.02; sleep 0.2; done' "$sys/$prog" &
# nobody: a process renamed after the unit, one after the program (python, spinning a tenth of
# the time)
renamer='
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)
while True:
    end = time.monotonic() + 0.01
    while time.monotonic() < end:
        pass
    time.sleep(0.09)'
"$in_cgroup" "$scope" "$as_nobody" "$python" -c "$renamer" "$unit" &
renamed_unit=$!
"$in_cgroup" "$scope" "$as_nobody" "$python" -c "$renamer" "$prog" &
renamed_prog=$!
# nobody's copy of the program, under its name, and one mounted over root's own
cp "$spin" "$usr/$prog"
chown "$nobody" "$usr/$prog"
"$in_cgroup" "$scope" "$as_nobody" "$usr/$prog" 300 5 50 &
copy=$!
mounted=""
if "$as_nobody" unshare -Urm true 2>/dev/null; then
	"$in_cgroup" "$scope" "$as_nobody" unshare -Urm sh -c 'mount --bind "$0" "$1" && exec "$1" 300 5 50' \
		"$usr/$prog" "$sys/$prog" &
	mounted=$!
fi
# the flood: 150 programs of nobody's, each its own name, each running a millisecond in 250
# (without their symbols where strip is here: the recordings read each new file's)
cp "$spin" "$usr/f"
! command -v strip >/dev/null 2>&1 || strip "$usr/f"
i=0
while [ $i -lt 150 ]; do
	cp "$usr/f" "$usr/f$i"
	i=$((i + 1))
done
chown "$nobody" "$usr"/f*
"$in_cgroup" "$scope" "$as_nobody" sh -c '
	i=0
	while [ $i -lt 150 ]; do "$0/f$i" 300 1 250 & i=$((i + 1)); done
	wait' "$usr" &
flood_started() { [ "$(wc -l <"$scope/cgroup.procs")" -ge 153 ]; }
wait_until 100 flood_started || fail "the flood did not start: $(wc -l <"$scope/cgroup.procs") processes"
for p in $renamed_unit $renamed_prog $copy $mounted; do
	kill -0 "$p" 2>/dev/null || fail "nobody's process $p did not start"
done

# two recordings side by side: the default names, and --push-series-by comm
for by in service comm; do
	port=$(free_port)
	mkdir "$dir/$by"
	nice -n -10 "$python" "$receiver" "$port" "$dir/$by" &
	pids="$pids $!"
	wait_until 100 test -e "$dir/$by/ready" || fail "the receiver did not start"
	# the recordings and the receivers above the flood's priority: on a loaded machine, time
	# to read the samples and to send and take every profile
	nice -n -10 "$HOTSTACK" record -a -F 499 -g fp -m 256 -d 8 --switch-output=4s \
		--push "http://127.0.0.1:$port" --push-series-by $by 2>"$dir/$by.err" &
	recs="$recs $!"
done
for r in $recs; do
	wait "$r" || fail "record -a --push failed: $(cat "$dir"/*.err)"
done
recs=""
stop_workloads

# SERIES COMM PID of every sample of the profiles a receiver got, but those of the series whose
# name matches the extended regular expression $2 (the flood's, in a few hundred profiles)
samples() {
	profiles "$1" | awk -v skip="$2" '$2 !~ skip' | while read -r _ series f; do
		"$HOTSTACK" convert "$f" -o - --format folded --root pid |
			awk -v s="$series" '{ r = $0; sub(/;.*/, "", r); sub(/ [0-9]+$/, "", r)
				n = match(r, /-[0-9]+$/); if (n) print s, substr(r, 1, n - 1), substr(r, n + 1) }'
	done | sort -u
}
in_series() { # FILE SERIES PID: whether the series holds a sample of the process
	awk -v s="$2" -v p="$3" '$1 == s && $3 == p { found = 1 } END { exit !found }' "$1"
}

for by in service comm; do
	profiles "$dir/$by" | awk '{ print $1, $2 }' | sort -u >"$dir/$by.periods"
	[ "$(awk '{ print $1 }' "$dir/$by.periods" | sort -u | wc -l)" -ge 2 ] || fail "$by: fewer than 2 periods pushed"
	most=$(awk '{ n[$1]++ } END { for (f in n) if (n[f] > m) m = n[f]; print m + 0 }' "$dir/$by.periods")
	[ "$most" -le $((cap + 1)) ] || fail "$by: $most series in one period, more than $cap + 1"
	grep -q " other-services$" "$dir/$by.periods" || fail "$by: 150 programs of nobody's, and no series other-services"
	[ "$(grep -c "more than $cap services in one period: [0-9]* of them pushed as one series, 'other-services'" \
		"$dir/$by.err")" -eq 1 ] || fail "$by: the folded services not said once: $(cat "$dir/$by.err")"
	samples "$dir/$by" "^(user-${nobody}[.])?f[0-9]+\$" >"$dir/$by.samples"
	for s in "$unit" "$prog"; do
		grep -q " $s$" "$dir/$by.periods" || fail "$by: no series $s, pushed out by the flood?"
	done
done

# the default: the unit's, and root's program's, series hold none of nobody's processes
s=$dir/service.samples
for p in $renamed_unit $renamed_prog $copy $mounted; do
	for series in "$unit" "$prog"; do
		! in_series "$s" "$series" "$p" || fail "nobody's process $p is in series $series: $(grep " $p\$" "$s")"
	done
done
in_series "$s" "user-$nobody.$prog" "$copy" || fail "nobody's copy of $prog is not in user-$nobody.$prog"
[ -z "$mounted" ] || in_series "$s" "user-$nobody.$prog" "$mounted" ||
	fail "nobody's copy mounted over $sys/$prog is not in user-$nobody.$prog: $(grep " $mounted\$" "$s")"
# every sample of the unit's short-lived processes is the unit's, none by their command name
n=$(awk -v c="$short" '$2 == c { print $3 }' "$s" | sort -u | wc -l)
[ "$n" -ge 3 ] || fail "$n short-lived processes of the unit sampled"
bad=$(awk -v c="$short" -v u="$unit" '$2 == c && $1 != u' "$s")
[ -z "$bad" ] || fail "short-lived processes of the unit pushed as another service: $bad"
# by command name, as before: the process renamed after the unit is in its series
in_series "$dir/comm.samples" "$unit" "$renamed_unit" ||
	fail "--push-series-by comm: the process named $unit is not in its series"
exit 0
