#!/bin/sh
# Our pprof output against the reference reader: convert a folded fixture to pprof, then check
# that `go tool pprof -top` and `-traces` show the functions, counts and percentages the folded
# input implies. Skips (77) where Go is not installed.
set -eu

: "${HOTSTACK:?}" "${SRCDIR:?}"
if ! command -v go >/dev/null 2>&1; then
	echo "pprof-go: go is not installed (apt-get install golang-go)" >&2
	exit 77
fi
if ! go tool -n pprof >/dev/null 2>&1; then
	echo "pprof-go: this Go has no 'go tool pprof'" >&2
	exit 77
fi

in="$SRCDIR/tests/fixtures/pprof-go/input.folded"
dir=$(mktemp -d "${TMPDIR:-/tmp}/pprof-go.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export PPROF_TMPDIR="$dir" HOME="${HOME:-$dir}"

fail() {
	echo "pprof-go: $*" >&2
	exit 1
}

"$HOTSTACK" convert "$in" -o "$dir/out.pb.gz" || fail "hotstack convert failed"
[ -s "$dir/out.pb.gz" ] || fail "empty output"
go tool pprof -top -symbolize=none "$dir/out.pb.gz" >"$dir/top.txt" 2>"$dir/top.err" ||
	fail "go tool pprof -top rejected the file: $(cat "$dir/top.err")"
go tool pprof -traces -symbolize=none "$dir/out.pb.gz" >"$dir/traces.txt" 2>"$dir/traces.err" ||
	fail "go tool pprof -traces rejected the file: $(cat "$dir/traces.err")"

# What the folded input implies, one line per function: "name flat flat% cum", with
# percentages formatted the way pprof formats them (internal/measurement.Percentage).
awk '
function pct(v, t,   r) {
	r = t ? 100 * v / t : 0
	if (r >= 99.95 && r <= 100.05) return "100%"
	if (r >= 1) return sprintf("%.2f%%", r)
	if (r == 0) return "0%"
	return sprintf("%.2g%%", r)
}
NF {
	n = $NF; sub(/ [0-9]+$/, "")
	k = split($0, f, ";")
	total += n
	delete seen
	for (i = 2; i <= k; i++) {
		name = f[i]; sub(/_\[[kji]\]$/, "", name)
		all[name] = 1
		if (!(name in seen)) cum[name] += n
		seen[name] = 1
		if (i == k) flat[name] += n
	}
}
END {
	for (name in all) printf "%s %d %s %d\n", name, flat[name], pct(flat[name], total), cum[name]
	printf "TOTAL %d\n", total
}' "$in" | sort >"$dir/want-top.txt"

# What pprof shows: the rows after the column header of -top.
awk '
/^ *flat  *flat%/ { rows = 1; next }
/^Showing nodes accounting for/ { total = $5; sub(/,$/, "", total) }
rows && NF >= 6 {
	name = $6; for (i = 7; i <= NF; i++) name = name " " $i
	printf "%s %d %s %d\n", name, $1, $2, $4
}
END { printf "TOTAL %d\n", total }' "$dir/top.txt" | sort >"$dir/got-top.txt"

if ! cmp -s "$dir/want-top.txt" "$dir/got-top.txt"; then
	echo "pprof-go: go tool pprof -top differs from the folded input (want, got):" >&2
	diff "$dir/want-top.txt" "$dir/got-top.txt" >&2 || true
	cat "$dir/top.txt" >&2
	exit 1
fi

# -traces: each block is the thread's comm label, the count beside the leaf, then callers.
# Rebuilt as folded lines (root first) they must be the input's lines, annotations aside.
awk '
function flush(   i, s) {
	if (!nf) return
	s = comm
	for (i = nf; i >= 1; i--) s = s ";" fr[i]
	print s " " count
	nf = 0
}
/^-+\+-+$/ { flush(); comm = ""; next }
/^ *comm: / { comm = $2; next }
/^ +[0-9]+ +[^ ]/ && !nf { count = $1; fr[++nf] = $2; next }
/^ +[^ ]/ && nf { fr[++nf] = $1; next }
END { flush() }' "$dir/traces.txt" | sort >"$dir/got-traces.txt"
sed -e 's/_\[[kji]\]//g' "$in" | grep -v '^$' | sort >"$dir/want-traces.txt"

if ! cmp -s "$dir/want-traces.txt" "$dir/got-traces.txt"; then
	echo "pprof-go: go tool pprof -traces differs from the folded input (want, got):" >&2
	diff "$dir/want-traces.txt" "$dir/got-traces.txt" >&2 || true
	cat "$dir/traces.txt" >&2
	exit 1
fi

# And the file reads back: converting it to folded gives the input again, kernel frames
# still annotated.
if "$HOTSTACK" convert "$dir/out.pb.gz" -o "$dir/back.folded" 2>"$dir/back.err"; then
	sort "$in" | grep -v '^$' >"$dir/want-back.txt"
	sort "$dir/back.folded" >"$dir/got-back.txt"
	if ! cmp -s "$dir/want-back.txt" "$dir/got-back.txt"; then
		echo "pprof-go: folded -> pprof -> folded differs (want, got):" >&2
		diff "$dir/want-back.txt" "$dir/got-back.txt" >&2 || true
		exit 1
	fi
else
	fail "hotstack convert could not read its own pprof: $(cat "$dir/back.err")"
fi
echo "pprof-go: ok"
