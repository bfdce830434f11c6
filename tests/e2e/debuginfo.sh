#!/bin/sh
# Stripped programs are named from their debug information wherever gdb would find it: a debug
# file by build-id under the debug root ($HOTSTACK_DEBUG_DIR standing in for /usr/lib/debug),
# one named by .gnu_debuglink beside the program, one served by a debuginfod server (and only
# when DEBUGINFOD_URLS says so), and the MiniDebugInfo in the program's own .gnu_debugdata.
# Each case is a build with its own prefix on its static functions (alpha_*, bravo_*, ...), so
# a name can only have come from that build's debug information.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

for t in objcopy strip nm readelf; do
	command -v $t >/dev/null 2>&1 || skip "$t is not installed (apt-get install binutils)"
done
require_perf_events
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
export XDG_CACHE_HOME="$dir/cache"
mkdir -p "$dir/empty"
# no debug file of the system's may stand in for ours: an empty debug root unless a case says
export HOTSTACK_DEBUG_DIR="$dir/empty"
skipped=""

# build NAME: $dir/NAME, the build of tests/workloads/prefixed-spin.c whose functions are
# NAME_* (with symbols and DWARF), $dir/NAME.debug (its debug file) and $dir/NAME.stripped (no
# .symtab, no DWARF)
build() {
	cp "$WORKLOADS/prefixed-spin-$1" "$dir/$1" || fail "no build $1 of prefixed-spin"
	objcopy --only-keep-debug "$dir/$1" "$dir/$1.debug"
	cp "$dir/$1" "$dir/$1.stripped"
	strip --strip-all "$dir/$1.stripped"
	readelf -S "$dir/$1.stripped" | grep -q '\.symtab' && fail "strip left a .symtab in $1"
	return 0
}

build_id() {
	readelf -n "$1" | awk '/Build ID/ { print $3; exit }'
}

# record NAME PROGRAM: the folded profile of PROGRAM (run for 0.5 s) in $dir/NAME.folded
record() {
	"$HOTSTACK" record -q -o "$dir/$1.folded" -- "$2" 0.5 2>"$dir/$1.err" ||
		fail "recording $2 failed: $(cat "$dir/$1.err")"
	grep -q . "$dir/$1.folded" || fail "no samples of $2"
}

# expect_names NAME PREFIX: both functions of the PREFIX build are named in NAME.folded
expect_names() {
	for f in inner_spin outer_spin; do
		grep -q "[;]$2_${f}[; ]" "$dir/$1.folded" ||
			fail "$1: ${2}_$f is not named: $(grep -v '\[k\]' "$dir/$1.folded" | head -3)"
	done
}

# expect_no_names NAME PREFIX: no function of the PREFIX build is named, the frames are the
# stripped program's by their addresses alone (PROG+0xADDR, from .eh_frame; [PROG] where that
# has none)
expect_no_names() {
	if grep -q "$2_" "$dir/$1.folded"; then
		fail "$1: names of $2 without their debug information: $(head -3 "$dir/$1.folded")"
	fi
	grep -qE "\[$2\.stripped\]|;$2\.stripped\+0x[0-9a-f]+[; ]" "$dir/$1.folded" ||
		fail "$1: no $2.stripped+0x... frame: $(head -3 "$dir/$1.folded")"
}

# -- no debug information anywhere: the control
build alpha
record alpha-none "$dir/alpha.stripped"
expect_no_names alpha-none alpha

# -- (a) by build-id, DEBUG/.build-id/xx/yyyy.debug
id=$(build_id "$dir/alpha")
[ -n "$id" ] || fail "alpha has no build-id"
tail=${id#??}
mkdir -p "$dir/debugroot/.build-id/${id%"$tail"}"
cp "$dir/alpha.debug" "$dir/debugroot/.build-id/${id%"$tail"}/$tail.debug"
HOTSTACK_DEBUG_DIR="$dir/debugroot" record alpha-buildid "$dir/alpha.stripped"
expect_names alpha-buildid alpha
echo "build-id: named from \$HOTSTACK_DEBUG_DIR/.build-id/${id%"$tail"}/$tail.debug"

# -- (b) by .gnu_debuglink, beside the program (and only with the right CRC)
build bravo
mkdir -p "$dir/link"
cp "$dir/bravo.stripped" "$dir/link/bravo.stripped"
objcopy --add-gnu-debuglink="$dir/bravo.debug" "$dir/link/bravo.stripped"
cp "$dir/bravo.debug" "$dir/link/bravo.debug"
record bravo-link "$dir/link/bravo.stripped"
expect_names bravo-link bravo
# a debug file of that name whose CRC differs (another build's) is not taken
cp "$dir/alpha.debug" "$dir/link/bravo.debug"
record bravo-badcrc "$dir/link/bravo.stripped"
if grep -q "alpha_\|bravo_" "$dir/bravo-badcrc.folded"; then
	fail "a debug file with the wrong CRC was used: $(head -3 "$dir/bravo-badcrc.folded")"
fi
echo "debuglink: named from the file beside it; one with another CRC is refused"

# -- MiniDebugInfo: the recipe of Fedora's find-debuginfo (and gdb's manual, "MiniDebugInfo"):
#    the function symbols .dynsym lacks, in a symbol-only ELF, xz-compressed into .gnu_debugdata
if command -v xz >/dev/null 2>&1; then
	build delta
	nm -D "$dir/delta" --format=posix --defined-only | awk '{ print $1 }' | sort >"$dir/dynsyms"
	nm "$dir/delta" --format=posix --defined-only | awk '$2 ~ /^[TtWw]$/ { print $1 }' | sort >"$dir/funcsyms"
	comm -13 "$dir/dynsyms" "$dir/funcsyms" >"$dir/keep"
	grep -qx delta_inner_spin "$dir/keep" || fail "the MiniDebugInfo recipe drops delta_inner_spin"
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$dir/keep" \
		"$dir/delta.debug" "$dir/mini"
	xz -f "$dir/mini"
	cp "$dir/delta.stripped" "$dir/delta.mini"
	objcopy --add-section .gnu_debugdata="$dir/mini.xz" "$dir/delta.mini"
	readelf -S "$dir/delta.mini" | grep -q '\.gnu_debugdata' || fail "no .gnu_debugdata in delta.mini"
	record delta-mini "$dir/delta.mini"
	expect_names delta-mini delta
	# a section that is not xz: no names, and no failure either
	printf 'not xz at all' >"$dir/junk"
	cp "$dir/delta.stripped" "$dir/delta.junk"
	objcopy --add-section .gnu_debugdata="$dir/junk" "$dir/delta.junk"
	record delta-junk "$dir/delta.junk"
	grep -q "delta_" "$dir/delta-junk.folded" && fail "names out of a corrupt .gnu_debugdata"
	echo "minidebuginfo: local functions named from .gnu_debugdata; a corrupt one is ignored"
else
	skipped="$skipped; xz is not installed (apt-get install xz-utils): MiniDebugInfo not tested"
fi

# -- (c) debuginfod: a local server over a directory holding only the debug file
if command -v debuginfod >/dev/null 2>&1 && command -v debuginfod-find >/dev/null 2>&1; then
	build charlie
	id=$(build_id "$dir/charlie")
	mkdir -p "$dir/served"
	cp "$dir/charlie.debug" "$dir/served/charlie.debug"
	# without DEBUGINFOD_URLS nothing is asked: no names
	record charlie-off "$dir/charlie.stripped"
	expect_no_names charlie-off charlie
	DEBUGINFOD_URLS="" record charlie-empty "$dir/charlie.stripped"
	expect_no_names charlie-empty charlie
	[ ! -e "$XDG_CACHE_HOME/debuginfod_client" ] || fail "debuginfod's cache was made without DEBUGINFOD_URLS"

	dfd_pid=""
	trap '[ -z "$dfd_pid" ] || kill "$dfd_pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
	port=""
	for try in 1 2 3 4 5; do
		p=$((20000 + ($$ * 7 + try * 7919) % 30000))
		# -F: ELF/DWARF files of the directory; -t 0 -g 0: one scan at start, no grooming
		debuginfod -p "$p" -F -d "$dir/dfd-$try.sqlite" -t 0 -g 0 "$dir/served" >"$dir/dfd.log" 2>&1 &
		dfd_pid=$!
		sleep 0.5
		if kill -0 "$dfd_pid" 2>/dev/null; then
			port=$p
			break
		fi
		wait "$dfd_pid" 2>/dev/null || true
		dfd_pid=""
	done
	[ -n "$port" ] || fail "debuginfod did not start: $(tail -3 "$dir/dfd.log")"
	# until it has scanned the file (each probe with its own cache: misses are cached too)
	ready=""
	for i in $(seq 1 100); do
		if DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$dir/probe-$i" \
			debuginfod-find debuginfo "$id" >/dev/null 2>&1; then
			ready=1
			break
		fi
		sleep 0.2
	done
	[ -n "$ready" ] || fail "debuginfod never served $id: $(tail -3 "$dir/dfd.log")"
	before=$(wc -l <"$dir/dfd.log")
	DEBUGINFOD_URLS="http://127.0.0.1:$port" record charlie-dfd "$dir/charlie.stripped"
	expect_names charlie-dfd charlie
	[ -s "$XDG_CACHE_HOME/debuginfod_client/$id/debuginfo" ] ||
		fail "the debug file is not in debuginfod's cache under \$XDG_CACHE_HOME"
	# asked once in the run, though both the symbolizer and the unwinder look for it
	tail -n +"$((before + 1))" "$dir/dfd.log" >"$dir/dfd.run.log"
	asked=$(grep -c "GET /buildid/$id/debuginfo" "$dir/dfd.run.log" || true)
	[ "$asked" = 1 ] || fail "$id was asked $asked times: $(grep GET "$dir/dfd.run.log")"
	dup=$(grep -o 'GET /buildid/[0-9a-f]*/debuginfo' "$dir/dfd.run.log" | sort | uniq -d | head -1)
	[ -z "$dup" ] || fail "a build-id was asked more than once in one run: $dup"
	# an unreachable server is no error, only no names
	kill "$dfd_pid" 2>/dev/null || true
	wait "$dfd_pid" 2>/dev/null || true
	dfd_pid=""
	rm -rf "$XDG_CACHE_HOME"
	DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_TIMEOUT=2 record charlie-down "$dir/charlie.stripped"
	expect_no_names charlie-down charlie
	echo "debuginfod: named through a server on port $port, only with DEBUGINFOD_URLS; a server down is no failure"
else
	skipped="$skipped; debuginfod is not installed (apt-get install debuginfod): debuginfod not tested"
fi

[ -z "$skipped" ] || skip "${skipped#; }"
