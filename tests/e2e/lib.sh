# shellcheck shell=sh
# Shared by the end-to-end tests: a scratch directory, failure and skip helpers, the probe that
# skips (exit 77) where the kernel refuses perf_event_open, and the check for what the browser
# tests need (Chromium, node, tests/browser/node_modules).
: "${HOTSTACK:?HOTSTACK must name the hotstack binary}"
: "${WORKLOADS:?WORKLOADS must name the built workloads}"
: "${SRCDIR:?}"

test_name=$(basename "$0" .sh)
dir=$(mktemp -d "${TMPDIR:-/tmp}/hs-$test_name.XXXXXX")
trap 'remove_jit_files; rm -rf "$dir"' EXIT
# The views read a pipe on standard input when given no FILE (as perf report does): the tests
# give their commands no pipe but their own, whatever ran them.
exec </dev/null

# The tests' helpers (receivers, checkers) run on the distribution's python3: a version
# manager's shim first on PATH (pyenv's) takes a second or more to start on a busy machine, and
# a push test starts python3 a hundred times. The programs recorded name their python.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir "$dir/.python"
	ln -s /usr/bin/python3 "$dir/.python/python3"
	PATH=$dir/.python:$PATH
	export PATH
fi

# "$note_pid" CMD ARGS... runs CMD with its pid noted, so that the perf map and jitdump a runtime
# writes to /tmp for it are removed at the end (remove_jit_files, called by every EXIT trap):
# left there, a later process given the same pid would find them.
note_pid=$dir/note-pid.sh
printf '#!/bin/sh\necho $$ >>"%s"\nexec "$@"\n' "$dir/noted-pids" >"$note_pid"
chmod +x "$note_pid"
remove_jit_files() {
	[ -f "$dir/noted-pids" ] || return 0
	while read -r p; do rm -f "/tmp/perf-$p.map" "/tmp/jit-$p.dump"; done <"$dir/noted-pids"
}

fail() {
	echo "$test_name: FAIL: $*" >&2
	exit 1
}

skip() {
	echo "$test_name: SKIP: $*" >&2
	exit 77
}

# Skips the test where perf_event_open is refused (no permission, no perf events in the kernel).
require_perf_events() {
	if ! "$HOTSTACK" record -q -g none -o "$dir/.probe.folded" -- true 2>"$dir/.probe.err"; then
		if grep -qiE 'permission|paranoid|not supported|perf_event_open' "$dir/.probe.err"; then
			skip "perf_event_open is refused here: $(head -n1 "$dir/.probe.err")"
		fi
		fail "the probe recording failed: $(cat "$dir/.probe.err")"
	fi
}

# The perf map tests' JVM (jit-java*.sh): skips where java, javac, perf events or a JDK 17 or later
# (Compiler.perfmap) is missing, and compiles tests/workloads/Spin.java into $dir.
require_spin_java() {
	command -v java >/dev/null 2>&1 || skip "java is not installed (apt-get install default-jdk-headless)"
	command -v javac >/dev/null 2>&1 || skip "javac is not installed (apt-get install default-jdk-headless)"
	require_perf_events
	major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
	[ "${major:-0}" -ge 17 ] || skip "Compiler.perfmap needs a JDK 17 or later (this is ${major:-unknown})"
	cp "$SRCDIR/tests/workloads/Spin.java" "$dir/"
	javac -d "$dir" "$dir/Spin.java" 2>"$dir/javac.err" || fail "javac: $(cat "$dir/javac.err")"
}

# perf 6.1 reads the build-ids of the files it recorded wrongly while another program on the
# machine has a perf event that asks for build-ids in its mmap records (perf record
# --buildid-mmap -a, or a profiler built so): the kernel then marks perf's own mmap records as
# holding build-ids too, over their device and inode. perf record aborts at its end ("assertion
# failed at util/build-id.c"), or in pipe mode writes build-ids no file has. There the kernel's
# build-ids are taken instead (--buildid-mmap, in each mmap record), and since that leaves
# perf's build-id cache alone, the files a recording names are added to it after, as perf
# record adds them: its output is the perf.data perf writes otherwise. Every test's `perf
# record` goes through this (tests/e2e/perf-coexist.sh, which checks that hotstack is not such
# a program, calls perf itself).
perf() {
	if [ "${1:-}" != record ] || ! perf_ids_broken; then
		command perf "$@"
		return
	fi
	shift
	_out=perf.data _cache=1
	for _a in "$@"; do # -B: no build-ids read at all; -N: none cached
		case $_a in
		--) break ;;
		-B | --no-buildid) command perf record "$@"; return ;;
		-N | --no-buildid-cache) _cache=0 ;;
		esac
	done
	command perf record --buildid-mmap "$@" || return
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		-o) _out=${2:-}; shift ;;
		--output=*) _out=${1#--output=} ;;
		-o?*) _out=${1#-o} ;;
		esac
		shift
	done
	[ "$_out" != - ] && [ "$_cache" = 1 ] || return 0
	command perf buildid-list -i "$_out" 2>/dev/null | while read -r _id _path; do
		case $_path in /*) [ -f "$_path" ] && command perf buildid-cache -a "$_path" 2>/dev/null ;; esac
	done
	return 0
}

# Whether perf's own build-id reading is broken here (above): found once per test.
perf_ids_broken() {
	if [ ! -e "$dir/.perf-ids" ]; then
		if command perf record -q -o "$dir/.perf-ids.data" -- true >/dev/null 2>"$dir/.perf-ids.err" ||
			! grep -q 'build-id\.c' "$dir/.perf-ids.err"; then
			echo ok >"$dir/.perf-ids"
		else
			echo broken >"$dir/.perf-ids"
		fi
		rm -f "$dir/.perf-ids.data"
	fi
	[ "$(cat "$dir/.perf-ids")" = broken ]
}

# For tests that read perf.data perf writes: perf installed and able to record, with a build-id
# cache of the test's own ($dir/home as HOME, PERF_BUILDID_DIR unset): perf processes of tests
# side by side writing one ~/.debug at once fail now and then. A second try, as perf also fails
# an assertion of its own now and then on a busy machine.
require_perf_record() {
	command -v perf >/dev/null 2>&1 || skip "perf is not installed (apt-get install linux-perf)"
	mkdir -p "$dir/home"
	export HOME="$dir/home"
	unset PERF_BUILDID_DIR
	perf record -q -o "$dir/probe.data" -- true >/dev/null 2>"$dir/probe.err" ||
		perf record -q -o "$dir/probe.data" -- true >/dev/null 2>"$dir/probe.err" ||
		skip "perf record does not work here: $(head -n1 "$dir/probe.err")"
}

# Whether the browser tests can run: $CHROMIUM (/usr/bin/chromium unless set) there, node 18 or
# newer (what playwright-core needs), and playwright-core and each MODULE named installed in
# tests/browser/node_modules (npm ci). Sets CHROMIUM and browser_dir (tests/browser); where it
# answers no, $browser_missing says what is missing.
have_browser() { # [MODULE...]
	CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
	browser_dir=$SRCDIR/tests/browser
	browser_missing="no $CHROMIUM (apt-get install chromium)"
	[ -x "$CHROMIUM" ] || return 1
	browser_missing="no node (apt-get install nodejs npm)"
	command -v node >/dev/null 2>&1 || return 1
	_node_major=$(node -p 'process.versions.node.split(".")[0]')
	browser_missing="node $_node_major is older than 18, which playwright-core needs"
	[ "$_node_major" -ge 18 ] 2>/dev/null || return 1
	for _m in playwright-core "$@"; do
		browser_missing="no $browser_dir/node_modules/$_m (run 'npm ci' there)"
		[ -d "$browser_dir/node_modules/$_m" ] || return 1
	done
	browser_missing=
}

# Skips the test where the browser tests cannot run (have_browser); sets CHROMIUM and browser_dir.
require_browser() { # [MODULE...]
	have_browser "$@" || skip "$browser_missing"
}

# Asserts that a command's exit status is the expected one.
expect_status() {
	want=$1
	shift
	set +e
	"$@" >"$dir/.out" 2>"$dir/.err"
	got=$?
	set -e
	[ "$got" = "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(cat "$dir/.err")"
}

# Asserts that the last expect_status run printed a line matching an extended regex on stderr.
expect_stderr() {
	grep -qE -- "$1" "$dir/.err" || fail "stderr does not match /$1/: $(cat "$dir/.err")"
}

# Waits, polling every 0.1 s, for at most TENTHS tenths of a second until a command succeeds;
# returns its last status: wait_until 300 test -e "$dir/ready" || fail "..."
wait_until() {
	_tenths=$1
	shift
	while ! "$@"; do
		[ "$_tenths" -gt 0 ] || return 1
		_tenths=$((_tenths - 1))
		sleep 0.1
	done
}

# Waits as wait_until for a process to end (it need not be this shell's child).
wait_gone() { # PID TENTHS
	_pid=$1
	wait_until "$2" sh -c '! kill -0 "$1" 2>/dev/null' sh "$_pid"
}

# Whether FILE holds a line matching the basic regex PATTERN (missing FILE: no).
has_line() { # FILE PATTERN
	grep -q -- "$2" "$1" 2>/dev/null
}
