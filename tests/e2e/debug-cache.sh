#!/bin/sh
# Compressed DWARF (SHF_COMPRESSED .debug_* sections) decompressed once and kept in the cache
# directory: one perf.data converted with the cache off, cold and warm gives the same folded
# stacks (inline frames, file:line) and pprof. That the warm run reads the entry is shown by
# corrupting the program's compressed .debug_info in place (size, inode and mtime kept): only
# the entry still gives its inline frames. An entry of another version of the file (mtime), of
# another file, another user's, a symbolic link, or a damaged one is never read, and a damaged
# one is rewritten.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -x "$WORKLOADS/dwcache" ] || skip "no C++ compiler: the dwcache workload was not built"
# shellcheck source=cache-lib.sh
. "$(dirname "$0")/cache-lib.sh"
cache_setup "$WORKLOADS/dwcache" -g
entry=$cache/debug/$id.debug
# inline frames, file:line, and the pprof too
convert_args="--inline-annotate --lines"
convert_pprof=1

# inlined NAME: how many of the program's inline frames, with a line, NAME.folded shows
inlined() {
	grep -o '[^;]*:[0-9]*_\[i\]' "$dir/$1.folded" | grep -c 'std::\|/usr/include/c++' || true
}

# -- off, cold, warm: the same; the entry is made by the first run that has a cache
convert off
[ "$(inlined off)" -gt 0 ] || fail "no inline frame of the program with a line: $(head -3 "$dir/off.folded")"
[ ! -e "$cache/debug" ] || fail "the cache was written with HOTSTACK_CACHE_DIR empty"
convert cold "$cache"
[ -f "$entry" ] || fail "no entry $entry after the first run: $(ls -la "$cache" "$cache/debug" 2>&1)"
[ "$(stat -c %a "$entry")" = 600 ] || fail "the entry is mode $(stat -c %a "$entry"), not 600"
readelf -S "$entry" | grep -q '\.debug_info' || fail "the entry has no .debug_info"
# decompressed: no section of it is flagged C (SHF_COMPRESSED) any more
readelf -SW "$entry" | grep '\.debug_' | awk '$0 ~ /\] \.debug/ && $(NF-3) ~ /C/ { bad = 1 } END { exit bad }' ||
	fail "the entry still has compressed sections: $(readelf -SW "$entry" | grep debug_)"
convert warm "$cache"
same off cold
same off warm
cp "$entry" "$dir/good.entry"
echo "off, cold and warm give the same output; $(inlined off) inline frames of the program"

# libc's own debug file where the system has one (libc6-dbg): its entry too
libc=$(ldd "$prog" | awk '/libc\.so/ { print $3; exit }')
lid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
tail=${lid#??}
ldbg=/usr/lib/debug/.build-id/${lid%"$tail"}/$tail.debug
if [ -n "$lid" ] && [ -f "$ldbg" ] && readelf -SW "$ldbg" | grep -q '\.debug_info .* C '; then
	grep -q 'libc\.so' "$dir/off.folded" && { [ -f "$cache/debug/$lid.debug" ] || fail "no entry for libc's debug file"; }
fi

# -- the program's compressed .debug_info corrupted in place: size, inode and mtime kept
hexoff=$(readelf -SW "$prog" | sed 's/^ *\[ *[0-9]*\] //' | awk '$1 == ".debug_info" { print $4 }')
[ -n "$hexoff" ] || fail "no .debug_info in the program"
off=$(printf '%d' "0x$hexoff")
touch -r "$prog" "$dir/stamp"
dd if=/dev/zero of="$prog" bs=1 seek=$((off + 64)) count=4096 conv=notrunc 2>/dev/null
touch -r "$dir/stamp" "$prog"
convert bad
[ "$(inlined bad)" = 0 ] || fail "inline frames out of a corrupt .debug_info: the test proves nothing"
convert hit "$cache"
same off hit
echo "the entry is read: the same output from a program whose DWARF is corrupt"

chown nobody "$entry" 2>/dev/null && not_read other-user
rm -f "$entry"
ln -s "$dir/good.entry" "$entry"
not_read symlink
rm -f "$entry"
# another file's entry under this one's name
if [ -n "$lid" ] && [ -f "$cache/debug/$lid.debug" ]; then
	cp "$cache/debug/$lid.debug" "$entry"
	not_read another-file
fi
cp "$dir/good.entry" "$entry"
size=$(stat -c %s "$entry")
truncate -s $((size / 2)) "$entry"
not_read truncated
# another version of the program: the same bytes, a later mtime
cp "$dir/good.entry" "$entry"
touch -d '+1 hour' "$prog"
not_read stale
echo "not read: another user's entry, a symbolic link, another file's, a truncated one, a stale one"

# -- the program as built again (a new mtime): damaged entries are replaced, and used
cp "$dir/prog.pristine" "$prog"
cp "$dir/good.entry" "$entry"
truncate -s $((size / 2)) "$entry"
convert rewritten "$cache"
same off rewritten
[ "$(stat -c %s "$entry")" = "$size" ] || fail "a truncated entry was not rewritten: $(stat -c %s "$entry") bytes"
# the same size, but not ELF
printf 'JUNK' | dd of="$entry" conv=notrunc 2>/dev/null
convert notelf "$cache"
same off notelf
[ "$(head -c 4 "$entry" | od -An -c | tr -d ' ')" = '177ELF' ] || fail "an entry that is not ELF was not rewritten"
convert again "$cache"
same off again
echo "damaged entries (truncated, not ELF) are ignored and rewritten"
