#!/bin/sh
# hotstack collapse against FlameGraph's stackcollapse-perf.pl: every case in
# tests/fixtures/collapse/cases is a perf script input, options, and what the Perl script
# printed for them (see the README there); hotstack must print the same bytes. Then the
# ways in: standard input, gzip, -o, and the errors.
set -eu

: "${HOTSTACK:?}" "${SRCDIR:?}"
fx="$SRCDIR/tests/fixtures/collapse"
dir=$(mktemp -d "${TMPDIR:-/tmp}/collapse.XXXXXX")
trap 'rm -rf "$dir"' EXIT

fail() {
	echo "collapse: FAIL: $*" >&2
	exit 1
}

have_binutils=1
if ! command -v addr2line >/dev/null 2>&1 || ! command -v nm >/dev/null 2>&1; then
	have_binutils=0
	echo "collapse: addr2line or nm missing (binutils): the --inline cases are skipped" >&2
fi

# --inline finds the module "inline-demo" of the inputs relative to the working directory,
# as the Perl script does: run every case in the fixtures directory.
cd "$fx"
n=0
skipped=0
grep -v '^#' cases >"$dir/cases"
while read -r exp in opts; do
	case " $opts " in
	*" --inline "*)
		if [ $have_binutils = 0 ]; then
			skipped=$((skipped + 1))
			continue
		fi
		;;
	esac
	# shellcheck disable=SC2086
	"$HOTSTACK" collapse -q $opts "$in" >"$dir/got" 2>"$dir/err" ||
		fail "hotstack collapse $opts $in exited $?: $(cat "$dir/err")"
	gzip -dc "$exp" >"$dir/want"
	if ! cmp -s "$dir/want" "$dir/got"; then
		echo "collapse: hotstack collapse $opts $in differs from $exp (want, got):" >&2
		diff "$dir/want" "$dir/got" | head -n 20 >&2 || true
		exit 1
	fi
	n=$((n + 1))
done <"$dir/cases"
[ "$n" -ge 100 ] || fail "only $n cases ran"

# Standard input, compressed or not, and -o.
cp odd.txt "$dir/odd.txt"
gzip -dc expected/odd.tid-all-addrs.folded.gz >"$dir/want"
"$HOTSTACK" collapse --tid --all --addrs -q <"$dir/odd.txt" >"$dir/got" || fail "reading standard input"
cmp -s "$dir/want" "$dir/got" || fail "standard input gives other lines"
"$HOTSTACK" collapse --tid --all --addrs -q - -o "$dir/out.folded" <"$dir/odd.txt" || fail "-o"
cmp -s "$dir/want" "$dir/out.folded" || fail "-o gives other lines"
gzip -dc expected/system.tid-all-addrs.folded.gz >"$dir/want"
"$HOTSTACK" collapse --tid --all --addrs <system.txt.gz >"$dir/got" 2>"$dir/err" || fail "gzip on standard input"
cmp -s "$dir/want" "$dir/got" || fail "gzip on standard input gives other lines"
# two gzip members, as `cat a.gz b.gz` makes, read as one text
cat calltree-fp.txt.gz calltree-fp.txt.gz >"$dir/twice.gz"
"$HOTSTACK" collapse "$dir/twice.gz" >"$dir/got" || fail "reading concatenated gzip members"
gzip -dc expected/calltree-fp.default.folded.gz | awk '{ $NF = 2 * $NF; print }' >"$dir/want"
cmp -s "$dir/want" "$dir/got" || fail "concatenated gzip members give other lines"

# Warnings say what was left out; --quiet silences them; stdout keeps only the stacks.
"$HOTSTACK" collapse "$dir/odd.txt" >"$dir/got" 2>"$dir/err" || fail "odd.txt"
grep -q "events other than 'cycles'" "$dir/err" || fail "no warning about filtered events: $(cat "$dir/err")"
grep -q "no blank line after it" "$dir/err" || fail "no warning about the last sample: $(cat "$dir/err")"
grep -q "line 81" "$dir/err" || fail "no warning naming the unrecognized line: $(cat "$dir/err")"
"$HOTSTACK" collapse -q "$dir/odd.txt" >"$dir/got" 2>"$dir/err" || fail "odd.txt -q"
[ ! -s "$dir/err" ] || fail "-q still warns: $(cat "$dir/err")"

# Errors: one line, the file and line at fault, exit 1; no output file left behind.
expect_fail() {
	want=$1
	shift
	set +e
	"$@" >"$dir/out" 2>"$dir/err"
	st=$?
	set -e
	[ "$st" = 1 ] || fail "'$*' exited $st, expected 1"
	grep -qE "$want" "$dir/err" || fail "'$*': stderr does not match /$want/: $(cat "$dir/err")"
}
expect_fail "cannot read '$dir/missing.txt': No such file" "$HOTSTACK" collapse "$dir/missing.txt"
expect_fail "cannot write '$dir/no-dir/out.folded'" "$HOTSTACK" collapse odd.txt -o "$dir/no-dir/out.folded"
printf 'PERFILE2\0\0\0\0' >"$dir/perf.data"
expect_fail "line 1: this is a perf.data file" "$HOTSTACK" collapse "$dir/perf.data"
{
	printf 'prog 1 1.0: 1 cycles:\n  1 f (/x)\n\n  2 '
	head -c 2000000 /dev/zero | tr '\0' a
	printf ' (/x)\n\n'
} >"$dir/long.txt"
expect_fail "long.txt: line 4: line longer than" "$HOTSTACK" collapse "$dir/long.txt" -o "$dir/long.folded"
[ ! -e "$dir/long.folded" ] || fail "an output was written after an error"
head -c 500 calltree-fp.txt.gz >"$dir/cut.gz"
expect_fail "gzip data is corrupt or cut short" "$HOTSTACK" collapse "$dir/cut.gz"

set +e
"$HOTSTACK" collapse --no-such-option >/dev/null 2>&1
st=$?
set -e
[ "$st" = 2 ] || fail "an unknown option exited $st, expected 2"

echo "collapse: ok ($n cases, $skipped skipped)"
