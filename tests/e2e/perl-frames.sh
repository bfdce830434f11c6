#!/bin/sh
# Perl frames read at sample time, under Debian's perl 5.36: a program with a known call tree
# (recursion, a method, a closure called from map, a sort block run by pp_sort, Digest::MD5's
# XS code in a second thread, a forked child), started with no flag, attached to with -p, and
# system-wide: at least 95% of the leaf sub's samples carry the exact Perl chain from the top
# level down, the XS code's native frames sit under their Perl caller, the thread shows its
# subs with no top level under them, the child is read, and no sample has a chain that looks
# whole and is wrong (perl-check.py). Then --perl-internals, --no-perl, a perl of another
# version or build (the same binary with PL_version or PL_interp_size patched) and a program
# only named perl: one line or nothing, never a crash.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
prog="$SRCDIR/tests/workloads/calltree.pl"
check="$SRCDIR/tests/e2e/perl-check.py"
[ -x /usr/bin/perl ] || fail "perl is missing (scripts/install-deps installs it)"
perl -MDigest::MD5 -Mthreads -e 1 2>/dev/null || fail "perl lacks threads or Digest::MD5"

pids=""
trap 'kill $pids 2>/dev/null || true; rm -rf "$dir"' EXIT

# started by hotstack, with a forked child
# (without -q: a perl refused as it starts says so in a warning)
"$HOTSTACK" record -o "$dir/run.folded" -- perl "$prog" 2.5 "" fork 2>"$dir/run.err" ||
	fail "record failed: $(cat "$dir/run.err")"
if grep -q '^hotstack: warning: perl' "$dir/run.err"; then fail "record said: $(cat "$dir/run.err")"; fi
python3 "$check" "$dir/run.folded" --fork || fail "started"

# attached to the same program started without hotstack
perl "$prog" 4 "$dir/ready" &
pid=$!
pids="$pids $pid"
wait_until 100 test -s "$dir/ready" || fail "the program did not start"
"$HOTSTACK" record -q -p "$pid" -d 2 -o "$dir/p.folded" 2>"$dir/p.err" || fail "record -p failed: $(cat "$dir/p.err")"
python3 "$check" "$dir/p.folded" || fail "attached with -p"
wait "$pid" || true

# system-wide: the Perl processes (the program and its child) among all the others
rm -f "$dir/ready"
perl "$prog" 4 "$dir/ready" fork &
pids="$pids $!"
wait_until 100 test -s "$dir/ready" || fail "the program did not start for -a"
"$HOTSTACK" record -q -a -d 2 -o "$dir/all.folded" || fail "record -a failed"
grep '^perl;' "$dir/all.folded" >"$dir/all-perl.folded" || fail "-a: no perl samples"
python3 "$check" "$dir/all-perl.folded" --fork || fail "system-wide"

# an embedder of libperl.so: a thread's interpreter in the C library's thread-specific data
if [ -x /usr/bin/perl5.36-x86_64-linux-gnu ]; then
	"$HOTSTACK" record -q -o "$dir/emb.folded" -- /usr/bin/perl5.36-x86_64-linux-gnu "$prog" 2 ||
		fail "record of the embedder failed"
	python3 "$check" "$dir/emb.folded" || fail "an embedder of libperl.so"
else
	echo "$test_name: no perl5.36-x86_64-linux-gnu here: libperl.so not tested" >&2
fi

# a string eval run in a loop (each its own file, gone when it ends), List::Util's first (XS)
# calling a block, and sort calling a named sub: three runs of the loop, each in its place
cat >"$dir/evals.pl" <<'PL'
use strict; use warnings; use List::Util qw(first);
sub leaf { my $x = 0; for (my $i = 0; $i < 100000; $i++) { $x += $i } return $x }
sub by_num { leaf(); $a <=> $b }
sub viafirst { return first { by_name_sort() } (1, 2) }
sub by_name_sort { my @s = sort by_num (3, 1, 2); return 1 }
my $end = time + 2;
while (time < $end) { my $r = eval "viafirst()\n"; }
PL
"$HOTSTACK" record -q -o "$dir/evals.folded" -- perl "$dir/evals.pl" || fail "record of evals failed"
awk '/;main::leaf/ {n += $NF
	# first() is in the stripped List::Util XS module: named by its address alone
	if ($0 ~ /;perl_run;main;\(eval\);main::viafirst;(\[Util\.so\]|Util\.so\+0x[0-9a-f]+);main::__ANON__;main::by_name_sort;main::by_num;main::leaf /) ok += $NF}
	END {print "perl-frames: evals: " ok + 0 " of " n + 0 " leaf samples with the chain"; if (n < 100 || ok < 0.95 * n) exit 1}' \
	"$dir/evals.folded" || fail "string evals, first and sort subs: not the chain"

# --perl-internals keeps the interpreter's loop and ops; --no-perl gives the native stacks
"$HOTSTACK" record -q --perl-internals -o "$dir/int.folded" -- perl "$prog" 2 || fail "record --perl-internals failed"
python3 "$check" "$dir/int.folded" --internals || fail "--perl-internals"
"$HOTSTACK" record -q --no-perl -o "$dir/no.folded" -- perl "$prog" 1.5 || fail "record --no-perl failed"
grep -q 'Perl_runops_standard' "$dir/no.folded" || fail "--no-perl: no native interpreter frames"
if grep -q 'main::' "$dir/no.folded"; then fail "--no-perl: Perl frames read"; fi

# a perl of a version or build the reader does not know: one line naming it, native stacks
patch_byte() { # FILE SYMBOL VALUE: the byte at SYMBOL's address in FILE set to VALUE
	off=$(python3 - "$1" "$2" <<'PY'
import subprocess, sys
path, name = sys.argv[1], sys.argv[2]
syms = subprocess.run(["readelf", "-Ws", path], capture_output=True, text=True).stdout
addr = next(int(l.split()[1], 16) for l in syms.splitlines() if l.split()[-1:] == [name])
for l in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f[:1] == ["LOAD"] and int(f[2], 16) <= addr < int(f[2], 16) + int(f[4], 16):
        print(addr - int(f[2], 16) + int(f[1], 16))
PY
)
	[ -n "$off" ] || fail "no $2 in $1"
	printf "\\$(printf '%03o' "$3")" | dd of="$1" bs=1 seek="$off" conv=notrunc status=none
}
spin='my $e = time + 1; 1 while time < $e'
cp /usr/bin/perl "$dir/perl5.38.0"
patch_byte "$dir/perl5.38.0" PL_version 38
expect_status 0 "$HOTSTACK" record -o "$dir/v538.folded" -- "$dir/perl5.38.0" -e "$spin"
[ "$(grep -c 'perl 5.38.0 is not supported (Perl frames are read for 5.36' "$dir/.err")" = 1 ] ||
	fail "perl 5.38: no one-line warning: $(cat "$dir/.err")"
grep -q 'Perl_runops_standard' "$dir/v538.folded" || fail "perl 5.38: no native stacks"
cp /usr/bin/perl "$dir/perl"
patch_byte "$dir/perl" PL_interp_size 0
expect_status 0 "$HOTSTACK" record -o "$dir/size.folded" -- "$dir/perl" -e "$spin"
[ "$(grep -c 'perl 5.36.0: its interpreter is of 3584 bytes, not 3768' "$dir/.err")" = 1 ] ||
	fail "another build: no one-line warning: $(cat "$dir/.err")"
# a program that is no perl, named perl: nothing said, nothing read
cp "$WORKLOADS/calltree" "$dir/perl"
expect_status 0 "$HOTSTACK" record -o "$dir/fake.folded" -- "$dir/perl" 1
# (the lines naming the file written hold this test's directory, hs-perl-frames.*)
if grep -v '^hotstack: \(wrote \|next: \)' "$dir/.err" | grep -qi 'perl'; then
	fail "a program named perl: $(cat "$dir/.err")"
fi
grep -q 'main' "$dir/fake.folded" || fail "a program named perl: no stacks"

# without the right to load BPF programs: one line, and the recording goes on
if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	chmod 777 "$dir"
	runuser -u nobody -- "$HOTSTACK" record -o "$dir/nobpf.folded" -- perl "$prog" 1 \
		>"$dir/nobpf.out" 2>"$dir/nobpf.err" || fail "record as nobody failed: $(cat "$dir/nobpf.err")"
	[ "$(grep -c 'Perl frames needs root' "$dir/nobpf.err")" = 1 ] ||
		fail "no one-line notice without BPF rights: $(cat "$dir/nobpf.err")"
	grep -q 'Perl_runops_standard' "$dir/nobpf.folded" || fail "no native stacks without BPF rights"
	if grep -q 'main::' "$dir/nobpf.folded"; then fail "Perl frames without BPF rights?"; fi
else
	fail "no user 'nobody' or no runuser to test without BPF rights"
fi
exit 0
