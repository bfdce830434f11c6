#!/bin/sh
# Hostile inputs of a few MB (made by tests/hostile-inputs.py) stay under 256 MiB of peak RSS,
# and each ends in one line that says what is wrong, or in a warning that says what was cut:
#  - gzip bombs (1 GiB of zeros, a pprof start then 1 GiB in one string, 1 GiB of folded lines,
#    of perf script text) and 3 GiB of zeros on standard input are refused (what is no profile
#    from its first bytes, the rest past 64 times their size);
#  - a 300 KB pprof of 4096 stacks 65536 deep is refused, a 1 KB pprof whose stacks draw to 4 G
#    frames is cut to the frame cap (the samples all counted), so is a 4.8 MB pprof of 300,000
#    samples told apart by their times whose stacks hold 1.2 G frames, pprof values near INT64_MAX and
#    folded counts of 2^62 add up to INT64_MAX with a warning, not to a negative total;
#  - perf.data files of COMPRESSED records that expand 64 times past 64 MiB are read up to there,
#    with a warning; a perf.data cut inside its header says so;
#  - folded counts that are no counts are named, gzipped folded text is read as folded text, a
#    line of a million inlined frames is cut, with a warning;
#  - a 4.5 MB speedscope evented profile whose intervals' stacks hold 4 G frames is read in
#    linear time and memory, its samples all counted, those past the frame cap under one frame,
#    with a warning;
#  - as root: the perf maps of two toy JITs of 3 M lines each are read up to the cap on all of
#    them together, with one warning; a perf map name line of 2 MiB is cut, with a warning.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
command -v zstd >/dev/null || skip "needs zstd (the perf.data files)"
limit_kib=$((256 * 1024))
# AddressSanitizer keeps freed memory in quarantine (256 MiB) and shadows the rest: a looser
# limit, still far below what the bombs asked for before they were bounded (1 to 5 GiB)
if ldd "$HOTSTACK" 2>/dev/null | grep -q libasan; then
	limit_kib=$((768 * 1024))
fi
in=$dir/in
python3 "$SRCDIR/tests/hostile-inputs.py" "$in" gzip-bomb gzip-bomb-pprof pprof-deep pprof-inline pprof-int64 \
	pprof-timed-inline \
	perfdata-zstd perfdata-zstd-samples perf-data-short folded-counts folded-gzip folded-inline folded-bomb \
	perf-script-bomb perf-map-long-name speedscope-evented

# run NAME STATUS COMMAND: runs the shell command with its output in $dir/NAME.out and .err;
# fails unless it exits STATUS with a peak RSS (of the command's largest process) under the
# limit
run() {
	name=$1 want=$2 cmd=$3
	# shellcheck disable=SC2046 # the figures the script prints, one a word
	set -- $(python3 -c '
import resource, subprocess, sys
with open(sys.argv[1] + ".out", "w") as o, open(sys.argv[1] + ".err", "w") as e:
    r = subprocess.run(["sh", "-c", sys.argv[2]], stdout=o, stderr=e)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$dir/$name" "$cmd")
	echo "hostile-inputs: $name: exit $1, peak RSS $(($2 / 1024)) MiB: $(head -c 200 "$dir/$name.err")"
	[ "$1" = "$want" ] || fail "$name: exit $1, expected $want: $(cat "$dir/$name.err")"
	[ "$2" -lt "$limit_kib" ] || fail "$name: peak RSS $(($2 / 1024)) MiB, over $((limit_kib / 1024)) MiB"
}

# error NAME REGEX: the run's stderr is one line, matching REGEX
error() {
	[ "$(wc -l <"$dir/$1.err")" = 1 ] || fail "$1: not one line: $(cat "$dir/$1.err")"
	grep -qE -- "$2" "$dir/$1.err" || fail "$1: stderr does not match /$2/: $(cat "$dir/$1.err")"
}

# warning NAME REGEX: a warning of the run matches REGEX
warning() {
	grep -qE -- "^hotstack: warning: .*$2" "$dir/$1.err" || fail "$1: no warning /$2/: $(cat "$dir/$1.err")"
}

bomb='gzip data expands to more than [0-9]+ MiB from [0-9]+ KiB, over 64 times its size: not read \(a decompression bomb\?\)$'

run gzip-bomb 1 "'$HOTSTACK' report '$in/gzip-bomb.gz'"
error gzip-bomb "gzip-bomb.gz: gzip data holding no profile hotstack reads"
run zeros-stdin 1 "head -c 3G /dev/zero | '$HOTSTACK' report -"
error zeros-stdin "<stdin>: not a profile hotstack reads"
run gzip-bomb-pprof 1 "'$HOTSTACK' report '$in/gzip-bomb-pprof.pb.gz'"
error gzip-bomb-pprof "$bomb"
run folded-bomb 1 "'$HOTSTACK' report '$in/folded-bomb.folded.gz'"
error folded-bomb "$bomb"
run perf-script-bomb 1 "'$HOTSTACK' collapse '$in/perf-script-bomb.txt.gz' -o '$dir/collapse.folded'"
error perf-script-bomb "$bomb"
run pprof-deep 1 "'$HOTSTACK' flame '$in/pprof-deep.pb.gz' -o '$dir/deep.svg'"
error pprof-deep "$bomb"

run pprof-inline 0 "'$HOTSTACK' report '$in/pprof-inline.pb.gz'"
warning pprof-inline "the stacks have more than [0-9]+ frames in all, the most an input of this size may ask for: 16 more"
grep -q '^# 16 samples' "$dir/pprof-inline.out" || fail "pprof-inline: samples lost: $(head -1 "$dir/pprof-inline.out")"
run pprof-inline-flame 0 "'$HOTSTACK' flame '$in/pprof-inline.pb.gz' -o '$dir/inline.svg'"

run pprof-timed-inline 0 "'$HOTSTACK' report '$in/pprof-timed-inline.pb'"
warning pprof-timed-inline "the samples' stacks have more than [0-9]+ frames in all, the most an input of this size may ask for: [0-9]+ more samples are counted under one '\[too many stacks\]' frame"
grep -q '^# 300000 samples' "$dir/pprof-timed-inline.out" ||
	fail "pprof-timed-inline: samples lost: $(head -1 "$dir/pprof-timed-inline.out")"

run pprof-int64 0 "'$HOTSTACK' report '$in/pprof-int64.pb'"
warning pprof-int64 "'samples' values add up past 9223372036854775807: sums are held there"
grep -q '^# 9223372036854775807 samples' "$dir/pprof-int64.out" ||
	fail "pprof-int64: total $(head -1 "$dir/pprof-int64.out")"
! grep -qE ' -[0-9]' "$dir/pprof-int64.out" || fail "pprof-int64: a negative figure: $(cat "$dir/pprof-int64.out")"
run folded-big-count 0 "'$HOTSTACK' report '$in/folded-big-count.folded'"
warning folded-big-count "'samples' values add up past 9223372036854775807"
run folded-negative-count 1 "'$HOTSTACK' report '$in/folded-negative-count.folded'"
error folded-negative-count ": line 3: count '-5' is not a whole number of samples$"
run folded-gzip 0 "'$HOTSTACK' report '$in/folded.folded.gz'"
grep -q '^# 5050 samples' "$dir/folded-gzip.out" || fail "folded-gzip: $(head -1 "$dir/folded-gzip.out")"
run folded-inline 0 "'$HOTSTACK' report '$in/folded-inline.folded'"
warning folded-inline "1 line has more than 65536 frames: the frames past it are left out"

run speedscope-evented 0 "'$HOTSTACK' report '$in/speedscope-evented.json'"
warning speedscope-evented "the samples' stacks have more than [0-9]+ frames in all, the most an input of this size may ask for: [0-9]+ more samples are counted under one '\[too many stacks\]' frame"
grep -q '^# 131071 samples' "$dir/speedscope-evented.out" ||
	fail "speedscope-evented: samples lost: $(head -1 "$dir/speedscope-evented.out")"

run perfdata-zstd 0 "'$HOTSTACK' report '$in/perfdata-zstd.data'"
warning perfdata-zstd "compressed records expand to more than [0-9]+ MiB, over 64 times their size: the records from offset 0x[0-9a-f]+ on are not read"
run perfdata-zstd-samples 0 "'$HOTSTACK' report '$in/perfdata-zstd-samples.data'"
warning perfdata-zstd-samples "compressed records expand to more than"
run perf-data-short 1 "'$HOTSTACK' report '$in/perf-data-short.data'"
error perf-data-short "perf-data-short.data: file too short for its header \(60 bytes, need 104\)$"

# perf maps, written by the profiled processes
if [ "$(id -u)" != 0 ] || [ ! -x "$WORKLOADS/toy-jit" ]; then
	echo "hostile-inputs: perf maps: skipped (needs root and the toy JIT, x86-64)"
	exit 0
fi
require_perf_events
HOSTILE_PERFMAP_LINES=3145728 python3 "$SRCDIR/tests/hostile-inputs.py" "$in" perf-map-huge
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; rm -f "/tmp/perf-$p.map"; done; rm -rf "$dir"' EXIT
# toys NAME MAP N: N toy JITs whose jitdump is handed away (so that their perf map names their
# code), MAP as their perf map, recorded together
toys() {
	pids=""
	for k in $(seq "$3"); do
		mkdir -p "$dir/jd$1$k"
		JITDUMPDIR="$dir/jd$1$k" "$WORKLOADS/toy-jit" 3 >"$dir/toy$1$k" &
		p=$!
		pids="$pids $p"
		for _ in $(seq 100); do
			[ -f "$dir/jd$1$k/jit-$p.dump" ] && break
			sleep 0.05
		done
		chown 65534 "$dir/jd$1$k/jit-$p.dump"
		cp "$2" "/tmp/perf-$p.map"
	done
	run "$1" 0 "'$HOTSTACK' record -p $(echo $pids | tr ' ' ,) -d 2 -o '$dir/$1.folded'"
	for p in $pids; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		rm -f "/tmp/perf-$p.map"
	done
}
toys perf-map-huge "$in/perf-map-huge.map" 2
warning perf-map-huge "perf maps hold more than 2097152 lines or 256 MiB in all: the last [0-9]+ MiB of 2 of them were not read"
toys perf-map-long-name "$in/perf-map-long-name.map" 1
warning perf-map-long-name "/tmp/perf-[0-9]+\.map: 1 name longer than 4096 bytes was cut to that length"
