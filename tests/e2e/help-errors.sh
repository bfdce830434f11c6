#!/bin/sh
# Help and errors as a user meets them: `hotstack help CMD`; an unknown option, a missing value
# or an option that does not apply to the chosen output is one line prefixed 'hotstack:', for
# every command; a file that is no profile says so, and a damaged one keeps its reader's
# precise message.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

one_line() {
	[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "expected one line on stderr, got: $(cat "$dir/.err")"
}
commands="record report flame convert script collapse diff"
small=$SRCDIR/tests/fixtures/flame-small.folded

# help
"$HOTSTACK" help >"$dir/help" || fail "hotstack help failed"
for c in $commands; do
	grep -q "^  $c " "$dir/help" || fail "hotstack help does not list $c"
	"$HOTSTACK" help "$c" >"$dir/h1" || fail "hotstack help $c failed"
	"$HOTSTACK" "$c" --help >"$dir/h2"
	grep -q "^usage: hotstack $c" "$dir/h1" || fail "hotstack help $c: $(head -n3 "$dir/h1")"
	cmp -s "$dir/h1" "$dir/h2" || fail "hotstack help $c differs from hotstack $c --help"
done
expect_status 2 "$HOTSTACK" help nosuch
expect_stderr "^hotstack: help: 'nosuch' is not a hotstack command"
# one command: more words are refused, not ignored
expect_status 2 "$HOTSTACK" help record --bogus
expect_stderr "^hotstack: help: one command, no more words: '--bogus'$"
expect_status 2 "$HOTSTACK" help record report
expect_stderr "^hotstack: help: one command, no more words: 'report'$"
[ ! -s "$dir/.out" ] || fail "help with more words printed help"
# report's and annotate's help list the perf options their usage lines show
"$HOTSTACK" report --help >"$dir/rh"
grep -qE '^  -i, --input FILE ' "$dir/rh" && grep -qE '^      --stdio ' "$dir/rh" ||
	fail "report --help lists no -i or --stdio: $(head -n8 "$dir/rh")"
"$HOTSTACK" annotate --help | grep -qE '^  -s, --symbol FUNCTION ' || fail "annotate --help lists no -s"
one_line

# unknown options, missing values, ambiguous abbreviations: one line, for every command
for c in $commands; do
	expect_status 2 "$HOTSTACK" "$c" --frq 99
	case $c in
	record | top) expect_stderr "^hotstack: $c: unknown option '--frq' \\(did you mean '--freq'\\? see 'hotstack $c --help'\\)$" ;;
	*) expect_stderr "^hotstack: $c: unknown option '--frq' \\(see 'hotstack $c --help'\\)$" ;;
	esac
	one_line
	expect_status 2 "$HOTSTACK" "$c" -Z
	expect_stderr "^hotstack: $c: unknown option '-Z' \\(see 'hotstack $c --help'\\)$"
	one_line
	expect_status 2 "$HOTSTACK" "$c" -o
	expect_stderr "^hotstack: $c: option '-o' needs a value$"
	one_line
	expect_status 2 "$HOTSTACK" "$c" --output
	expect_stderr "^hotstack: $c: option '--output' needs a value$"
	one_line
done
expect_status 2 "$HOTSTACK" record -F
expect_stderr "^hotstack: record: option '-F' needs a value$"
one_line
expect_status 2 "$HOTSTACK" report "$small" --top
expect_stderr "^hotstack: report: option '--top' needs a value$"
expect_status 2 "$HOTSTACK" report "$small" --stats=yes
expect_stderr "^hotstack: report: option '--stats' takes no value$"
one_line
# an unknown letter in a cluster after a long option is named as itself
expect_status 2 "$HOTSTACK" report "$small" --stats -Zq
expect_stderr "^hotstack: report: unknown option '-Z'"
one_line
expect_status 2 "$HOTSTACK" report "$small" --no
expect_stderr "^hotstack: report: ambiguous option '--no'"
one_line

# options that change none of the chosen outputs
refused() { # MESSAGE-REGEX COMMAND...
	re=$1
	shift
	expect_status 2 "$HOTSTACK" "$@"
	expect_stderr "$re"
	one_line
}
refused "^hotstack: report: --width does not apply to a text report \\(it sets the flame graph's width\\)$" \
	report "$small" --width 800
refused "^hotstack: report: --palette does not apply to a text report" report "$small" --palette hot
refused "^hotstack: flame: --top does not apply to a flame graph" flame "$small" -o "$dir/a.svg" --top 5
refused "^hotstack: flame: --stats does not apply to a flame graph" flame "$small" -o "$dir/a.svg" --stats
refused "^hotstack: script: --title does not apply to perf script text" script "$small" --title x
refused "^hotstack: convert: --width does not apply to folded stacks" convert "$small" -o "$dir/a.folded" --width 800
refused "^hotstack: flame: --call-graph does not apply to a flame graph" flame "$small" -o "$dir/a.svg" -g caller
[ ! -e "$dir/a.svg" ] && [ ! -e "$dir/a.folded" ] || fail "a refused command wrote an output"
# an option that applies to one of the outputs is taken
"$HOTSTACK" convert "$small" -o "$dir/b.folded" -o "$dir/b.svg" --width 800 || fail "convert -o .folded -o .svg --width"
grep -q 'width="800"' "$dir/b.svg" || fail "--width 800 not in the SVG"
"$HOTSTACK" convert "$small" -o "$dir/b.txt" --top 2 -g caller || fail "convert -o .txt --top -g"
grep -q '^Call tree' "$dir/b.txt" || fail "convert -o .txt -g caller: no call tree"

# what is no profile says so; a damaged profile keeps its reader's message
not_profile() { # FILE
	expect_status 1 "$HOTSTACK" report "$1"
	expect_stderr "^hotstack: $1: not a profile hotstack reads \\(perf.data, pprof, folded stacks, speedscope\\)$"
	one_line
}
not_profile /etc/passwd
head -c 65536 "$HOTSTACK" >"$dir/elf"
not_profile "$dir/elf"
i=0
while [ $i -lt 20 ]; do
	# random bytes after an 'R' (not gzip's magic; as protobuf, field 10 with the wrong wire type)
	{ printf 'R'; head -c $((100 + i * 397)) /dev/urandom; } >"$dir/random$i"
	not_profile "$dir/random$i"
	i=$((i + 1))
done
# a perf.data cut inside its header
head -c 60 "$SRCDIR/tests/fixtures/perf-data/fp.data" >"$dir/cut.data"
expect_status 1 "$HOTSTACK" report "$dir/cut.data"
! grep -q 'not a profile' "$dir/.err" || fail "a cut perf.data is called no profile: $(cat "$dir/.err")"
expect_stderr "^hotstack: $dir/cut.data: file too short for its header"
one_line
# a pprof whose first fields are right, then a field of the wrong wire type
gzip -dc "$SRCDIR/tests/fixtures/pprof-go/cpu.pb.gz" | head -c 200 >"$dir/bad.pb"
printf '\017\001\002\003' >>"$dir/bad.pb"
expect_status 1 "$HOTSTACK" report "$dir/bad.pb"
! grep -q 'not a profile' "$dir/.err" || fail "a damaged pprof is called no profile: $(cat "$dir/.err")"
expect_stderr "^hotstack: $dir/bad.pb: "
one_line
echo "help-errors: help for $commands; one-line option errors; refusals; no-profile files"
