#!/bin/sh
# While a recording runs and at its end, a process that looks like a HotSpot JVM (a file named
# libjvm.so mapped, SIGQUIT handled, unnamed code in anonymous memory) is asked for its perf map
# through the attach mechanism. Whatever it does, the recording ends with its outputs written: a
# FIFO planted as its attach trigger file is never opened, an attach socket that never accepts
# does not hold a blocking connect(), and a SIGINT while it does not answer ends the asking at
# once.
# Every run is under `timeout`, so that a regression fails instead of hanging.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(uname -m)" = x86_64 ] || skip "the fake JVM's code is x86-64"
command -v cc >/dev/null 2>&1 || skip "cc is not installed (apt-get install gcc)"
require_perf_events

# fakejvm MODE DIR: spins in anonymous executable memory, with DIR/libjvm.so mapped and SIGQUIT
# caught; MODE fifo: a FIFO as DIR/.attach_pidPID (DIR its working directory) and no socket;
# backlog: /tmp/.java_pidPID listening, its backlog full, never accepting; silent: accepts,
# reads the request, creates DIR/asked and never answers. Writes DIR/ready when set up.
cat >"$dir/fakejvm.c" <<'EOF'
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
static char sock_path[108];
static void on_quit(int sig) { (void)sig; }
static void on_term(int sig) { unlink(sock_path); signal(sig, SIG_DFL); raise(sig); }
int main(int argc, char **argv)
{
	/* mov rax, rdi; dec rax; jnz -5; ret */
	static const unsigned char loop[] = {0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3};
	char path[4096];
	int fd, s = -1, c;
	long (*jit)(long);
	if (argc < 3 || chdir(argv[2]) < 0)
		return 2;
	fd = open("libjvm.so", O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return 2;
	signal(SIGQUIT, on_quit);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (!strcmp(argv[1], "fifo")) {
		snprintf(path, sizeof(path), ".attach_pid%d", (int)getpid());
		if (mkfifo(path, 0600) < 0)
			return 2;
	} else {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		snprintf(sock_path, sizeof(sock_path), "/tmp/.java_pid%d", (int)getpid());
		memcpy(sa.sun_path, sock_path, sizeof(sock_path));
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 0) < 0)
			return 2;
		if (!strcmp(argv[1], "backlog")) {
			/* one connection waiting, never accepted: the queue of a backlog of 0 is full */
			c = socket(AF_UNIX, SOCK_STREAM, 0);
			if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0)
				return 2;
		} else {
			fcntl(s, F_SETFL, O_NONBLOCK);
		}
	}
	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit == MAP_FAILED)
		return 2;
	memcpy((void *)jit, loop, sizeof(loop));
	close(open("ready", O_WRONLY | O_CREAT, 0644));
	for (;;) {
		jit(1000000);
		if (!strcmp(argv[1], "silent") && (c = accept(s, NULL, NULL)) >= 0) {
			char req[256];
			if (read(c, req, sizeof(req)) > 0)
				close(open("asked", O_WRONLY | O_CREAT, 0644));
			/* the connection is kept, and never answered */
		}
	}
}
EOF
cc -O1 -o "$dir/fakejvm" "$dir/fakejvm.c" || fail "cannot build the fake JVM"

jvm=""
trap '[ -z "$jvm" ] || kill "$jvm" 2>/dev/null || true; rm -rf "$dir"' EXIT

# start MODE: the fake JVM in $dir/MODE, its pid in $jvm, once it is set up
start() {
	mkdir -p "$dir/$1"
	"$dir/fakejvm" "$1" "$dir/$1" &
	jvm=$!
	wait_until 300 test -e "$dir/$1/ready" || fail "$1: the fake JVM did not start"
}

stop() {
	kill "$jvm" 2>/dev/null || true
	wait "$jvm" 2>/dev/null || true
	jvm=""
}

# check MODE STATUS [WANT]: the recording of the fake JVM ended (not killed by the timeout) with
# status WANT (0) and wrote its outputs, in which its code is unnamed JIT code
check() {
	[ "$2" -ne 124 ] && [ "$2" -ne 137 ] || fail "$1: still recording after 60 s"
	[ "$2" = "${3:-0}" ] || fail "$1: record exited $2: $(cat "$dir/$1.err")"
	grep -q '\[anon\]_\[j\]' "$dir/$1.folded" || fail "$1: no JIT frames recorded: $(head -3 "$dir/$1.folded")"
	"$HOTSTACK" convert "$dir/$1.pb.gz" -o "$dir/$1.back.folded" || fail "$1: the pprof is unreadable"
	cmp -s "$dir/$1.folded" "$dir/$1.back.folded" || fail "$1: the pprof and the folded file differ"
}

# record MODE: a 1 s recording of the fake JVM (-p), under a timeout; its status in $status
record() {
	set +e
	timeout -k 5 60 "$HOTSTACK" record -p "$jvm" -d 1 -o "$dir/$1.folded" -o "$dir/$1.pb.gz" \
		>"$dir/$1.out" 2>"$dir/$1.err"
	status=$?
	set -e
}

# -- a FIFO as the attach trigger: never opened (a blocking open for writing would wait for a
#    reader for ever); the trigger in its /tmp is made instead, and the listener never comes
start fifo
record fifo
check fifo "$status"
grep -q "JVM $jvm" "$dir/fifo.err" || fail "fifo: no word about the JVM: $(cat "$dir/fifo.err")"
[ -p "$dir/fifo/.attach_pid$jvm" ] || fail "fifo: the FIFO was replaced"
[ ! -e "/tmp/.attach_pid$jvm" ] || fail "fifo: the trigger made in /tmp was left behind"
stop
echo "fifo: the planted FIFO trigger was not opened; the recording ended with its outputs"

# -- an attach socket that never accepts: connect() does not block, the JVM's time runs out
start backlog
record backlog
check backlog "$status"
grep -q "JVM $jvm: its attach socket accepts no connection" "$dir/backlog.err" ||
	fail "backlog: not told that the socket accepts nothing: $(cat "$dir/backlog.err")"
stop
echo "backlog: a socket that never accepts held the recording for its 10 s at most"

# -- a JVM that never answers, and a SIGINT meanwhile: the asking ends, the outputs are written
#    (it is asked while the recording runs, so the SIGINT ends the recording too: status 130)
start silent
"$HOTSTACK" record -p "$jvm" -d 1 -o "$dir/silent.folded" -o "$dir/silent.pb.gz" 2>"$dir/silent.err" &
rec=$!
wait_until 300 test -e "$dir/silent/asked" || fail "silent: the JVM was never asked: $(cat "$dir/silent.err")"
kill -INT "$rec"
wait_gone "$rec" 600 || true
kill -0 "$rec" 2>/dev/null && { kill -9 "$rec"; fail "silent: still running 60 s after SIGINT"; }
set +e
wait "$rec"
status=$?
set -e
check silent "$status" 130
grep -q "JVM $jvm: given up: hotstack was asked to stop" "$dir/silent.err" ||
	fail "silent: the SIGINT did not end the asking: $(cat "$dir/silent.err")"
stop
echo "silent: a SIGINT while the JVM did not answer ended the asking; the outputs were written"
