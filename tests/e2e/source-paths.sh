#!/bin/sh
# Source files of an out-of-tree build, found from anywhere: prefixed-spin built in build/ from
# ../src/spin.c (its DWARF names the file relatively), with -gdwarf-4 and with -gdwarf-5, and
# recorded from another directory. `hotstack annotate` shows the source text, the folded lines
# and pprof name the absolute path, and `go tool pprof -list` finds the file; so does annotate
# for hotstack's own workloads (built by meson in build/), and for a perf.data where perf is
# installed.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v cc >/dev/null 2>&1 || skip "no C compiler"
gopprof=
if command -v go >/dev/null 2>&1 && go tool -n pprof >/dev/null 2>&1; then
	gopprof=1
	export PPROF_TMPDIR="$dir" HOME="${HOME:-$dir}"
else
	echo "source-paths: go tool pprof parts skipped: no go tool pprof"
fi

# the physical path, as the compiler's working directory records it
top=$(cd "$dir" && pwd -P)
mkdir -p "$top/proj/src" "$top/proj/build" "$top/elsewhere"
cp "$SRCDIR/tests/workloads/prefixed-spin.c" "$top/proj/src/spin.c"
hot=$(grep -n 'sink = sink \* 0.999 + i;' "$top/proj/src/spin.c" | cut -d: -f1)
[ -n "$hot" ] || fail "no hot line in prefixed-spin.c"
src="$top/proj/src/spin.c"

# the hottest line of alpha_inner_spin in annotate's output FILE has its source text
check_annotate() { # FILE WHAT
	head -n1 "$1" | grep -qF "  $src" || fail "$2: the header does not name $src: $(head -n1 "$1")"
	grep -q '^(no source text' "$1" && fail "$2: no source text: $(grep '^(no source text' "$1")"
	grep '^=>' "$1" | awk -v l="$hot" '$6 == l { ok = 1 } END { exit !ok }' ||
		fail "$2: the hottest line is not line $hot: $(cat "$1")"
	grep '^=>' "$1" | grep -q 'sink = sink \* 0.999 + i;$' || fail "$2: the hottest line has no source text"
}

for v in 4 5; do
	cd "$top/proj/build"
	cc -O2 -g -gdwarf-$v -fno-omit-frame-pointer -DV=alpha -o spin$v ../src/spin.c ||
		fail "cannot build the workload with -gdwarf-$v"
	cd "$top/elsewhere"
	"$HOTSTACK" record -q -o v$v.pb.gz -- ../proj/build/spin$v 1 || fail "record of spin$v failed"
	"$HOTSTACK" annotate alpha_inner_spin v$v.pb.gz >v$v.txt 2>v$v.err || fail "annotate failed: $(cat v$v.err)"
	check_annotate v$v.txt "DWARF $v"
	# every frame of the program names the absolute path, none a relative one
	"$HOTSTACK" convert v$v.pb.gz -o - --format folded --lines >v$v.folded || fail "convert --lines failed"
	grep -q "alpha_inner_spin:$src:$hot" v$v.folded || fail "DWARF $v: folded --lines has no $src:$hot: $(head -n3 v$v.folded)"
	grep -q '\.\./src/spin\.c' v$v.folded && fail "DWARF $v: a relative path is left: $(grep -m1 '\.\./src' v$v.folded)"
	# the report's --lines still shows the file's base name
	"$HOTSTACK" report v$v.pb.gz --lines >v$v.report || fail "report --lines failed"
	grep -q " alpha_inner_spin spin\.c:$hot " v$v.report || fail "DWARF $v: report --lines: $(head -n12 v$v.report)"
	if [ -n "$gopprof" ]; then
		go tool pprof -list='^alpha_inner_spin$' v$v.pb.gz >v$v.list 2>v$v.lerr ||
			fail "DWARF $v: go tool pprof -list failed: $(cat v$v.lerr)"
		grep -qF "ROUTINE ======================== alpha_inner_spin in $src" v$v.list ||
			fail "DWARF $v: pprof -list names another file: $(head -n3 v$v.list)"
		grep -Eq "^ +[^ ]+ +[^ ]+ +$hot:.*sink = sink \* 0.999 \+ i;" v$v.list ||
			fail "DWARF $v: pprof -list shows no source text for line $hot: $(cat v$v.list)"
	fi
done

# hotstack's own workloads, built by meson in build/ from ../tests/workloads/
cd "$top/elsewhere"
"$HOTSTACK" record -q -o ct.pb.gz -- "$WORKLOADS/calltree" 0.5 || fail "record of calltree failed"
"$HOTSTACK" annotate leaf ct.pb.gz >ct.txt 2>ct.err || fail "annotate leaf failed: $(cat ct.err)"
grep -q '^(no source text' ct.txt && fail "calltree: no source text: $(grep '^(no source text' ct.txt)"
grep '^=>' ct.txt | grep -q 'acc' || fail "calltree: the hottest line of leaf has not its source text: $(cat ct.txt)"
head -n1 ct.txt | grep -q "  /.*/tests/workloads/calltree\.c\$" || fail "calltree: not an absolute path: $(head -n1 ct.txt)"

# a perf.data: the same symbolization
if ! command -v perf >/dev/null 2>&1; then
	echo "source-paths: perf.data part skipped: perf is not installed"
	exit 0
fi
mkdir -p home
if ! HOME="$top/elsewhere/home" perf record -q -g -o perf.data -- ../proj/build/spin5 1 >/dev/null 2>perf.err; then
	echo "source-paths: perf.data part skipped: perf record failed: $(head -n1 perf.err)"
	exit 0
fi
HOME="$top/elsewhere/home" "$HOTSTACK" annotate --stdio -i perf.data alpha_inner_spin >perf.txt 2>perf-hs.err ||
	fail "annotate of perf.data failed: $(cat perf-hs.err)"
check_annotate perf.txt "perf.data"
exit 0
