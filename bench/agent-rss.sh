#!/bin/bash
# hotstack as an always-on agent under process churn: `record -a -F FREQ --switch-output=PERIOD`
# for DURATION seconds while thousands of short-lived processes start and end (CHURN a second:
# sh running a program that maps libc, then exits), and its resident memory (VmRSS) at the
# times in AT (seconds). Flat means the last within 10% of the first: what it holds is its live
# processes' and its last period's, not everything it ever saw. perf record has no such mode
# (its memory is the kernel's rings and its output file), so there is no ratio against it.
#
#   bench/agent-rss.sh                          # DURATION=1800 AT="60 600 1800" FREQ=99 CHURN=200
#   DURATION=300 AT="60 120 300" bench/agent-rss.sh   # a shorter look
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$build/hotstack
secs=${DURATION:-1800}
at=${AT:-60 600 1800}
freq=${FREQ:-99}
churn=${CHURN:-200}
period=${PERIOD:-10s}

[ -x "$hotstack" ] || {
	echo "agent-rss: $hotstack missing: build first (ninja -C build)" >&2
	exit 1
}
tmp=$(mktemp -d /tmp/hotstack-agent-rss.XXXXXX)
spawner=""
rec=""
trap 'kill $spawner $rec 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# CHURN short-lived processes a second, each a new pid with its own mappings
(
	while :; do
		for _ in $(seq "$churn"); do /bin/true; done
		sleep 1
	done
) &
spawner=$!

"$hotstack" record -q -a -F "$freq" --switch-output="$period" --switch-max-files=3 -d "$((secs + 10))" \
	-o "$tmp/agent.pb.gz" &
rec=$!
start=$(date +%s)
first=""
echo "agent-rss: record -a -F $freq --switch-output=$period for $secs s, $churn processes a second started and ended"
for t in $at; do
	while [ $(($(date +%s) - start)) -lt "$t" ]; do
		kill -0 "$rec" 2>/dev/null || break
		sleep 1
	done
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$rec/status" 2>/dev/null)
	[ -n "$rss" ] || {
		echo "agent-rss: hotstack ended before $t s" >&2
		exit 1
	}
	first=${first:-$rss}
	awk -v t="$t" -v r="$rss" -v f="$first" 'BEGIN { printf "  at %5d s: RSS %7.1f MiB (%+.1f%% from the first)\n", t, r / 1024, 100 * (r - f) / f }'
done
kill -INT "$rec" 2>/dev/null
wait "$rec" 2>/dev/null
