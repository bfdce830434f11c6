#!/bin/sh
# hotstack annotate, typed as a perf user types perf annotate: prefixed-spin (built here with
# -O2 -g from a copy of its source) recorded with hotstack, then annotated from hotstack.pb.gz
# by default: the hottest line is the loop body of alpha_inner_spin with its source text and
# most of the samples; a pattern annotates each function it names, hottest first; an unknown
# name is one error line with the closest names; filters, -o, --stdio and -s/--symbol (perf
# annotate's) work; a source file gone since is said once; a kernel function's header names
# "[kernel.kallsyms]" as the report does (dd reading /dev/zero spends its time there); and a
# perf.data (the default when there is no hotstack.pb.gz)
# annotates the same where perf is installed.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v cc >/dev/null 2>&1 || skip "no C compiler"

mkdir -p "$dir/src" "$dir/work" "$dir/perf"
cp "$SRCDIR/tests/workloads/prefixed-spin.c" "$dir/src/spin.c"
hot=$(grep -n 'sink = sink \* 0.999 + i;' "$dir/src/spin.c" | cut -d: -f1)
[ -n "$hot" ] || fail "no hot line in prefixed-spin.c"
cc -O2 -g -fno-omit-frame-pointer -DV=alpha -o "$dir/spin" "$dir/src/spin.c" || fail "cannot build the workload"
cd "$dir/work"
"$HOTSTACK" record -q -- "$dir/spin" 1 || fail "record failed"
[ -f hotstack.pb.gz ] || fail "record wrote no hotstack.pb.gz"

# the hottest line: its number, its source text, most of the function's samples
"$HOTSTACK" annotate alpha_inner_spin >out.txt 2>err.txt || fail "annotate failed: $(cat err.txt)"
[ ! -s err.txt ] || fail "annotate said something on stderr: $(cat err.txt)"
head -n1 out.txt | grep -q "^alpha_inner_spin  \[$dir/spin\]  $dir/src/spin.c\$" ||
	fail "the header does not name the function, module and file: $(head -n1 out.txt)"
hotrow=$(grep '^=>' out.txt) || fail "no line is marked hottest: $(cat out.txt)"
echo "hottest: $hotrow"
[ "$(grep -c '^=>' out.txt)" = 1 ] || fail "more than one line marked hottest"
echo "$hotrow" | awk -v l="$hot" '$6 == l { ok = 1 } END { exit !ok }' ||
	fail "the hottest line is not line $hot: $hotrow"
echo "$hotrow" | grep -q 'sink = sink \* 0.999 + i;$' || fail "the hottest line has not its source text: $hotrow"
share=$(echo "$hotrow" | awk '{ sub("^=>", ""); sub("%", "", $1); print int($1) }')
[ "$share" -ge 50 ] || fail "the hot line has only $share% of the samples"
# the lines around it, and the function's own lines before it
grep -q "^ *$((hot + 1))  }\$" out.txt || fail "the line after the hot one is not shown: $(cat out.txt)"
grep -q 'static void NAME(inner_spin)(int n)$' out.txt || fail "the function's first line is not shown"

# --stdio (perf's spelling) changes nothing; -o FILE.txt writes the same; other formats refused
"$HOTSTACK" annotate --stdio alpha_inner_spin hotstack.pb.gz >stdio.txt || fail "--stdio failed"
cmp -s out.txt stdio.txt || fail "--stdio changed the output"
"$HOTSTACK" annotate alpha_inner_spin -o written.txt 2>/dev/null || fail "-o written.txt failed"
cmp -s out.txt written.txt || fail "-o FILE.txt did not write the annotation"
expect_status 2 "$HOTSTACK" annotate alpha_inner_spin -o flame.svg
expect_stderr "^hotstack: annotate writes text only, not a flame graph \\('flame.svg'\\)$"
expect_status 2 "$HOTSTACK" annotate alpha_inner_spin --format json
expect_stderr "^hotstack: annotate writes text only, not a JSON report \\('-'\\)$"
[ ! -e flame.svg ] || fail "-o flame.svg was written"
# report's options that do not change an annotation are refused, not ignored; --top is taken
for opt in --tree --stats --children "--sort dso" "-g caller"; do
	# shellcheck disable=SC2086 # the option and its value are two words
	expect_status 2 "$HOTSTACK" annotate alpha_inner_spin $opt
	expect_stderr "^hotstack: annotate: --[a-z-]* does not apply to an annotation"
done
"$HOTSTACK" annotate alpha_inner_spin --top 1 >/dev/null || fail "annotate --top 1 failed"
# perf annotate's -s/--symbol SYMBOL names the function as the first word does; --sort stays
# refused
for args in "-s alpha_inner_spin" "--symbol alpha_inner_spin" "--symbol=alpha_inner_spin" \
	"-s alpha_inner_spin hotstack.pb.gz" "--stdio -s alpha_inner_spin -i hotstack.pb.gz"; do
	# shellcheck disable=SC2086 # the words of the options
	"$HOTSTACK" annotate $args >sym.txt || fail "annotate $args failed"
	cmp -s out.txt sym.txt || fail "annotate $args differs from annotate alpha_inner_spin"
done
expect_status 2 "$HOTSTACK" annotate --symbol alpha_inner_spin --sort dso
expect_stderr "^hotstack: annotate: --sort does not apply to an annotation"

# a pattern: every function it names, hottest first, after a one-line note
"$HOTSTACK" annotate '^alpha_.*_spin$' >both.txt || fail "annotate of a regular expression failed"
head -n1 both.txt | grep -q "^# '^alpha_\.\*_spin\$' names 2 functions: each in turn, hottest first\$" ||
	fail "no note of the functions named: $(head -n1 both.txt)"
inner=$(grep -n '^alpha_inner_spin  ' both.txt | cut -d: -f1)
outer=$(grep -n '^alpha_outer_spin  ' both.txt | cut -d: -f1)
[ -n "$inner" ] && [ -n "$outer" ] && [ "$inner" -lt "$outer" ] ||
	fail "alpha_inner_spin does not come before alpha_outer_spin: $(grep '^alpha_' both.txt)"
# the caller's hottest line is its call of inner_spin (total, no self)
sed -n "$outer,\$p" both.txt | grep '^=>' | grep -q 'NAME(inner_spin)(n);$' ||
	fail "alpha_outer_spin's hottest line is not its call: $(sed -n "$outer,\$p" both.txt)"

# an unknown name: one line, with the closest names, exit 1
expect_status 1 "$HOTSTACK" annotate alpha_iner_spin
[ "$(wc -l <"$dir/.err")" = 1 ] || fail "more than one line on stderr: $(cat "$dir/.err")"
expect_stderr "^hotstack: no function 'alpha_iner_spin' in hotstack.pb.gz \(closest: alpha_inner_spin, [^ ]+(, [^ ]+)?\)\$"
[ ! -s "$dir/.out" ] || fail "an unknown function printed something: $(cat "$dir/.out")"
expect_status 2 "$HOTSTACK" annotate
expect_stderr "^hotstack: annotate needs a FUNCTION"

# filters: a thread name that is not there leaves no function; the right one changes nothing
expect_status 1 "$HOTSTACK" annotate alpha_inner_spin --comm '^nosuchcomm$'
expect_stderr "^hotstack: no function 'alpha_inner_spin' in hotstack.pb.gz\$"
"$HOTSTACK" annotate alpha_inner_spin --comm '^spin$' >comm.txt || fail "annotate --comm failed"
cmp -s out.txt comm.txt || fail "--comm of the only thread changed the output"

# the source file gone: said once, the lines still counted
mv "$dir/src/spin.c" "$dir/src/spin.c.moved"
"$HOTSTACK" annotate '_spin$' >gone.txt || fail "annotate without the source failed"
[ "$(grep -c "^(no source text: cannot read '$dir/src/spin.c': No such file or directory)\$" gone.txt)" = 1 ] ||
	fail "the unreadable source is not said once: $(cat gone.txt)"
grep '^=>' gone.txt | awk -v l="$hot" '$6 == l { ok = 1 } END { exit !ok }' ||
	fail "without the source, the hottest line is not line $hot: $(cat gone.txt)"
mv "$dir/src/spin.c.moved" "$dir/src/spin.c"

# a kernel function: its module as the report names it, not "[[kernel.kallsyms]]"
"$HOTSTACK" record -q -o dd.pb.gz -- dd if=/dev/zero of=/dev/null bs=1M count=2000 2>/dev/null || fail "record of dd failed"
kfn=$("$HOTSTACK" report dd.pb.gz -s dso,sym | awk '$5 == "[kernel.kallsyms]" { print $6; exit }')
[ -n "$kfn" ] || fail "no kernel function in dd's report: $("$HOTSTACK" report dd.pb.gz -s dso,sym | head -12)"
"$HOTSTACK" annotate "$kfn" dd.pb.gz >kernel.txt || fail "annotate $kfn failed"
head -n1 kernel.txt | grep -q "^$kfn  \[kernel\.kallsyms\]\( \|\$\)" ||
	fail "the header does not name the kernel's module as the report does: $(head -n1 kernel.txt)"

# a perf.data, read by default where there is no hotstack.pb.gz
if ! command -v perf >/dev/null 2>&1; then
	echo "annotate: perf.data part skipped: perf is not installed"
	exit 0
fi
cd "$dir/perf"
mkdir -p home
if ! HOME="$dir/perf/home" perf record -q -g -o perf.data -- "$dir/spin" 1 >/dev/null 2>perf.err; then
	echo "annotate: perf.data part skipped: perf record failed: $(head -n1 perf.err)"
	exit 0
fi
HOME="$dir/perf/home" "$HOTSTACK" annotate alpha_inner_spin --stdio >perf.txt 2>perf-hs.err ||
	fail "annotate of perf.data failed: $(cat perf-hs.err)"
hotrow=$(grep '^=>' perf.txt) || fail "no line is marked hottest in perf.data's annotation: $(cat perf.txt)"
echo "perf.data hottest: $hotrow"
echo "$hotrow" | awk -v l="$hot" '$6 == l { ok = 1 } END { exit !ok }' ||
	fail "perf.data: the hottest line is not line $hot: $hotrow"
echo "$hotrow" | grep -q 'sink = sink \* 0.999 + i;$' || fail "perf.data: no source text on the hottest line"
exit 0
