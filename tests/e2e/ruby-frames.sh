#!/bin/sh
# Ruby frames read at sample time under Debian's ruby (CRuby 3.1): a program with a known call
# tree (a class method, recursion, blocks yielded to by C methods and by the zlib extension,
# zlib deflating, a second thread), started with no flag, attached to with -p, system-wide with
# -a, and under YJIT: at least 95% of the leaf's samples carry the exact Ruby chain from the
# thread's base down, none is complete but wrong, zlib's native frames sit under the C method
# that called them, and lines are the ones the program runs (ruby-check.py). Then
# --ruby-internals, --no-ruby, and builds the reader does not know (another version, other
# code): one line each, and the native frames.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
prog="$SRCDIR/tests/workloads/calltree.rb"
check="$SRCDIR/tests/e2e/ruby-check.py"
command -v ruby >/dev/null || fail "ruby is missing (scripts/install-deps --test installs it)"
command -v python3 >/dev/null || fail "python3 is missing"

pids=""
trap 'kill $pids 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT

# started by hotstack: names, and lines from the same recording
"$HOTSTACK" record -q -o "$dir/started.pb.gz" -- ruby "$prog" 3 2>"$dir/started.err" ||
	fail "record failed: $(cat "$dir/started.err")"
[ ! -s "$dir/started.err" ] || fail "record said: $(cat "$dir/started.err")"
"$HOTSTACK" report -o "$dir/started.folded" "$dir/started.pb.gz" || fail "report failed"
python3 "$check" "$dir/started.folded" || fail "started"
"$HOTSTACK" report --lines -o "$dir/lines.folded" "$dir/started.pb.gz" || fail "report --lines failed"
python3 "$check" "$dir/lines.folded" --lines "$prog" || fail "lines"

# attached to the same program started without hotstack, with and without YJIT
for yjit in "" --yjit; do
	rm -f "$dir/ready"
	ruby $yjit "$prog" 5 "$dir/ready" &
	pid=$!
	pids="$pids $pid"
	wait_until 100 test -s "$dir/ready" || fail "the program did not start"
	"$HOTSTACK" record -q -p "$pid" -d 2 -o "$dir/attached$yjit.folded" 2>"$dir/attached.err" ||
		fail "record -p failed: $(cat "$dir/attached.err")"
	python3 "$check" "$dir/attached$yjit.folded" || fail "attached with -p ${yjit:-(no YJIT)}"
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
done

# system-wide: the Ruby process among all the others
rm -f "$dir/ready"
ruby "$prog" 5 "$dir/ready" &
pid=$!
pids="$pids $pid"
wait_until 100 test -s "$dir/ready" || fail "the program did not start for -a"
"$HOTSTACK" record -q -a -d 3 --root pid -o "$dir/all.folded" || fail "record -a failed"
grep "^[^;]*-$pid;" "$dir/all.folded" >"$dir/all-rb.folded" || fail "-a: no samples of the Ruby process"
python3 "$check" "$dir/all-rb.folded" || fail "system-wide"
kill "$pid" 2>/dev/null || true

# --ruby-internals keeps the interpreter's loop between the Ruby frames
"$HOTSTACK" record -q --ruby-internals -o "$dir/int.folded" -- ruby "$prog" 2 || fail "record --ruby-internals failed"
python3 "$check" "$dir/int.folded" --internals || fail "--ruby-internals"

# --no-ruby: the native view, the interpreter's loop and no Ruby names
"$HOTSTACK" record -q --no-ruby -o "$dir/no.folded" -- ruby "$prog" 1 || fail "record --no-ruby failed"
grep -q ';rb_vm_exec;' "$dir/no.folded" || fail "--no-ruby: no rb_vm_exec"
if grep -q 'Tree#leaf' "$dir/no.folded"; then fail "--no-ruby: Ruby frames read anyway"; fi

# processes forked by a Ruby process have its runtime too
cat >"$dir/fork.rb" <<'RB'
def child_work
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < 1.5
end
2.times.map { fork { child_work } }.each { |p| Process.wait(p) }
RB
"$HOTSTACK" record -q -o "$dir/fork.folded" -- ruby "$dir/fork.rb" || fail "record of forked children failed"
awk '{n += $NF} /;<main>;Enumerable#map;Enumerator#each;Integer#times;block in <main>;Kernel#fork;block \(2 levels\) in <main>;Object#child_work/ {c += $NF}
	END {if (c < n / 2) {print "fork: " c " of " n " samples in child_work under its chain"; exit 1}}' "$dir/fork.folded" ||
	fail "forked children without Ruby frames"

# off-CPU stacks have the Ruby frames a thread blocked in
cat >"$dir/sleeper.rb" <<'RB'
def sleeper
  30.times { sleep 0.05 }
end
sleeper
RB
"$HOTSTACK" record -q --off-cpu --value off-cpu -o "$dir/off.folded" -- ruby "$dir/sleeper.rb" ||
	fail "record --off-cpu failed"
awk '{n += $NF} /;<main>;Object#sleeper;Integer#times;block in Object#sleeper;Kernel#sleep;/ {c += $NF}
	END {if (c < n / 2) {print "off-cpu: " c " of " n " ns under Object#sleeper"; exit 1}}' "$dir/off.folded" ||
	fail "off-CPU stacks without Ruby frames"

# methods made and freed one after another (eval'd, removed, collected, the heap compacted):
# their iseqs, bodies, labels and method entries come back at the addresses of those before;
# each sample is named after the method that ran, never a predecessor at its address
cat >"$dir/reuse.rb" <<'RB'
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
150.times do |i|
  eval("def f_#{i}; t = now; x = 0; while now - t < 0.01; x += 1; end; end")
  send("f_#{i}")
  Object.send(:remove_method, "f_#{i}")
  GC.start if i % 5 == 0
  GC.compact if i % 7 == 0
end
RB
"$HOTSTACK" record -q --keep-time -o "$dir/reuse.pb.gz" -- ruby "$dir/reuse.rb" || fail "record of eval'd methods failed"
"$HOTSTACK" script "$dir/reuse.pb.gz" | grep -oE 'f_[0-9]+' | uniq | sed 's/f_//' >"$dir/reuse.order"
awk '$1 + 0 < prev {bad++} {prev = $1 + 0; n++} END {if (bad || n < 100) {print "eval: " n " methods, " bad + 0 " out of order"; exit 1}}' \
	"$dir/reuse.order" || fail "eval'd methods misnamed"

# the heap compacted all along by another thread (GC.compact moves iseqs, method entries,
# strings and classes): the chains are as exact, and none is wrong. Only while the main thread
# runs Ruby code: Ruby 3.1 itself crashes (SEGV in its SEGV handler) when the heap is compacted
# while zlib deflates without the GVL, in most runs on some machines, recorded or not
{
	echo 'main = Thread.current'
	echo 'Thread.new { loop { GC.compact if main.backtrace(0, 1).to_a.first.to_s =~ /spin|loop/; sleep 0.02 } }'
	cat "$prog"
} >"$dir/compact.rb"
"$HOTSTACK" record -q -o "$dir/compact.folded" -- ruby "$dir/compact.rb" 3 || fail "record under GC.compact failed"
python3 "$check" "$dir/compact.folded" || fail "GC.compact"

# Builds the reader does not know, made from Debian's: one line saying why, the native frames,
# and never a Ruby name. Another version (its ruby_version says 3.9.9)...
lib=$(ldd "$(command -v ruby)" | sed -n 's/.*=> \(.*libruby[^ ]*\) .*/\1/p')
[ -f "$lib" ] || fail "ruby does not link a libruby: $(ldd "$(command -v ruby)")"
mkdir -p "$dir/v399" "$dir/code"
python3 - "$lib" "$dir" <<'PY'
import subprocess, sys
lib, out = sys.argv[1], sys.argv[2]
data = bytearray(open(lib, "rb").read())
syms = {}
for line in subprocess.run(["readelf", "-sW", lib], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[7] in ("ruby_version", "rb_profile_frames"):
        syms[f[7]] = int(f[1], 16)
# the first two load segments map file offsets to the same addresses (checked here)
assert data[syms["ruby_version"]:syms["ruby_version"] + 6] == b"3.1.2\0", "ruby_version is not at its address"
v = bytearray(data)
v[syms["ruby_version"]:syms["ruby_version"] + 5] = b"3.9.9"
open(out + "/v399/" + lib.rsplit("/", 1)[1], "wb").write(v)
# ...and other code: rb_profile_frames steps to the next frame by 72 bytes, not 64
c = bytearray(data)
at = c.find(b"\x48\x83\xc3\x40", syms["rb_profile_frames"], syms["rb_profile_frames"] + 400)
assert at > 0, "no add $0x40,%rbx in rb_profile_frames"
c[at + 3] = 0x48
open(out + "/code/" + lib.rsplit("/", 1)[1], "wb").write(c)
PY
for what in v399 code; do
	# (rubygems would refuse a library whose version is not its own)
	expect_status 0 env LD_LIBRARY_PATH="$dir/$what" "$HOTSTACK" record -o "$dir/$what.folded" -- \
		ruby --disable-gems "$prog" 1
	case $what in
	v399) want="ruby 3.9.9 is not supported" ;;
	code) want="ruby 3.1.[0-9]* in .*: rb_profile_frames is not the code this reader knows" ;;
	esac
	[ "$(grep -c "$want" "$dir/.err")" = 1 ] || fail "$what: no one-line refusal: $(cat "$dir/.err")"
	grep -q ';rb_vm_exec;' "$dir/$what.folded" || fail "$what: no native frames"
	if grep -q 'Tree#leaf' "$dir/$what.folded"; then fail "$what: Ruby frames read anyway"; fi
done

# a program that only looks like ruby (another binary under its name): no frames, no complaint
cp "$(command -v sleep)" "$dir/ruby"
expect_status 0 "$HOTSTACK" record -o "$dir/fake.folded" -- "$dir/ruby" 0.5
if grep -qiE 'not supported|cannot read|Ruby frames' "$dir/.err"; then fail "fake ruby: $(cat "$dir/.err")"; fi
exit 0
