#!/bin/sh
# The kernel-symbol cache: a first recording writes $HOTSTACK_CACHE_DIR/kallsyms, a second
# one reads it (and leaves it as it is) and names the same kernel frames as a recording without
# the cache (the frames in at least half of the samples' stacks: the same each time). An entry
# planted by another user, or a link, is not read: an entry whose names were changed shows its
# names only when it is the user's own. Kernel stacks come from
# sched:sched_switch on offcpu-nofp's naps (main -> sleeper -> nap -> nanosleep), one a nap.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
W="$WORKLOADS/offcpu-nofp"

# record CACHE_DIR NAME: the kernel frames in at least half of the nap path's samples, one a
# line, in $dir/NAME.k (a busy machine adds a preemption's frames to a few of them)
record() {
	set +e
	HOTSTACK_CACHE_DIR=$1 "$HOTSTACK" record -q -e sched:sched_switch -o "$dir/$2.folded" -- "$W" 4 \
		>/dev/null 2>"$dir/$2.err"
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		grep -qiE 'permission|paranoid|not supported|perf_event_open|tracefs' "$dir/$2.err" &&
			skip "tracepoint events are refused here: $(head -n1 "$dir/$2.err")"
		fail "recording $2 failed: $(cat "$dir/$2.err")"
	fi
	awk '/;sleeper;nap;/ {
		n = $NF; total += n; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); delete seen
		for (i = 1; i <= k; i++)
			if (f[i] ~ /_\[k\]$/ && !(f[i] in seen)) { seen[f[i]] = 1; in_[f[i]] += n }
	} END { for (x in in_) if (2 * in_[x] >= total) print x }' "$dir/$2.folded" | sort >"$dir/$2.k"
	grep -q '^do_nanosleep_\[k\]$' "$dir/$2.k" ||
		fail "$2: the nap path has no do_nanosleep: $(grep ';sleeper;' "$dir/$2.folded" | head -n 3)"
}

cache=$dir/cache
mkdir -m 700 "$cache"

record "" nocache
[ -z "$(ls -A "$cache")" ] || fail "an empty HOTSTACK_CACHE_DIR did not turn the cache off"

record "$cache" first
[ -f "$cache/kallsyms" ] || fail "no entry written: $(ls -la "$cache")"
[ "$(stat -c %a "$cache/kallsyms")" = 600 ] || fail "the entry is mode $(stat -c %a "$cache/kallsyms"), not 600"
inode=$(stat -c %i "$cache/kallsyms")

record "$cache" second
[ "$(stat -c %i "$cache/kallsyms")" = "$inode" ] || fail "the second recording wrote the entry again"
cmp -s "$dir/first.k" "$dir/second.k" || fail "kernel frames differ with the cache:
$(diff "$dir/first.k" "$dir/second.k")"
cmp -s "$dir/nocache.k" "$dir/second.k" || fail "kernel frames differ from a recording without the cache:
$(diff "$dir/nocache.k" "$dir/second.k")"
echo "kernel-symbol-cache: $(wc -l <"$dir/second.k") kernel functions on the nap path, the same each time"

# an entry with do_nanosleep renamed (same length): read when it is ours ...
perl -0777 -pe 's/\0do_nanosleep\0/\0DO_NANOSLEEP\0/' "$cache/kallsyms" >"$dir/renamed"
cmp -s "$cache/kallsyms" "$dir/renamed" && fail "do_nanosleep not found in the entry"
own=$dir/own
mkdir -m 700 "$own"
cp "$dir/renamed" "$own/kallsyms"
chmod 600 "$own/kallsyms"
set +e
HOTSTACK_CACHE_DIR=$own "$HOTSTACK" record -q -e sched:sched_switch -o "$dir/own.folded" -- "$W" 2 >/dev/null 2>&1
set -e
grep -q 'DO_NANOSLEEP_\[k\]' "$dir/own.folded" || fail "the user's own entry was not read"

# ... never through a link, nor when another user owns it (root can make one)
hows="link"
[ "$(id -u)" != 0 ] || hows="link owner"
for how in $hows; do
	planted=$dir/planted-$how
	mkdir -m 700 "$planted"
	if [ "$how" = owner ]; then
		cp "$dir/renamed" "$planted/kallsyms"
		chmod 600 "$planted/kallsyms"
		chown 65534 "$planted/kallsyms"
	else
		cp "$dir/renamed" "$dir/target"
		chmod 600 "$dir/target"
		ln -s "$dir/target" "$planted/kallsyms"
	fi
	record "$planted" "planted-$how"
	! grep -q 'DO_NANOSLEEP' "$dir/planted-$how.folded" || fail "an entry planted ($how) was read"
	cmp -s "$dir/nocache.k" "$dir/planted-$how.k" || fail "kernel frames differ with an entry planted ($how):
$(diff "$dir/nocache.k" "$dir/planted-$how.k")"
	# replaced by the user's own, as after any miss
	if [ ! -f "$planted/kallsyms" ] || [ -L "$planted/kallsyms" ] ||
		[ "$(stat -c %u "$planted/kallsyms")" != "$(id -u)" ]; then
		fail "the planted entry ($how) was not replaced by the user's own"
	fi
done
cmp -s "$dir/target" "$dir/renamed" || fail "the link's target changed"
exit 0
