#!/bin/sh
# Files other users can plant never steer hotstack. A toy JIT (root's) runs code that its jitdump
# names; while it runs:
#  - its jitdump file is handed to another user (chown): hotstack refuses it ("owned by uid
#    65534, not by the process's user (0) or root"), and the JIT frames fall back to the perf map;
#  - /tmp/perf-PID.map, a regular file of root's naming every address "planted": used (the
#    control); owned by another user: refused with a warning; a symbolic link to such a file:
#    refused ("is a symbolic link"), nothing read through it;
#  - an output path that is a symbolic link (in a sticky, world-writable directory, as /tmp) to
#    another file: the link is replaced by the profile, the file it pointed to is untouched.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$WORKLOADS/toy-jit" ] || skip "the toy JIT is built on x86-64 only"
require_perf_events
[ "$(id -u)" = 0 ] || skip "handing files to another user needs root"
other=65534

mkdir "$dir/jd"
printf '0 7fffffffffff planted\n' >"$dir/planted.map"
map=""
pid=""
trap 'kill $pid 2>/dev/null || true; rm -f "$map"; remove_jit_files; rm -rf "$dir"' EXIT

# run NAME SETUP: the toy JIT with its jitdump given away, SETUP run with $map free, recorded
run() {
	JITDUMPDIR="$dir/jd" "$WORKLOADS/toy-jit" 1 >"$dir/$1.toy" &
	pid=$!
	map=/tmp/perf-$pid.map
	for _ in $(seq 100); do
		grep -q "phase 1" "$dir/$1.toy" 2>/dev/null && break
		sleep 0.05
	done
	[ -f "$dir/jd/jit-$pid.dump" ] || fail "the toy JIT wrote no jitdump"
	chown "$other" "$dir/jd/jit-$pid.dump"
	# a map left by an earlier process given the same pid is not the toy's (it writes none)
	rm -f "$map"
	$2
	"$HOTSTACK" record -p "$pid" -o "$dir/$1.folded" 2>"$dir/$1.err" || fail "$1: record failed: $(cat "$dir/$1.err")"
	wait "$pid" || true
	rm -f "$map"
	grep -q "jit-$pid.dump is owned by uid $other, not by the process's user (0) or root: not read" "$dir/$1.err" ||
		fail "$1: the jitdump given away was not refused: $(cat "$dir/$1.err")"
	if grep -q "jit_alpha\|jit_beta" "$dir/$1.folded"; then fail "$1: names from the refused jitdump"; fi
}

control() { cp "$dir/planted.map" "$map"; }
run control control
grep -q ';planted_\[j\]' "$dir/control.folded" || fail "control: root's perf map was not used: $(cat "$dir/control.err")"

others() { cp "$dir/planted.map" "$map" && chown "$other" "$map"; }
run others others
grep -q "perf-$pid.map is owned by uid $other, not by the process's user (0) or root: not read" "$dir/others.err" ||
	fail "another user's perf map was not refused: $(cat "$dir/others.err")"
if grep -q planted "$dir/others.folded"; then fail "names from another user's perf map"; fi

link() { ln -s "$dir/planted.map" "$map"; }
run link link
grep -q "perf-$pid.map is a symbolic link: not read" "$dir/link.err" ||
	fail "a perf map that is a link was read: $(cat "$dir/link.err")"
if grep -q planted "$dir/link.folded"; then fail "names read through a link"; fi

# an output path that is a link in a sticky directory
mkdir -m 1777 "$dir/sticky"
echo precious >"$dir/victim"
ln -s "$dir/victim" "$dir/sticky/out.folded"
chown -h "$other" "$dir/sticky/out.folded"
"$HOTSTACK" convert "$dir/control.folded" -o "$dir/sticky/out.folded" || fail "convert to a linked path failed"
[ "$(cat "$dir/victim")" = precious ] || fail "the output was written through the link"
[ -f "$dir/sticky/out.folded" ] && [ ! -L "$dir/sticky/out.folded" ] || fail "the link was not replaced"
cmp -s "$dir/sticky/out.folded" "$dir/control.folded" || fail "the replaced output is not the profile"
exit 0
