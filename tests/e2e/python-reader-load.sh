#!/bin/sh
# The Python frame reader is loaded only when a recording meets a CPython: attached with -p to a
# native program, record -v says it was not loaded, and the recording holds no program but the
# dispatcher of a few dozen instructions the sampling events carry (bpftool names them, where it
# exists).
# Python met later still gets its frames: a shell that execs python3.11 after 0.3 s, and one
# that forks it (a process whose events were copied before the reader was loaded).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
prog="$SRCDIR/tests/workloads/calltree.py"
check="$SRCDIR/tests/e2e/python-check.py"
[ -x /usr/bin/python3.11 ] || fail "Debian's python3.11 is missing (scripts/install-deps installs it)"

pids=""
trap 'kill $pids 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT

# the BPF programs a process holds, one "ID NAME BYTES" line each (NAME, and the size of its
# instructions, "?" without bpftool)
programs_of() { # PID
	for f in /proc/"$1"/fdinfo/*; do
		id=$(sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null) || continue
		[ -n "$id" ] || continue
		bpftool prog show id "$id" >"$dir/show" 2>/dev/null || true
		name=$(sed -n 's/.* name \([^ ]*\) .*/\1/p' "$dir/show" | head -n1)
		size=$(sed -n 's/.*xlated \([0-9]*\)B.*/\1/p' "$dir/show" | head -n1)
		echo "$id ${name:-?} ${size:-?}"
	done
}

"$WORKLOADS/threads" 1 30 >/dev/null &
native=$!
pids="$pids $native"
"$HOTSTACK" record -v -p "$native" -d 2 -o "$dir/native.folded" 2>"$dir/native.err" &
rec=$!
pids="$pids $rec"
wait_until 50 sh -c 'grep -qs "^prog_id:" /proc/"$1"/fdinfo/*' sh "$rec" ||
	fail "the recording holds no BPF program (not even the frame reader's dispatcher)"
sleep 0.7 # well into the recording: the targets looked at, samples drained
programs_of "$rec" >"$dir/programs"
wait "$rec" || fail "record -p of a native program failed: $(cat "$dir/native.err")"
grep -q '^hotstack: Python: frame reader not loaded: no Python process seen$' "$dir/native.err" ||
	fail "record -v does not say the frame reader was not loaded: $(cat "$dir/native.err")"
if grep -iq 'warning.*python' "$dir/native.err"; then
	fail "a warning about Python in a recording without Python: $(cat "$dir/native.err")"
fi
[ "$(wc -l <"$dir/programs")" = 1 ] || fail "BPF programs held while no Python was seen: $(cat "$dir/programs")"
if command -v bpftool >/dev/null; then
	read -r _ name size <"$dir/programs"
	[ "$name" = hs_rt_dispatch ] && [ "$size" -le 320 ] ||
		fail "not the dispatcher alone (ID NAME BYTES): $(cat "$dir/programs")"
else
	echo "$test_name: no bpftool here: the program held is not named" >&2
fi
kill "$native"

# Python met 0.3 s into a recording: exec'd by the command, and forked by it
for how in exec fork; do
	if [ "$how" = exec ]; then
		cmd="sleep 0.3; exec /usr/bin/python3.11 '$prog' 1.5"
	else
		cmd="sleep 0.3; /usr/bin/python3.11 '$prog' 1.5; true"
	fi
	"$HOTSTACK" record -v -o "$dir/$how.folded" -- sh -c "$cmd" 2>"$dir/$how.err" ||
		fail "$how: record failed: $(cat "$dir/$how.err")"
	grep -q '^hotstack: Python: frame reader loaded$' "$dir/$how.err" ||
		fail "$how: record -v does not say the frame reader was loaded: $(cat "$dir/$how.err")"
	/usr/bin/python3.11 "$check" "$dir/$how.folded" 3.11 || fail "Python $how'd by the command"
done
exit 0
