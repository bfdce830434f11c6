#!/bin/sh
# Several inputs read as one profile by report, flame and convert: two recordings of calltree,
# named or as a directory (beside a README, a program, a dot-file still being written, a
# subdirectory and a link, all left out), and with folded text and a perf.data fixture among
# them. Totals and the counts of each stack are the sums of each input's, each process keeps
# its own root; a missing file, a file named that is no profile and a directory with none are
# errors that name them, with the exit status of a file that cannot be read.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

H=$HOTSTACK
fp=$SRCDIR/tests/fixtures/perf-data/fp.data

for r in a b; do
	"$H" record -q -g fp -o "$dir/$r.pb.gz" -- "$WORKLOADS/calltree" 0.3 || fail "record $r failed"
	"$H" convert -q "$dir/$r.pb.gz" -o "$dir/$r.folded" || fail "convert $r failed"
done
"$H" convert -q "$fp" -o "$dir/fp.folded" || fail "convert fp.data failed"

# the total of a report of the inputs given: its first line is "# N samples in ..."
total() {
	"$H" report -q "$@" >"$dir/total.txt" || fail "report $* failed"
	awk 'NR == 1 && $3 == "samples" { print $2 }' "$dir/total.txt"
}
# the counts of folded files added up per stack, one "stack count" line each, sorted
per_stack() {
	awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' "$@" | LC_ALL=C sort
}

# ---- files named ----
na=$(total "$dir/a.pb.gz")
nb=$(total "$dir/b.pb.gz")
[ -n "$na" ] && [ -n "$nb" ] && [ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || fail "recordings without samples: '$na', '$nb'"
n=$(total "$dir/a.pb.gz" "$dir/b.pb.gz")
[ "$n" = $((na + nb)) ] || fail "report a b: $n samples, $na + $nb in the two"
"$H" convert "$dir/a.pb.gz" "$dir/b.pb.gz" -o "$dir/ab.folded" || fail "convert a b failed"
per_stack "$dir/a.folded" "$dir/b.folded" >"$dir/want"
per_stack "$dir/ab.folded" >"$dir/got"
cmp -s "$dir/want" "$dir/got" || fail "convert a b: not the sums per stack: $(diff "$dir/want" "$dir/got" | head -5)"
# both recordings' main;a;b;leaf is one stack, with the samples of both
grep -q '^calltree;.*main;a;b;leaf ' "$dir/got" || fail "no main;a;b;leaf stack: $(head -3 "$dir/got")"
# each process its own root
"$H" convert "$dir/a.pb.gz" "$dir/b.pb.gz" --root pid -o "$dir/pid.folded" || fail "convert --root pid failed"
[ "$(cut -d';' -f1 "$dir/pid.folded" | LC_ALL=C sort -u | grep -c '^calltree-')" -eq 2 ] ||
	fail "--root pid: not the two processes: $(cut -d';' -f1 "$dir/pid.folded" | sort -u)"

# ---- a directory ----
mkdir "$dir/d" "$dir/d/old"
cp "$dir/a.pb.gz" "$dir/d/prof.1.pb.gz"
cp "$dir/b.pb.gz" "$dir/d/prof.2.pb.gz"
cp "$dir/a.pb.gz" "$dir/d/.prof.3.pb.gz.tmp"
cp "$dir/a.pb.gz" "$dir/d/old/prof.0.pb.gz"
ln -s prof.1.pb.gz "$dir/d/latest.pb.gz"
echo "profiles of calltree, one per recording" >"$dir/d/README"
cp "$WORKLOADS/calltree" "$dir/d/calltree"
"$H" convert "$dir/d" -o "$dir/d.folded" || fail "convert DIR failed"
per_stack "$dir/d.folded" >"$dir/got-d"
cmp -s "$dir/got" "$dir/got-d" || fail "convert DIR: not convert a b: $(diff "$dir/got" "$dir/got-d" | head -5)"
[ "$(total "$dir/d/")" = "$n" ] || fail "report DIR/: not $n samples: $(head -1 "$dir/total.txt")"
"$H" flame -q "$dir/d" -o "$dir/x.svg" || fail "flame DIR -o x.svg failed"
grep -q "<title>all ($n samples, 100.00%)</title>" "$dir/x.svg" || fail "flame DIR: not $n samples in all"
(cd "$dir" && "$H" flame -q d/) || fail "flame DIR/ failed"
[ -s "$dir/d.svg" ] || fail "flame d/ did not write d.svg"

# ---- pprof, folded text and perf.data together ----
"$H" convert -q "$dir/a.pb.gz" "$dir/b.folded" "$fp" -o "$dir/mix.folded" || fail "convert of three formats failed"
per_stack "$dir/a.folded" "$dir/b.folded" "$dir/fp.folded" >"$dir/want-mix"
per_stack "$dir/mix.folded" >"$dir/got-mix"
cmp -s "$dir/want-mix" "$dir/got-mix" || fail "pprof + folded + perf.data: $(diff "$dir/want-mix" "$dir/got-mix" | head -5)"

# ---- errors: as for one file that cannot be read, naming what failed ----
expect_status 1 "$H" report "$dir/missing.pb.gz"
cp "$dir/.err" "$dir/one.err"
expect_status 1 "$H" report "$dir/a.pb.gz" "$dir/missing.pb.gz"
cmp -s "$dir/one.err" "$dir/.err" || fail "a missing file among others: $(cat "$dir/.err"), alone: $(cat "$dir/one.err")"
expect_stderr "^hotstack: cannot read '$dir/missing.pb.gz': No such file or directory$"
expect_status 1 "$H" convert "$dir/a.pb.gz" "$dir/d/README" -o "$dir/no.folded"
expect_stderr "^hotstack: $dir/d/README: not a profile hotstack reads"
[ ! -e "$dir/no.folded" ] || fail "convert wrote an output after a load error"
mkdir "$dir/empty" "$dir/none"
cp "$dir/d/README" "$dir/none/"
for e in empty none; do
	expect_status 1 "$H" flame "$dir/a.pb.gz" "$dir/$e" -o "$dir/e.svg"
	expect_stderr "^hotstack: $dir/$e: no profiles$"
done
# script reads one perf.data; -i names one profile
expect_status 2 "$H" script "$fp" "$fp"
expect_stderr "unexpected argument '$fp'"
expect_status 2 "$H" report -i "$dir/a.pb.gz" "$dir/b.pb.gz"
expect_stderr "unexpected argument '$dir/b.pb.gz'"
exit 0
