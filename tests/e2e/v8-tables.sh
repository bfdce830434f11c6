#!/bin/sh
# The V8 reader's metadata (src/runtime/v8/): node's v8dbg_ symbols are read into a layout
# (tests/tools/hs-v8-probe), in a running node the builtins' copy and the code range around it
# are found; fake binaries that carry garbage metadata (tests/e2e/fake-v8.py: pointer
# compression, another version, a symbol missing, values out of range) are refused in one line,
# by the probe and by a recording of them, which goes on without their frames.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
probe=$BUILDDIR/tests/tools/hs-v8-probe
[ -x "$probe" ] || fail "no $probe"
node=$(command -v node) || fail "no node (scripts/install-deps --test installs it)"
node=$(readlink -f "$node")
pid=
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT

"$probe" --file "$node" >"$dir/file.out" 2>"$dir/file.err" || rc=$?
if [ "${rc:-0}" = 2 ] && grep -q 'is not supported' "$dir/file.err"; then
	skip "node's V8 is not one the reader knows: $(cat "$dir/file.err")"
fi
[ "${rc:-0}" = 0 ] || fail "node's metadata refused: $(cat "$dir/file.err")"
grep -q '^version 11\.3\.' "$dir/file.out" || fail "no version: $(cat "$dir/file.out")"
grep -q '^frame context -8 function -16 argc -24 bytecode_array -32 bytecode_offset -40$' "$dir/file.out" ||
	fail "frame slots: $(cat "$dir/file.out")"
echo "v8-tables: $node: $(head -2 "$dir/file.out" | tr '\n' ' ')"

# a running node: the builtins' copy is a mapping of node's own file, inside the code range
"$node" -e 'setTimeout(() => {}, 20000); console.log("ready")' >"$dir/node.out" 2>&1 &
pid=$!
wait_until 100 has_line "$dir/node.out" ready || fail "node did not start: $(cat "$dir/node.out")"
"$probe" "$pid" >"$dir/proc.out" 2>"$dir/proc.err" || fail "probe of node: $(cat "$dir/proc.err")"
copy=$(sed -n 's/^builtins 0x[0-9a-f]* size 0x[0-9a-f]* copy 0x\([0-9a-f]*\)$/\1/p' "$dir/proc.out")
range=$(sed -n 's/^code range 0x\([0-9a-f]*\)-0x\([0-9a-f]*\)$/\1 \2/p' "$dir/proc.out")
[ -n "$copy" ] && [ "$copy" != 0 ] || fail "no copy of the builtins: $(cat "$dir/proc.out")"
grep -q "^$copy-[0-9a-f]* r-xp [0-9a-f]* [0-9a-f:]* [0-9]* *$node\$" "/proc/$pid/maps" ||
	fail "the copy at $copy is not a mapping of $node: $(grep "$copy" "/proc/$pid/maps")"
python3 -c 'import sys; c, lo, hi = (int(x, 16) for x in sys.argv[1:]); sys.exit(not lo <= c < hi)' \
	"$copy" $range || fail "the copy at $copy is outside the code range $range"
echo "v8-tables: running node: copy at 0x$copy in the code range $range"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=

# garbage metadata: refused in one line, by the probe and by a recording
mkdir "$dir/fake"
for change in TaggedSize=4 VERSION=12.4 off_fp_function=- off_fp_function=1000 \
	class_Map__instance_type__uint16_t=99999 StringRepresentationMask=0 CodeKindBaseline=60; do
	python3 "$SRCDIR/tests/e2e/fake-v8.py" "$dir/fake/node.c" "$change"
	cc -o "$dir/fake/node" "$dir/fake/node.c" || fail "cannot build a fake node"
	rc=0
	timeout 20 "$probe" --file "$dir/fake/node" >/dev/null 2>"$dir/fake.err" || rc=$?
	[ "$rc" = 2 ] || fail "$change: exit $rc, not a refusal: $(cat "$dir/fake.err")"
	[ "$(wc -l <"$dir/fake.err")" = 1 ] && grep -q '^v8: ' "$dir/fake.err" ||
		fail "$change: not one line: $(cat "$dir/fake.err")"
	timeout 60 "$HOTSTACK" record -o "$dir/fake.folded" -- "$dir/fake/node" >/dev/null 2>"$dir/rec.err" ||
		fail "$change: record: $(cat "$dir/rec.err")"
	[ "$(grep -Fc "$(cat "$dir/fake.err")" "$dir/rec.err")" = 1 ] ||
		fail "$change: the recording did not say why in one line: $(cat "$dir/rec.err")"
	echo "v8-tables: $change refused: $(cat "$dir/fake.err")"
done
# the same metadata, unchanged, is accepted
python3 "$SRCDIR/tests/e2e/fake-v8.py" "$dir/fake/node.c"
cc -o "$dir/fake/node" "$dir/fake/node.c"
"$probe" --file "$dir/fake/node" >/dev/null 2>"$dir/fake.err" || fail "the fake's own values refused: $(cat "$dir/fake.err")"
