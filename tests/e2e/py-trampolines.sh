#!/bin/sh
# Native unwinding through CPython 3.12+'s perf trampolines: tests/workloads/py-chain.py (the
# main thread in main_loop -> rec * 9 -> leaf, a second thread in worker -> worker_leaf) under
# pyenv's 3.12 with -X perf and 3.13 with -X perf and -X perf_jit, recorded -g dwarf (and
# -g auto once; and by perf record, read from its perf.data). At least 95% of the samples in leaf and in worker_leaf are complete (the
# bottom is _start or the thread start, no pseudo frame) and carry their whole py:: chain in
# order (--no-python: these are the native stacks, which python-frames.sh merges into). With -g fp the kernel walks frame pointers, which the interpreter does not keep: no
# Python frame can be reached, and no stack may be shown complete with a wrong chain.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=unwind-lib.sh
. "$(dirname "$0")/unwind-lib.sh"
require_perf_events

prog=$SRCDIR/tests/workloads/py-chain.py
py312=$HOME/.pyenv/versions/3.12.1/bin/python3.12
py313=$HOME/.pyenv/versions/3.13.0/bin/python3.13
[ -x "$py312" ] || [ -x "$py313" ] || skip "neither $py312 nor $py313 is installed"

run=$note_pid

# the py:: frames of a stack, without their files, ";"-joined
# shellcheck disable=SC2016 # awk's $ fields, not the shell's
py_awk='
function pychain(   i, s, x) {
	s = ""
	for (i = 2; i <= k; i++) if (f[i] ~ /^py::/) {
		x = f[i]; sub(/^py::/, "", x); sub(/:.*/, "", x)
		s = s (s == "" ? "" : ";") x
	}
	return s
}
function start(s) { return s == "_start" || s == "clone3" }
'
main_chain='<module>;main_loop;rec;rec;rec;rec;rec;rec;rec;rec;rec;leaf'
worker_chain='Thread._bootstrap;Thread._bootstrap_inner;Thread.run;worker;worker_leaf'

# check NAME: the leaf samples of $dir/NAME.folded, 95% complete with the whole chain
check() {
	awk "$unwind_awk$py_awk"'
{
	parse()
	c = pychain()
	if (c ~ /(^|;)leaf$/) { want = main; which = "main" }
	else if (c ~ /(^|;)worker_leaf$/) { want = worker; which = "worker" }
	else next
	total[which] += n
	if (start(f[2]) && !has_pseudo() && c == want) good[which] += n
	else print n, line > bad
}
END {
	printf "%d %d %d %d\n", total["main"], good["main"], total["worker"], good["worker"]
}' main="$main_chain" worker="$worker_chain" bad="$dir/$1.bad" "$dir/$1.folded" >"$dir/$1.stats"
	read -r mt mg wt wg <"$dir/$1.stats"
	echo "py-trampolines: $1: leaf $mg of $mt complete, worker_leaf $wg of $wt"
	[ "$mt" -ge 100 ] || fail "$1: only $mt samples in leaf"
	[ "$wt" -ge 100 ] || fail "$1: only $wt samples in worker_leaf"
	if [ $((mg * 100)) -lt $((mt * 95)) ] || [ $((wg * 100)) -lt $((wt * 95)) ]; then
		fail "$1: fewer than 95% complete; the others, most frequent first:
$(worst "$dir/$1.bad")"
	fi
}

ran=0
if [ -x "$py312" ]; then
	record 312-perf --no-python -g dwarf -- "$run" "$py312" -X perf "$prog" 2
	check 312-perf
	record 312-auto --no-python -- "$run" "$py312" -X perf "$prog" 2
	check 312-auto

	# -g fp: the kernel's walk from an rbp the interpreter uses as a register
	record 312-fp --no-python -g fp -- "$run" "$py312" -X perf "$prog" 2
	awk "$unwind_awk$py_awk"'
{
	parse()
	total += n
	c = pychain()
	if (c != "") py += n
	if (c != "" && start(f[2]) && c != main && c != worker) print n, line > bad
}
END { printf "%d %d\n", total, py }' main="$main_chain" worker="$worker_chain" bad="$dir/fp.bad" \
		"$dir/312-fp.folded" >"$dir/fp.stats"
	read -r ft fpy <"$dir/fp.stats"
	echo "py-trampolines: 312-fp: $fpy of $ft samples with a Python frame"
	[ "$ft" -ge 100 ] || fail "-g fp: only $ft samples"
	[ ! -s "$dir/fp.bad" ] || fail "-g fp: complete stacks with a wrong chain:
$(worst "$dir/fp.bad")"

	# a perf.data read later: the trampolines' code is gone, their perf map names them
	if ! command -v perf >/dev/null 2>&1; then
		echo "py-trampolines: SKIP perf.data: perf is not installed"
	elif ! perf record -q -k 1 -F 999 --call-graph dwarf,65528 -o "$dir/perf.data" -- \
		"$run" "$py312" -X perf "$prog" 2 >/dev/null 2>"$dir/perf.err"; then
		echo "py-trampolines: SKIP perf.data: perf record failed: $(head -n1 "$dir/perf.err")"
	else
		"$HOTSTACK" convert "$dir/perf.data" -o "$dir/312-perf-data.folded" 2>"$dir/convert.err" ||
			fail "convert: $(cat "$dir/convert.err")"
		check 312-perf-data
	fi
	ran=1
else
	echo "py-trampolines: SKIP 3.12: $py312 is not installed"
fi
if [ -x "$py313" ]; then
	record 313-perf --no-python -g dwarf -- "$run" "$py313" -X perf "$prog" 2
	check 313-perf
	record 313-perf-jit --no-python -g dwarf -- "$run" "$py313" -X perf_jit "$prog" 2
	check 313-perf-jit
	ran=1
else
	echo "py-trampolines: SKIP 3.13: $py313 is not installed"
fi
[ "$ran" -eq 1 ]
