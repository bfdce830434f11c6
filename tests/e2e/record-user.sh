#!/bin/sh
# record --user NAME -- command: from a root shell, the command runs as that user (uid, gid,
# supplementary groups and HOME/USER/LOGNAME its own; a command that refuses to run as root
# runs), while hotstack keeps recording as root: the command's samples are there, with kernel
# frames. Wrong uses are one-line errors: an unknown user, --user without a command, --user
# without root for another user.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
[ "$(id -u)" = 0 ] || skip "--user needs root"
user=nobody
uid=$(id -u "$user" 2>/dev/null) || skip "no user '$user' here"
gid=$(id -g "$user")
# the workloads must be reachable by that user
setpriv --reuid="$uid" --regid="$gid" --clear-groups test -x "$WORKLOADS/calltree" 2>/dev/null ||
	skip "$user cannot run $WORKLOADS/calltree (a directory on the way is closed to it)"

# the command: refuses root, says who it is on its standard output (which it inherits from us),
# and after the workload, the CPU time its children used (clock ticks, user and system)
"$HOTSTACK" record -q --user "$user" -o "$dir/u.folded" -- sh -c \
	'[ "$(id -u)" != 0 ] || { echo "running as root" >&2; exit 99; }
	 echo "uid $(id -u) gid $(id -g) user $USER home $HOME groups $(id -G)"
	 "$0" 0.5 && echo "cpu $(cut -d" " -f16,17 /proc/$$/stat)"' "$WORKLOADS/calltree" >"$dir/id.out" 2>"$dir/err" ||
	fail "record --user failed ($?): $(cat "$dir/err")"
read -r _ got_uid _ got_gid _ got_user _ got_home _ got_groups <"$dir/id.out" || fail "no identity: $(cat "$dir/id.out")"
read -r _ cutime cstime <<EOF
$(grep '^cpu ' "$dir/id.out")
EOF
[ -n "$cstime" ] || fail "the command said no CPU time: $(cat "$dir/id.out")"
[ "$got_uid" = "$uid" ] || fail "the command ran as uid $got_uid, not $uid ($user)"
[ "$got_gid" = "$gid" ] || fail "the command ran with gid $got_gid, not $gid"
sorted() { tr ' ' '\n' | sort -n | tr '\n' ' '; }
[ "$(echo "$got_groups" | sorted)" = "$(id -G "$user" | sorted)" ] ||
	fail "the command's groups are '$got_groups', not $user's: $(id -G "$user")"
[ "$got_user" = "$user" ] || fail "USER is '$got_user'"
[ "$got_home" = "$(getent passwd "$user" | cut -d: -f6)" ] || fail "HOME is '$got_home'"
grep -q '^calltree;.*main;a;b;leaf ' "$dir/u.folded" || fail "the command's samples are missing: $(head -n 5 "$dir/u.folded")"
# at -F 999 about a sample per ms of its CPU time (which a busy machine shortens): at least half
samples=$(awk '/^calltree;/ { n += $NF } END { print n + 0 }' "$dir/u.folded")
cpu_ms=$(((cutime + cstime) * 1000 / $(getconf CLK_TCK)))
[ "$cpu_ms" -gt 0 ] || fail "the workload used no CPU time: $(cat "$dir/id.out")"
[ $((2 * samples)) -ge "$cpu_ms" ] || fail "only $samples samples of the command in $cpu_ms ms of CPU time"

# its exit status passes through, as without --user
expect_status 3 "$HOTSTACK" record -q --user "$user" -o "$dir/s.folded" -- sh -c 'exit 3'

expect_status 2 "$HOTSTACK" record --user no-such-user-xyz -o "$dir/x.folded" -- true
expect_stderr "^hotstack: no such user: no-such-user-xyz$"
[ "$(wc -l <"$dir/.err")" -eq 1 ] || fail "more than one line: $(cat "$dir/.err")"
expect_status 2 "$HOTSTACK" record --user "$user" -p 1 -o "$dir/x.folded"
expect_stderr "^hotstack: --user goes with a command"
if command -v setpriv >/dev/null; then
	expect_status 1 setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		"$HOTSTACK" record --user root -o /tmp/hs-user-$$.folded -- true
	expect_stderr "^hotstack: --user needs root to run the command as 'root'$"
fi
exit 0
