#!/bin/sh
# A full disk: on a small tmpfs filled to the last block, recording to a file there ends in one
# clear error line ("No space left on device") and status 1, the existing output file there is
# left exactly as it was (outputs are written to a temporary file beside the target and renamed),
# no temporary file is left behind, and the other outputs of the same recording (on a disk with
# room) are still written. /dev/full as an output: the same error, and the device stays a device.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events

[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
mkdir "$dir/mnt"
mount -t tmpfs -o size=256k,mode=0755 hs-full "$dir/mnt" 2>"$dir/mount.err" ||
	skip "cannot mount a tmpfs here: $(cat "$dir/mount.err")"
trap 'umount "$dir/mnt" 2>/dev/null || true; rm -rf "$dir"' EXIT

echo "the previous profile" >"$dir/mnt/out.svg"
cp "$dir/mnt/out.svg" "$dir/before.svg"
# fill it up
dd if=/dev/zero of="$dir/mnt/fill" bs=4096 2>/dev/null || true
[ "$(df -P "$dir/mnt" | awk 'NR == 2 { print $4 }')" -eq 0 ] || fail "the tmpfs is not full: $(df -P "$dir/mnt")"

expect_status 1 "$HOTSTACK" record -q -o "$dir/mnt/out.svg" -o "$dir/room.folded" -- "$WORKLOADS/calltree" 0.3
expect_stderr "^hotstack: cannot write '$dir/mnt/out.svg': No space left on device$"
[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "expected one line on stderr, got: $(cat "$dir/.err")"
cmp -s "$dir/mnt/out.svg" "$dir/before.svg" || fail "the existing output was clobbered: $(head -c 200 "$dir/mnt/out.svg")"
left=$(cd "$dir/mnt" && for f in .* *; do
	case $f in . | .. | fill | out.svg | '*' | '.*') ;; *) printf '%s ' "$f" ;; esac
done)
[ -z "$left" ] || fail "left behind on the full disk: $left"
grep -q ';main;' "$dir/room.folded" || fail "the output with room was not written"

# the same from a file: convert
expect_status 1 "$HOTSTACK" convert "$dir/room.folded" -o "$dir/mnt/out.svg"
expect_stderr "No space left on device"
cmp -s "$dir/mnt/out.svg" "$dir/before.svg" || fail "convert clobbered the existing output"

# /dev/full
if [ -c /dev/full ]; then
	expect_status 1 "$HOTSTACK" convert "$dir/room.folded" -o /dev/full --format folded
	expect_stderr "^hotstack: cannot write '/dev/full': No space left on device$"
	[ -c /dev/full ] || fail "/dev/full is no longer a device"
fi
exit 0
