#!/bin/sh
# A FIFO or a device planted where hotstack looks for a file — a program's .gnu_debuglink target,
# a debug file's build-id path, a dwz supplementary file, the ELF a perf.data names, perf's
# build-id cache — is never opened: the recording and the report finish, with their outputs, and
# the FIFO and the device (watched with inotify) see no open at all. A 1 TiB debug file is not
# checksummed. A SIGINT in the middle of a
# recording of such a program ends it with its outputs written. Every run is under `timeout`, so
# that a regression fails instead of hanging (a blocked recording ignores SIGTERM: -k kills it).
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v cc >/dev/null 2>&1 || skip "cc is not installed (apt-get install gcc)"
for t in objcopy strip readelf; do
	command -v $t >/dev/null 2>&1 || skip "$t is not installed (apt-get install binutils)"
done
require_perf_events
export HOTSTACK_DEBUG_DIR="$dir/debugroot"
mkdir -p "$HOTSTACK_DEBUG_DIR" "$dir/home"
export HOME="$dir/home"
unset PERF_BUILDID_DIR DEBUGINFOD_URLS
skipped=""

# prog SECONDS [MARKER]: spins in prog_spin for SECONDS, after creating MARKER
cat >"$dir/prog.c" <<'EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile double sink;
__attribute__((noinline)) static void prog_spin(int n)
{
	for (int i = 0; i < n; i++)
		sink = sink * 0.999 + i;
}
int main(int argc, char **argv)
{
	struct timespec a, b;
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	if (argc > 2)
		close(open(argv[2], O_WRONLY | O_CREAT, 0644));
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		prog_spin(100000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
EOF
cc -O1 -g -Wl,--build-id -o "$dir/prog" "$dir/prog.c" || fail "cannot build prog"
objcopy --only-keep-debug "$dir/prog" "$dir/prog.debug"
strip --strip-all -o "$dir/prog.stripped" "$dir/prog"

# opens OUT PATH... -- COMMAND...: runs COMMAND and writes to OUT how often each PATH (its
# inode) was opened meanwhile; exits 3 where the kernel reports O_PATH opens too (before 6.5)
cat >"$dir/opens.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(8)));
	int in = inotify_init1(IN_NONBLOCK), wd[64], count[64] = {0}, n = 0, i, st;
	FILE *out = fopen(argv[1], "w");
	ssize_t k;
	pid_t pid;
	for (i = 2; i < argc && strcmp(argv[i], "--") && n < 64; i++)
		if ((wd[n++] = inotify_add_watch(in, argv[i], IN_OPEN)) < 0)
			return perror(argv[i]), 2;
	for (int j = 0; j < n; j++)
		close(open(argv[2 + j], O_PATH));
	if (read(in, buf, sizeof(buf)) > 0)
		return 3;
	if ((pid = fork()) == 0) {
		execvp(argv[i + 1], argv + i + 1);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	while ((k = read(in, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + k; p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
			for (int j = 0; j < n; j++)
				count[j] += ((struct inotify_event *)p)->wd == wd[j];
	for (int j = 0; j < n; j++)
		fprintf(out, "%s %d\n", argv[2 + j], count[j]);
	fclose(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
EOF
cc -O1 -o "$dir/opens" "$dir/opens.c" || fail "cannot build the open watcher"

# a device node of our own (a twin of /dev/null: opening it does nothing), so that no other
# process's opens are counted; /dev/null itself where mknod is refused (opens then not counted)
if mknod "$dir/dev" c 1 3 2>/dev/null; then
	dev="$dir/dev"
else
	dev=/dev/null
	skipped="$skipped; mknod refused: opens of a device not counted"
fi

# run NAME [WATCHER...] -- HOTSTACK-ARGS...: hotstack under a 60 s timeout (then SIGKILL), run by
# WATCHER when given; the status in $status
run() {
	name=$1
	shift
	watcher=""
	while [ "$1" != -- ]; do
		watcher="$watcher $1"
		shift
	done
	shift
	set +e
	# shellcheck disable=SC2086 # the watcher's words are paths without spaces
	${watcher:+$watcher --} timeout -k 5 60 "$HOTSTACK" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	status=$?
	set -e
	[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "$name: still running after 60 s (a blocked open?)"
}

# no_opens NAME PATH...: none of PATH was opened in the last watched run
no_opens() {
	name=$1
	shift
	for p in "$@"; do
		[ "$p" = /dev/null ] && continue
		grep -qxF "$p 0" "$dir/$name.opens" || fail "$name: $(grep -F "$p " "$dir/$name.opens" || echo "$p ?") opens"
	done
}

# record NAME PROG WATCHED...: a 0.5 s recording of PROG, the paths WATCHED for opens; it must
# end, with its outputs written and prog_spin's samples in them
record() {
	name=$1
	prog=$2
	shift 2
	run "$name" "$dir/opens" "$dir/$name.opens" "$@" -- \
		record -q -o "$dir/$name.folded" -o "$dir/$name.pb.gz" -- "$prog" 0.5
	if [ "$status" = 3 ]; then
		skipped="$skipped; this kernel reports O_PATH opens to inotify (before 6.5): opens not counted"
		run "$name" -- record -q -o "$dir/$name.folded" -o "$dir/$name.pb.gz" -- "$prog" 0.5
		printf '' >"$dir/$name.opens"
		for p in "$@"; do echo "$p 0" >>"$dir/$name.opens"; done
	fi
	[ "$status" = 0 ] || fail "$name: record exited $status: $(cat "$dir/$name.err")"
	grep -q "^$(basename "$prog");" "$dir/$name.folded" || fail "$name: no samples: $(head -3 "$dir/$name.folded")"
	"$HOTSTACK" convert "$dir/$name.pb.gz" -o "$dir/$name.back.folded" || fail "$name: the pprof is unreadable"
	cmp -s "$dir/$name.folded" "$dir/$name.back.folded" || fail "$name: the pprof and the folded file differ"
	no_opens "$name" "$@"
}

# -- the .gnu_debuglink target is a FIFO beside the program, a link to a device in its .debug/,
#    a device under the debug root
mkdir -p "$dir/link/.debug" "$HOTSTACK_DEBUG_DIR$dir/link"
cp "$dir/prog.stripped" "$dir/link/prog"
objcopy --add-gnu-debuglink="$dir/prog.debug" "$dir/link/prog"
mkfifo "$dir/link/prog.debug"
ln -s "$dev" "$dir/link/.debug/prog.debug"
ln -s "$dev" "$HOTSTACK_DEBUG_DIR$dir/link/prog.debug"
record debuglink "$dir/link/prog" "$dir/link/prog.debug" "$dev"
echo "debuglink: a FIFO and links to a device as the debug file: recorded, none of them opened"

# -- the .gnu_debuglink target is the debug file made 1 TiB long (sparse: no disk used): its CRC
#    would take minutes; it is not computed, and the file is taken on its build-id
mkdir -p "$dir/huge"
cp "$dir/link/prog" "$dir/huge/prog"
cp "$dir/prog.debug" "$dir/huge/prog.debug"
if truncate -s 1T "$dir/huge/prog.debug" 2>/dev/null; then
	record huge "$dir/huge/prog"
	grep -q ';prog_spin' "$dir/huge.folded" || fail "huge: prog_spin not named from the debug file"
	echo "huge: a 1 TiB debug file of the right build-id: used, its CRC not computed"
else
	skipped="$skipped; no 1 TiB sparse file here: the CRC bound is not tested"
fi

# -- the build-id path under the debug root is a FIFO
id=$(readelf -n "$dir/prog" | awk '/Build ID/ { print $3; exit }')
[ -n "$id" ] || fail "prog has no build-id"
tail=${id#??}
mkdir -p "$HOTSTACK_DEBUG_DIR/.build-id/${id%"$tail"}"
mkfifo "$HOTSTACK_DEBUG_DIR/.build-id/${id%"$tail"}/$tail.debug"
cp "$dir/prog.stripped" "$dir/buildid-prog"
record buildid "$dir/buildid-prog" "$HOTSTACK_DEBUG_DIR/.build-id/${id%"$tail"}/$tail.debug"
echo "build-id: a FIFO as the debug file of that build-id: recorded, not opened"

# -- a dwz supplementary file (.gnu_debugaltlink) naming a FIFO: libdw would open it itself to
#    read a name kept there (DW_FORM_GNU_strp_alt); hand-written DWARF for x86-64
if [ "$(uname -m)" = x86_64 ]; then
	# alt.s ALTPATH BUILDID-BYTES: alt_spin, its DWARF name at offset 16 of ALTPATH's .debug_str
	altasm() {
		cat <<EOF
	.text
	.globl alt_spin
	.type alt_spin, @function
alt_spin:
	mov %rdi, %rax
1:	dec %rax
	jnz 1b
	ret
.Lend:
	.size alt_spin, .-alt_spin
	.section .debug_abbrev,"",@progbits
	.uleb128 1, 0x11
	.byte 1
	.uleb128 0x03, 0x08, 0x11, 0x01, 0x12, 0x07
	.byte 0, 0
	.uleb128 2, 0x2e
	.byte 0
	.uleb128 0x03, 0x1f21, 0x11, 0x01, 0x12, 0x07
	.byte 0, 0, 0
	.section .debug_info,"",@progbits
.Linfo:
	.long .Linfo_end - .Linfo - 4
	.value 4
	.long 0
	.byte 8
	.uleb128 1
	.asciz "alt.s"
	.quad alt_spin, .Lend - alt_spin
	.uleb128 2
	.long 16
	.quad alt_spin, .Lend - alt_spin
	.byte 0
.Linfo_end:
	.section .debug_aranges,"",@progbits
	.long .Lar_end - .Lar
.Lar:
	.value 2
	.long 0
	.byte 8, 0
	.long 0
	.quad alt_spin, .Lend - alt_spin, 0, 0
.Lar_end:
	.section .gnu_debugaltlink,"",@progbits
	.asciz "$1"
	.byte $2
	.section .note.GNU-stack,"",@progbits
EOF
	}
	cat >"$dir/altmain.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
void alt_spin(long n);
int main(int argc, char **argv)
{
	struct timespec a, b;
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		alt_spin(1000000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
EOF
	# the supplementary file: the name at offset 16 of its .debug_str
	cat >"$dir/sup.s" <<'EOF'
	.section .debug_str,"MS",@progbits,1
	.ascii "0123456789abcde\0"
	.asciz "named_from_the_alt_file"
	.section .debug_info,"",@progbits
	.long 7
	.value 4
	.long 0
	.byte 8, 0
	.section .debug_abbrev,"",@progbits
	.byte 0
	.section .note.GNU-stack,"",@progbits
EOF
	cc -shared -nostdlib -Wl,--build-id=sha1 -o "$dir/sup.debug" "$dir/sup.s" || fail "cannot build sup.debug"
	supid=$(readelf -n "$dir/sup.debug" | awk '/Build ID/ { print $3; exit }')
	bytes=$(echo "$supid" | sed 's/../0x&,/g; s/,$//')
	mkfifo "$dir/alt.fifo"
	altasm "$dir/alt.fifo" "$bytes" >"$dir/alt-fifo.s"
	altasm "$dir/sup.debug" "$bytes" >"$dir/alt-file.s"
	# no symbol for alt_spin: its name can only come from the DWARF
	for v in fifo file; do
		cc -O1 -o "$dir/alt-$v" "$dir/altmain.c" "$dir/alt-$v.s" || fail "cannot build alt-$v"
		objcopy --strip-symbol=alt_spin "$dir/alt-$v"
	done
	record alt-fifo "$dir/alt-fifo" "$dir/alt.fifo"
	grep -q named_from_the_alt_file "$dir/alt-fifo.folded" && fail "alt-fifo: a name without its file"
	# and a real supplementary file is still read
	record alt-file "$dir/alt-file"
	grep -q ';named_from_the_alt_file' "$dir/alt-file.folded" ||
		fail "alt-file: the name in the supplementary file is not used: $(head -3 "$dir/alt-file.folded")"
	echo "dwz: a FIFO as the supplementary file: recorded, not opened; a real one still names alt_spin"
else
	skipped="$skipped; the dwz case is written for x86-64"
fi

# -- SIGINT in the middle of a recording of the program whose debug file is a FIFO: it ends, the
#    command is ended, hotstack exits as Ctrl-C leaves a command (130), every output is written
rm -f "$dir/started"
"$HOTSTACK" record -q -o "$dir/int.folded" -o "$dir/int.pb.gz" -o "$dir/int.svg" -- \
	"$dir/link/prog" 60 "$dir/started" 2>"$dir/int.err" &
rec=$!
trap 'kill -9 $rec 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_until 300 test -e "$dir/started" || fail "sigint: the program never started: $(cat "$dir/int.err")"
sleep 1
kill -INT "$rec"
wait_gone "$rec" 600 || true
kill -0 "$rec" 2>/dev/null && fail "sigint: still recording 60 s after SIGINT"
set +e
wait "$rec"
status=$?
set -e
[ "$status" = 130 ] || fail "sigint: record exited $status, expected 130: $(cat "$dir/int.err")"
grep -q '^prog;' "$dir/int.folded" || fail "sigint: no samples in the folded output"
grep -q '</svg>' "$dir/int.svg" || fail "sigint: SVG incomplete"
"$HOTSTACK" convert "$dir/int.pb.gz" -o "$dir/int.back.folded" || fail "sigint: the pprof is unreadable"
cmp -s "$dir/int.folded" "$dir/int.back.folded" || fail "sigint: the pprof and the folded file differ"
echo "sigint: a recording of the program with a FIFO debug file ended with its outputs"

# -- report: a perf.data whose MMAP record names a FIFO, then a device, and whose build-id is a
#    FIFO in perf's build-id cache
# perf record now and then fails an assertion of its own (util/build-id.c) on a busy machine: a
# second try
perf_record() {
	perf record -q "$@" >/dev/null 2>"$dir/perf.err" || perf record -q "$@" >/dev/null 2>"$dir/perf.err"
}
if command -v perf >/dev/null 2>&1 && perf_record -o "$dir/probe.data" -- true; then
	mkdir -p "$dir/r"
	cp "$dir/prog" "$dir/r/prog"
	# -N: no copy in the build-id cache, which would stand in for the file
	perf_record -N -o "$dir/p.data" -- "$dir/r/prog" 0.5 || fail "perf record failed: $(cat "$dir/perf.err")"
	mkdir -p "$HOME/.debug/.build-id/${id%"$tail"}/$tail"
	mkfifo "$HOME/.debug/.build-id/${id%"$tail"}/$tail/elf"
	for kind in fifo device; do
		rm -f "$dir/r/prog"
		if [ $kind = fifo ]; then
			mkfifo "$dir/r/prog"
			watched="$dir/r/prog"
		else
			ln -s "$dev" "$dir/r/prog"
			watched=$dev
		fi
		run "report-$kind" "$dir/opens" "$dir/report-$kind.opens" "$watched" \
			"$HOME/.debug/.build-id/${id%"$tail"}/$tail/elf" -- report "$dir/p.data"
		if [ "$status" = 3 ]; then
			run "report-$kind" -- report "$dir/p.data"
			printf '%s 0\n%s 0\n' "$watched" "$HOME/.debug/.build-id/${id%"$tail"}/$tail/elf" \
				>"$dir/report-$kind.opens"
		fi
		[ "$status" = 0 ] || fail "report-$kind: exited $status: $(cat "$dir/report-$kind.err")"
		grep -q '^# [1-9][0-9]* samples' "$dir/report-$kind.out" ||
			fail "report-$kind: no samples: $(head -3 "$dir/report-$kind.out")"
		grep -q '\[prog\]' "$dir/report-$kind.out" ||
			fail "report-$kind: prog's frames are not [prog]: $(head -12 "$dir/report-$kind.out")"
		no_opens "report-$kind" "$watched" "$HOME/.debug/.build-id/${id%"$tail"}/$tail/elf"
	done
	echo "report: a perf.data naming a FIFO, a link to a device, a FIFO in the build-id cache: reported, none opened"
else
	skipped="$skipped; perf is not installed or does not record here: the perf.data case is not tested"
fi

[ -z "$skipped" ] || skip "${skipped#; }"
