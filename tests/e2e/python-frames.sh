#!/bin/sh
# Python frames read at sample time, under every CPython 3.8-3.13 here and Debian's python3.11:
# a program with a known call tree (recursion, a method, zlib, a second thread), started with
# no flag and attached to with -p, and once system-wide: at least 95% of the leaf function's
# samples carry the exact Python chain from <module> down, zlib's frames sit under their Python
# caller, the thread shows its function (python-check.py). Then --python-internals, -X perf's
# trampolines left out, a version outside 3.8-3.13 and a user without BPF rights: one line each.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
prog="$SRCDIR/tests/workloads/calltree.py"
check="$SRCDIR/tests/e2e/python-check.py"
[ -x /usr/bin/python3.11 ] || fail "Debian's python3.11 is missing (scripts/install-deps installs it)"

pids=""
trap 'kill $pids 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT

run_one() { # NAME VERSION PYTHON
	name=$1 version=$2 py=$3
	"$HOTSTACK" record -q -o "$dir/$name.folded" -- "$py" "$prog" 2.5 2>"$dir/$name.err" ||
		fail "$name: record failed: $(cat "$dir/$name.err")"
	[ ! -s "$dir/$name.err" ] || fail "$name: record said: $(cat "$dir/$name.err")"
	/usr/bin/python3.11 "$check" "$dir/$name.folded" "$version" || fail "$name: started"
	# attached to the same program started without hotstack
	rm -f "$dir/ready"
	"$py" "$prog" 4 "$dir/ready" &
	pid=$!
	pids="$pids $pid"
	wait_until 100 test -s "$dir/ready" || fail "$name: the program did not start"
	"$HOTSTACK" record -q -p "$pid" -d 2 -o "$dir/$name-p.folded" 2>"$dir/$name-p.err" ||
		fail "$name: record -p failed: $(cat "$dir/$name-p.err")"
	/usr/bin/python3.11 "$check" "$dir/$name-p.folded" "$version" || fail "$name: attached with -p"
	wait "$pid" || true
}

run_one debian 3.11 /usr/bin/python3.11
tested="debian-3.11"
for v in 2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13; do
	py=$(ls -d "$HOME"/.pyenv/versions/"$v".*/bin/python"$v" 2>/dev/null | tail -n1 || true)
	if [ -z "$py" ]; then
		echo "$test_name: no pyenv CPython $v here: not tested" >&2
		continue
	fi
	run_one "py$v" "$v" "$py"
	tested="$tested $v"
done

# system-wide: the Python process among all the others
rm -f "$dir/ready"
/usr/bin/python3.11 "$prog" 4 "$dir/ready" &
pids="$pids $!"
wait_until 100 test -s "$dir/ready" || fail "the program did not start for -a"
"$HOTSTACK" record -q -a -d 2 -o "$dir/all.folded" || fail "record -a failed"
grep '^python3.11;' "$dir/all.folded" >"$dir/all-py.folded" || fail "-a: no python3.11 samples"
/usr/bin/python3.11 "$check" "$dir/all-py.folded" 3.11 || fail "system-wide"

# processes forked by a Python process (multiprocessing's workers) have its runtime too
cat >"$dir/mp.py" <<'PY'
import multiprocessing, time
def child_work(n):
    end = time.time() + 1.5
    while time.time() < end:
        sum(i for i in range(1000))
if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    with multiprocessing.Pool(2) as p:
        p.map(child_work, [1, 2])
PY
"$HOTSTACK" record -q -o "$dir/mp.folded" -- /usr/bin/python3.11 "$dir/mp.py" || fail "record of multiprocessing failed"
awk '{n += $NF} /;child_work/ {c += $NF} END {if (c < n / 2) {print "multiprocessing: " c " of " n " samples in child_work"; exit 1}}' \
	"$dir/mp.folded" || fail "forked workers without Python frames"

# off-CPU stacks have the Python frames a thread blocked in
cat >"$dir/sleeper.py" <<'PY'
import time
def sleeper():
    for _ in range(30):
        time.sleep(0.05)
sleeper()
PY
"$HOTSTACK" record -q --off-cpu --value off-cpu -o "$dir/off.folded" -- /usr/bin/python3.11 "$dir/sleeper.py" ||
	fail "record --off-cpu failed"
awk '{n += $NF} /;<module>;sleeper;/ {c += $NF} END {if (c < n / 2) {print "off-cpu: " c " of " n " ns under <module>;sleeper"; exit 1}}' \
	"$dir/off.folded" || fail "off-CPU stacks without Python frames"

# code objects made and freed one after another at the same addresses (exec'd functions): each
# sample is named after the function that ran, never a predecessor at its address
cat >"$dir/reuse.py" <<'PY'
import time
for i in range(150):
    ns = {"time": time}
    exec("def f_%d():\n    t = time.time()\n    while time.time() - t < 0.01: pass\n" % i, ns)
    ns["f_%d" % i]()
PY
"$HOTSTACK" record -q --keep-time -o "$dir/reuse.pb.gz" -- /usr/bin/python3.11 "$dir/reuse.py" || fail "record of exec'd code failed"
# (each sample's time and function, in the order of their times: what is checked is the names)
"$HOTSTACK" script "$dir/reuse.pb.gz" | awk '/^[^ \t]/ { t = $3; sub(/:$/, "", t); named = 0 }
	/^[ \t]/ && !named && match($0, /f_[0-9]+/) { print t, substr($0, RSTART + 2, RLENGTH - 2); named = 1 }' |
	sort -s -n -k1,1 | awk '{ print $2 }' | uniq >"$dir/reuse.order"
awk '$1 + 0 < prev {bad++; if (!at) at = NR} {prev = $1 + 0; n++; f[NR] = $1}
	END {if (bad || n < 100) {print "exec: " n " functions, " bad + 0 " out of order (" f[at - 2] " " f[at - 1] " " f[at] " " f[at + 1] ")"; exit 1}}' \
	"$dir/reuse.order" || fail "exec'd functions misnamed"

# a deep recursion read whole (300 frames under <module>; up to 3.10 its native stack outgrows
# the stack copy, and the gap is marked), and a stack deeper than the frames read (1,024) cut
# where the reading stopped, and said so: never a chain that looks whole and is not
cat >"$dir/deep.py" <<'PY'
import sys, time
sys.setrecursionlimit(5000)
def deep(n):
    if n == 0:
        t = time.time()
        while time.time() - t < 1: pass
    else:
        deep(n - 1)
deep(int(sys.argv[1]))
PY
py310=$(ls -d "$HOME"/.pyenv/versions/3.10.*/bin/python3.10 2>/dev/null | tail -n1 || true)
for py in /usr/bin/python3.11 $py310; do
	v=$(basename "$py")
	"$HOTSTACK" record -q -o "$dir/deep300-$v.folded" -- "$py" "$dir/deep.py" 300 ||
		fail "$v: record of a stack 300 deep failed"
	awk -v v="$v" '/;deep;/ {n += $NF; s = $0; if (index(s, ";<module>;") && gsub(/;deep/, "", s) == 301) w += $NF
		if (!index($0, "_start;") && !index($0, ";[")) bad += $NF}
		END {print "python-frames: " v " deep(300): " w + 0 " of " n + 0 " samples whole, " bad + 0 " complete but wrong"
		if (!n || w < 0.95 * n || bad) exit 1}' "$dir/deep300-$v.folded" || fail "$v: a stack 300 deep not read whole"
done
"$HOTSTACK" record -q -o "$dir/deep1500.folded" -- /usr/bin/python3.11 "$dir/deep.py" 1500 ||
	fail "record of a stack 1500 deep failed"
awk '/;deep;/ {n += $NF} /;\[python: truncated\];deep;deep;/ {c += $NF} END {if (c < 0.95 * n) {print "deep: " c " of " n " samples cut and said so"; exit 1}}' \
	"$dir/deep1500.folded" || fail "a deep stack cut silently"

# generators resumed by a built-in (sum): 3.12 leaves a stale generator frame as the thread's
# current one for a moment; it must never show as a stack without its callers unmarked
cat >"$dir/gen.py" <<'PY'
import sys, time
def gen_source(n):
    for i in range(n):
        yield i * i
def gen_filter(src):
    for x in src:
        if x & 1:
            yield x
def phase_generators():
    return sum(gen_source(5000)) + sum(gen_filter(gen_source(5000))) + sum(x for x in gen_source(3000))
def main():
    t = time.time()
    while time.time() - t < float(sys.argv[1]):
        phase_generators()
main()
PY
for py in /usr/bin/python3.11 $(ls -d "$HOME"/.pyenv/versions/3.1[23].*/bin/python3.1[23] 2>/dev/null || true); do
	v=$(basename "$py")
	"$HOTSTACK" record -q -o "$dir/gen-$v.folded" -- "$py" "$dir/gen.py" 3 || fail "$v: record of generators failed"
	awk -v v="$v" '/;gen_(source|filter)[; ]/ {n += $NF; if (!index($0, ";main;phase_generators;") && !index($0, "[python: ")) bad += $NF}
		END {print "python-frames: " v " generators: " bad + 0 " of " n + 0 " samples without their callers, unmarked"
		if (n < 100 || bad) exit 1}' "$dir/gen-$v.folded" || fail "$v: generator frames without their callers"
done

# --python-internals keeps the eval loop between the Python frames
"$HOTSTACK" record -q --python-internals -o "$dir/int.folded" -- /usr/bin/python3.11 "$prog" 2 ||
	fail "record --python-internals failed"
/usr/bin/python3.11 "$check" "$dir/int.folded" 3.11 --internals || fail "--python-internals"

# -X perf: the interpreter's perf map names trampolines too; only one frame per function shows
py312=$(ls -d "$HOME"/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n1 || true)
if [ -n "$py312" ]; then
	"$HOTSTACK" record -q -o "$dir/xperf.folded" -- "$note_pid" "$py312" -X perf "$prog" 2 || fail "record of -X perf failed"
	/usr/bin/python3.11 "$check" "$dir/xperf.folded" 3.12 || fail "-X perf"
fi

# versions outside 3.8-3.13: one line naming the version, and native frames
olds=0
# 3.6 has no _PyRuntime: its list of interpreters is a static that only the symbol table names;
# a build stripped of it is refused in one line
py36=$(ls -d "$HOME"/.pyenv/versions/3.6.*/bin/python3.6 2>/dev/null | tail -n1 || true)
if [ -n "$py36" ]; then
	mkdir -p "$dir/stripped"
	cp "$(dirname "$py36")"/../lib/libpython3.6m.so.1.0 "$dir/stripped/"
	strip --strip-all "$dir/stripped/libpython3.6m.so.1.0"
	expect_status 0 env LD_LIBRARY_PATH="$dir/stripped" "$HOTSTACK" record -o "$dir/stripped.folded" -- "$py36" "$prog" 0.7
	[ "$(grep -c 'python 3.6: no interp_head in .*stripped' "$dir/.err")" = 1 ] ||
		fail "python 3.6 stripped: no one-line warning: $(cat "$dir/.err")"
fi
# a version not known (2.7's library named 2.6, loaded through a link of 2.7's name: the
# mapping names the file) is refused in one line that names it
for old in "$HOME"/.pyenv/versions/2.7.*/bin/python2.7; do
	[ -x "$old" ] || continue
	mkdir -p "$dir/old"
	cp "$(dirname "$old")"/../lib/libpython2.7.so.1.0 "$dir/old/libpython2.6.so.1.0"
	ln -sf libpython2.6.so.1.0 "$dir/old/libpython2.7.so.1.0"
	expect_status 0 env LD_LIBRARY_PATH="$dir/old" "$HOTSTACK" record -o "$dir/old.folded" -- "$old" "$prog" 0.7
	[ "$(grep -c "python 2.6 is not supported" "$dir/.err")" = 1 ] ||
		fail "python 2.6: no one-line warning: $(cat "$dir/.err")"
	olds=$((olds + 1))
done
[ "$olds" -gt 0 ] || echo "$test_name: no CPython 2.7 here: the version warning is not tested" >&2

# without the right to load BPF programs: one line, and the recording goes on
if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	chmod 777 "$dir"
	runuser -u nobody -- "$HOTSTACK" record -o "$dir/nobpf.folded" -- /usr/bin/python3.11 "$prog" 1 \
		>"$dir/nobpf.out" 2>"$dir/nobpf.err" || fail "record as nobody failed: $(cat "$dir/nobpf.err")"
	[ "$(grep -c 'Python frames needs root' "$dir/nobpf.err")" = 1 ] ||
		fail "no one-line notice without BPF rights: $(cat "$dir/nobpf.err")"
	grep -q '_PyEval_EvalFrameDefault' "$dir/nobpf.folded" || fail "no native stacks without BPF rights"
	if grep -q 'leaf_work' "$dir/nobpf.folded"; then fail "Python frames without BPF rights?"; fi
else
	fail "no user 'nobody' or no runuser to test without BPF rights"
fi
echo "$test_name: tested $tested" >&2
exit 0
