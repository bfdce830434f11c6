#!/bin/sh
# hotstack top: on an 80x24 terminal (tmux) beside a busy workload, the workload's hot function
# shows within seconds, in a row of its process (PID:comm); s and S (the sort column), k, /, t
# and c (the selected row's process, thread name), Enter, p, z change what is shown; a resize redraws; q ends it at
# once with status 0. Without a terminal it writes a report at each refresh until SIGINT (status
# 0). A process that does not exist, and a refresh of 0, are refused.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v tmux >/dev/null 2>&1 || skip "tmux is not installed"

# main -> a -> b -> leaf and main -> c -> leaf, spinning
"$WORKLOADS/calltree" 300 >/dev/null &
busy=$!
sock=hotstack-top-$$
tmx() { tmux -L "$sock" "$@"; }
trap 'tmx kill-server 2>/dev/null || true; kill $busy 2>/dev/null || true; rm -rf "$dir"' EXIT

# The screen now, in $dir/screen; whether it matches an extended regex.
shows() {
	tmx capture-pane -p -t top >"$dir/screen" 2>/dev/null && grep -qE -- "$1" "$dir/screen"
}
hides() {
	tmx capture-pane -p -t top >"$dir/screen" 2>/dev/null && ! grep -qE -- "$1" "$dir/screen"
}
# Waits up to 15 s for the screen to match (shows) or not (hides).
wait_screen() { # shows|hides REGEX WHAT
	wait_until 150 "$1" "$2" || fail "$3; the screen: $(cat "$dir/screen")"
}
# The function names of the table's rows, one a line.
rows() {
	sed -nE 's/^ *[0-9.]+% +[0-9.]+% +[^ ]+ +\[[a-z.?]+\] +([^ ]+).*/\1/p' "$dir/screen"
}
# Whether the rows' percentages in column 1 (self) or 2 (total) never grow downwards.
sorted_by() {
	tmx capture-pane -p -t top >"$dir/screen" 2>/dev/null
	sed -nE 's/^ *([0-9.]+)% +([0-9.]+)% +[^ ]+ +\[.*/\1 \2/p' "$dir/screen" |
		awk -v c="$1" 'NR > 1 && $c > prev + 0.001 { bad = 1 } { prev = $c } END { exit bad }'
}
# The samples counted since the start or the last z, from the status line.
samples() {
	tmx capture-pane -p -t top | sed -nE '1s/.* ([0-9]+) samples,.*/\1/p'
}
# Whether the rows' function names are in order (C locale), from the screen.
sorted_by_name() {
	tmx capture-pane -p -t top >"$dir/screen" 2>/dev/null
	rows | LC_ALL=C sort -c 2>/dev/null
}
samples_from() { n=$(samples) && [ "${n:-0}" -ge "$1" ]; }
samples_under() { n=$(samples) && [ "${n:-0}" -lt "$1" ]; }
# Whether line N of the screen is the key help.
keys_on_line() { tmx capture-pane -p -t top | sed -n "$1p" | grep -q 'q quit'; }

started=$(date +%s%N)
tmx new-session -d -s top -x 80 -y 24 \
	"'$HOTSTACK' top -p $busy 2>'$dir/top.err'; echo \$? >'$dir/status'; sleep 600"
wait_screen shows " $busy:calltree +\\[\\.\\] +leaf " "the hot function never showed in a row of its process (stderr: $(cat "$dir/top.err" 2>/dev/null))"
# said, not asserted to the second: a loaded machine starts a program more slowly
echo "top: leaf on the screen $(( ($(date +%s%N) - started) / 1000000 )) ms after top started"
shows 'sort self' || fail "the status line does not say the sort"
shows 'q quit' || fail "no key help on the last line"

tmx send-keys -t top s
wait_screen shows 'sort total' "s did not sort by total"
wait_until 50 sorted_by 2 || fail "the rows are not in order of total: $(cat "$dir/screen")"
tmx send-keys -t top S
wait_screen shows 'sort self' "S did not sort by self again"
wait_until 50 sorted_by 1 || fail "the rows are not in order of self: $(cat "$dir/screen")"
shows ' SELF% ' || fail "the header does not mark the sort column: $(sed -n 2p "$dir/screen")"
tmx send-keys -t top s s
wait_screen shows 'sort pid' "s twice did not sort by pid"
shows ' PID:comm ' || fail "the header does not mark pid: $(sed -n 2p "$dir/screen")"
tmx send-keys -t top s s
wait_screen shows 'sort sym' "s twice more did not sort by function"
wait_until 50 sorted_by_name || fail "the rows are not in order of name: $(rows)"
tmx send-keys -t top S S S S
wait_screen shows 'sort self' "S four times did not come back to self"

# t: only the selected row's process; c: only its thread name; again: all
tmx send-keys -t top Home t
wait_screen shows "\\| pid $busy \\|" "t did not keep the selected row's process"
[ -z "$(sed -nE 's/^ *[0-9.]+% +[0-9.]+% +([^ ]+) .*/\1/p' "$dir/screen" | grep -v "^$busy:")" ] ||
	fail "rows of other processes after t: $(cat "$dir/screen")"
tmx send-keys -t top t
wait_screen hides "\\| pid $busy" "t again did not show every process"
tmx send-keys -t top c
wait_screen shows '\| comm calltree \|' "c did not keep the selected row's thread name"
tmx send-keys -t top c
wait_screen hides '\| comm ' "c again did not show every thread name"

tmx send-keys -t top k
wait_screen shows 'kernel hidden' "k did not hide the kernel frames"
hides '\[k\]' || fail "kernel frames shown after k: $(cat "$dir/screen")"
tmx send-keys -t top k
wait_screen shows 'kernel shown' "k again did not show the kernel frames"

# / LEA Enter: only names holding "lea", in any case
tmx send-keys -t top /
tmx send-keys -t top -l LEA
wait_screen shows 'filter: LEA' "/ did not show the filter being typed"
tmx send-keys -t top Enter
wait_screen hides '\[\.\] +main ' "the filter left other functions"
[ -n "$(rows)" ] || fail "the filter left no row: $(cat "$dir/screen")"
rows | grep -qiv lea && fail "rows that do not match the filter: $(rows)"
shows "^sort self \\| kernel shown \\| filter 'LEA' \\|" || fail "the status line does not name the filter: $(head -n1 "$dir/screen")"
# / and the text rubbed out: every function again
tmx send-keys -t top / BSpace BSpace BSpace Enter
wait_screen shows '\[\.\] +main ' "an empty filter did not show every function again"

# Enter on the top row (leaf): its callers b and c, folded again by Enter
tmx send-keys -t top Home Enter
wait_screen shows 'callers:' "Enter did not show the callers"
shows 'callees:' || fail "Enter did not show the callees"
sed -n '/callers:/,/callees:/p' "$dir/screen" | grep -qE '\[\.\] +[bc] ' ||
	fail "leaf's callers are not b and c: $(cat "$dir/screen")"
tmx send-keys -t top Enter
wait_screen hides 'callers:' "Enter again did not fold the callers"

tmx send-keys -t top p
wait_screen shows 'PAUSED' "p did not pause"
tmx send-keys -t top p
wait_screen hides 'PAUSED' "p again did not go on"

# z: the count of samples starts again
wait_until 150 samples_from 1500 || fail "fewer samples than expected before z: $(samples)"
before=$(samples)
tmx send-keys -t top z
wait_until 50 samples_under "$before" || fail "z did not zero the counts ($before samples before, $(samples) after)"

# a smaller terminal: drawn again to fit
tmx resize-window -t top -x 70 -y 20
wait_until 50 keys_on_line 20 || fail "not drawn again at 70x20: $(tmx capture-pane -p -t top)"

tmx send-keys -t top q
wait_until 50 test -s "$dir/status" || fail "q did not end top within 5 s"
[ "$(cat "$dir/status")" = 0 ] || fail "top ended by q exited $(cat "$dir/status"): $(cat "$dir/top.err")"
kill -0 "$busy" || fail "q ended the observed process"

# no terminal: a report each refresh, system-wide by default
"$HOTSTACK" top >"$dir/stdio.txt" 2>"$dir/stdio.err" &
top=$!
reports() { grep -c '^hotstack top .* samples in the last' "$dir/stdio.txt" 2>/dev/null || true; }
two_reports() { [ "$(reports)" -ge 2 ]; }
wait_until 200 two_reports || fail "fewer than 2 reports in 20 s: $(cat "$dir/stdio.txt" "$dir/stdio.err")"
kill -INT "$top"
set +e
wait "$top"
status=$?
set -e
[ "$status" = 0 ] || fail "top --stdio ended by SIGINT exited $status: $(cat "$dir/stdio.err")"
grep -qE '\[\.\] +leaf ' "$dir/stdio.txt" || fail "the reports do not name the workload's function: $(cat "$dir/stdio.txt")"
[ "$(reports)" -ge 2 ] || fail "fewer than 2 reports"

# a command shorter than a refresh: its report at the end, and its exit status
set +e
"$HOTSTACK" top --stdio -d 5 -- "$WORKLOADS/calltree" 1 >"$dir/cmd.txt" 2>"$dir/cmd.err"
status=$?
set -e
[ "$status" = 0 ] || fail "top -- calltree 1 exited $status: $(cat "$dir/cmd.err")"
[ "$(grep -c '^hotstack top ' "$dir/cmd.txt")" -ge 1 ] || fail "no report of a command shorter than a refresh"
grep -qE '\[\.\] +leaf ' "$dir/cmd.txt" || fail "the last report does not name leaf: $(cat "$dir/cmd.txt")"
expect_status 3 "$HOTSTACK" top --stdio -- sh -c 'exit 3'

expect_status 1 "$HOTSTACK" top -p 999999
expect_stderr 'no such process'
[ "$(wc -l <"$dir/.err")" = 1 ] || fail "more than one line for a missing process: $(cat "$dir/.err")"
expect_status 2 "$HOTSTACK" top -d 0
expect_stderr 'invalid refresh interval'
exit 0
