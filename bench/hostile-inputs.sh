#!/bin/sh
# Peak memory and time of hotstack on each hostile input of tests/hostile-inputs.py: one row per
# input with its size, the peak RSS and wall time /usr/bin/time reports, and hotstack's exit
# status and first line of messages. The figures in docs/limits.md come from this script.
#
#   bench/hostile-inputs.sh [BUILD_DIR] [NAME...]     (default: build, every input)
#
# The perf map rows record a toy JIT with -p (root only: its jitdump is handed to another user so
# that its perf map, a file planted beside it, names its code). Inputs are made once in
# $HOSTILE_DIR (default /tmp/hotstack-hostile).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
hs=$build/hotstack
in=${HOSTILE_DIR:-/tmp/hotstack-hostile}
out=$(mktemp -d /tmp/hostile-out.XXXXXX)
trap 'rm -rf "$out"' EXIT
[ -x "$hs" ] || { echo "no $hs: build first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time)" >&2; exit 1; }
mkdir -p "$in"

names=${*:-"gzip-bomb zeros-stdin gzip-bomb-pprof pprof-deep pprof-deep-flame pprof-inline pprof-timed-inline pprof-int64
perfdata-zstd perfdata-zstd-samples perf-data-short perf-map-huge perf-map-4-procs perf-map-long-name
folded-counts folded-gzip folded-inline folded-bomb perf-script-bomb speedscope-evented
speedscope-evented-flame"}

# make FILE INPUT: generates INPUT unless FILE is there
make() {
	[ -e "$in/$1" ] || python3 "$src/tests/hostile-inputs.py" "$in" "$2"
}

# measure NAME FILE SH_COMMAND: runs the command under time, prints a table row
measure() {
	name=$1 file=$2
	shift 2
	size=$(stat -c %s "$file" 2>/dev/null || echo 0)
	set +e
	/usr/bin/time -v -o "$out/time" sh -c "$*" >"$out/stdout" 2>"$out/stderr"
	rc=$?
	set -e
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out/time")
	# every message but the ones about the toy JIT's jitdump, handed away on purpose
	msg=$(grep -v 'is owned by uid 65534' "$out/stderr" | sed 's/^hotstack: //' | paste -sd'|' | sed 's/|/; /g' | cut -c1-400)
	printf '| %s | %s | %s MiB | %s | exit %s: %s |\n' "$name" "$size" $((rss / 1024)) "$wall" "$rc" "$msg"
}

# perfmap NAME MAP NPROCS: NPROCS toy JITs, each with MAP as its perf map, recorded together
perfmap() {
	[ "$(id -u)" = 0 ] || { echo "| $1 | needs root |"; return; }
	[ -x "$build/tests/workloads/toy-jit" ] || { echo "| $1 | no toy JIT |"; return; }
	pids=""
	for k in $(seq "$3"); do
		mkdir -p "$out/jd$k"
		JITDUMPDIR="$out/jd$k" "$build/tests/workloads/toy-jit" 6 >"$out/toy$k" &
		p=$!
		pids="$pids $p"
		for _ in $(seq 100); do
			[ -f "$out/jd$k/jit-$p.dump" ] && break
			sleep 0.05
		done
		chown 65534 "$out/jd$k/jit-$p.dump"
		cp "$2" "/tmp/perf-$p.map"
	done
	measure "$1" "$2" "'$hs' record -p $(echo $pids | tr ' ' ,) -d 3 -o '$out/pm.folded'"
	for p in $pids; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		rm -f "/tmp/perf-$p.map"
	done
	rm -rf "$out"/jd*
}

echo "| input | size (bytes) | peak RSS | time | result |"
echo "| --- | --- | --- | --- | --- |"
for n in $names; do
	case $n in
	zeros-stdin)
		measure "3 GiB of zeros on stdin" /dev/null "head -c 3G /dev/zero | '$hs' report -" ;;
	pprof-deep-flame)
		make pprof-deep.pb.gz pprof-deep
		measure "$n (flame)" "$in/pprof-deep.pb.gz" "'$hs' flame '$in/pprof-deep.pb.gz' -o '$out/x.svg'" ;;
	speedscope-evented-flame)
		make speedscope-evented.json speedscope-evented
		measure "$n" "$in/speedscope-evented.json" \
			"'$hs' flame '$in/speedscope-evented.json' -o '$out/x.svg'" ;;
	perf-map-huge)
		make perf-map-huge.map perf-map-huge
		perfmap "$n" "$in/perf-map-huge.map" 1 ;;
	perf-map-4-procs)
		make perf-map-huge.map perf-map-huge
		perfmap "$n (4 processes)" "$in/perf-map-huge.map" 4 ;;
	perf-map-long-name)
		make perf-map-long-name.map perf-map-long-name
		perfmap "$n" "$in/perf-map-long-name.map" 1 ;;
	perf-script-bomb)
		make perf-script-bomb.txt.gz perf-script-bomb
		measure "$n (collapse)" "$in/perf-script-bomb.txt.gz" \
			"'$hs' collapse '$in/perf-script-bomb.txt.gz' -o '$out/x.folded'" ;;
	folded-counts)
		make folded-big-count.folded folded-counts
		measure folded-big-count "$in/folded-big-count.folded" "'$hs' report '$in/folded-big-count.folded'"
		measure folded-negative-count "$in/folded-negative-count.folded" \
			"'$hs' report '$in/folded-negative-count.folded'" ;;
	*)
		case $n in
		gzip-bomb) f=gzip-bomb.gz ;;
		gzip-bomb-pprof | pprof-deep | pprof-inline) f=$n.pb.gz ;;
		pprof-int64 | pprof-timed-inline) f=$n.pb ;;
		perfdata-* | perf-data-*) f=$n.data ;;
		folded-gzip) f=folded.folded.gz ;;
		folded-bomb) f=$n.folded.gz ;;
		folded-*) f=$n.folded ;;
		speedscope-*) f=$n.json ;;
		*) echo "unknown input $n" >&2; exit 1 ;;
		esac
		make "$f" "$n"
		measure "$n" "$in/$f" "'$hs' report '$in/$f'" ;;
	esac
done
