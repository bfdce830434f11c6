#!/bin/sh
# Files' compiled unwinding tables kept in the cache directory: one perf.data of DWARF stacks
# converted with the cache off, cold and warm gives the same folded stacks. That the warm run
# reads the entry is shown by zeroing the program's .eh_frame in place (size, inode and mtime
# kept): only the entry still unwinds through its frames. An entry of another version of the
# file (mtime), another user's, a symbolic link, or a damaged one (truncated, a byte changed) is
# never read, and a damaged one is rewritten. A second recording says it took the tables from
# the cache.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=cache-lib.sh
. "$(dirname "$0")/cache-lib.sh"
cache_setup "$WORKLOADS/recursive" --call-graph dwarf
entry=$cache/cfi/$id.cfi

# deep NAME: the samples NAME.folded has below at least ten rec frames under main
deep() {
	awk '/;main;rec;rec;rec;rec;rec;rec;rec;rec;rec;rec/ { n += $NF } END { print n + 0 }' "$dir/$1.folded"
}

# -- off, cold, warm: the same; the entry is made by the first run that has a cache
convert off
[ "$(deep off)" -gt 0 ] || fail "no stack ten rec frames deep: $(head -3 "$dir/off.folded" | cut -c1-200)"
[ ! -e "$cache/cfi" ] || fail "the cache was written with HOTSTACK_CACHE_DIR empty"
convert cold "$cache"
[ -f "$entry" ] || fail "no entry $entry after the first run: $(ls -la "$cache" "$cache/cfi" 2>&1)"
[ "$(stat -c %a "$entry")" = 600 ] || fail "the entry is mode $(stat -c %a "$entry"), not 600"
convert warm "$cache"
same off cold
same off warm
cp "$entry" "$dir/good.entry"
echo "off, cold and warm give the same output; $(deep off) samples ten rec frames deep or more"

# -- the program's .eh_frame zeroed in place: size, inode and mtime kept
read -r hexoff hexsize <<EOF2
$(readelf -SW "$prog" | sed 's/^ *\[ *[0-9]*\] //' | awk '$1 == ".eh_frame" { print $4, $5 }')
EOF2
[ -n "$hexsize" ] || fail "no .eh_frame in the program"
off=$(printf '%d' "0x$hexoff")
size=$(printf '%d' "0x$hexsize")
touch -r "$prog" "$dir/stamp"
dd if=/dev/zero of="$prog" bs=1 seek="$off" count="$size" conv=notrunc 2>/dev/null
touch -r "$dir/stamp" "$prog"
convert bad
[ "$(deep bad)" = 0 ] || fail "deep stacks through a zeroed .eh_frame: the test proves nothing"
convert hit "$cache"
same off hit
echo "the entry is read: the same stacks from a program whose .eh_frame is zeroed"

chown nobody "$entry" 2>/dev/null && not_read other-user
rm -f "$entry"
ln -s "$dir/good.entry" "$entry"
not_read symlink
rm -f "$entry"
cp "$dir/good.entry" "$entry"
size=$(stat -c %s "$entry")
truncate -s $((size - 4)) "$entry"
not_read truncated
cp "$dir/good.entry" "$entry"
# a byte of the rows changed (the last one: past the header)
printf '\377' | dd of="$entry" bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
cmp -s "$entry" "$dir/good.entry" && printf '\376' | dd of="$entry" bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
not_read damaged
# another version of the program: the same bytes, a later mtime
cp "$dir/good.entry" "$entry"
touch -d '+1 hour' "$prog"
not_read stale
echo "not read: another user's entry, a symbolic link, a truncated one, a damaged one, a stale one"

# -- the program as built again (a new mtime): a damaged entry is replaced, and used
cp "$dir/prog.pristine" "$prog"
cp "$dir/good.entry" "$entry"
truncate -s $((size / 2)) "$entry"
convert rewritten "$cache"
same off rewritten
[ "$(stat -c %s "$entry")" = "$size" ] || fail "a truncated entry was not rewritten: $(stat -c %s "$entry") bytes"
convert again "$cache"
same off again
echo "a damaged entry is ignored and rewritten"

# -- a recording says where its tables came from: a new cache, filled by the first
mkdir -m 700 "$dir/cache2"
for run in 1 2; do
	HOTSTACK_CACHE_DIR=$dir/cache2 "$HOTSTACK" record -v -g dwarf -o "$dir/r$run.folded" -- "$prog" 0.5 \
		>/dev/null 2>"$dir/r$run.err" || fail "record: $(cat "$dir/r$run.err")"
	grep 'unwinding tables of files' "$dir/r$run.err" >"$dir/r$run.tables" ||
		fail "record -v says nothing of the tables: $(cat "$dir/r$run.err")"
done
# "hotstack: unwinding tables of files: N compiled, M from the cache"
read -r _ _ _ _ _ c1 _ k1 _ <"$dir/r1.tables"
read -r _ _ _ _ _ c2 _ k2 _ <"$dir/r2.tables"
# every full walk goes through the program and libc (main's caller): both compiled by the first
# and read by the second (which may still compile another file it samples, the vdso or ld.so)
[ "$c1" -ge 2 ] && [ "$k1" = 0 ] || fail "the first recording, with an empty cache: $(cat "$dir/r1.tables")"
[ "$k2" -ge 2 ] || fail "the second recording: $(cat "$dir/r2.tables"), the first: $(cat "$dir/r1.tables")"
[ "$(deep r2)" -gt 0 ] || fail "the second recording has no deep stack: $(head -3 "$dir/r2.folded" | cut -c1-200)"
echo "first recording: $c1 compiled; second: $c2 compiled, $k2 from the cache"
