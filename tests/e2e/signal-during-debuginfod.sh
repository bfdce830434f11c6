#!/bin/sh
# A SIGINT while the recording's main thread waits on a debuginfod server that never answers (a
# stripped program with no local debug file, DEBUGINFOD_URLS set) ends the recording at once: the
# download is given up, not waited out (90 s by default). Downloads the outputs still need after
# that are made, unless another SIGINT comes, as a user waiting would press Ctrl-C again: then
# they are given up too, and the outputs are written.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v cc >/dev/null 2>&1 || skip "cc is not installed (apt-get install gcc)"
command -v strip >/dev/null 2>&1 || skip "strip is not installed (apt-get install binutils)"
require_perf_events
mkdir -p "$dir/empty"
export HOTSTACK_DEBUG_DIR="$dir/empty" XDG_CACHE_HOME="$dir/cache" HOME="$dir"
unset DEBUGINFOD_CACHE_PATH DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS

# mute DIR: accepts HTTP connections on a port of 127.0.0.1 (written to DIR/port) and never
# answers; creates DIR/asked at the first
cat >"$dir/mute.c" <<'EOF'
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	FILE *f;
	if (argc < 2 || chdir(argv[1]) < 0 || s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(s, 16) < 0 || getsockname(s, (struct sockaddr *)&sa, &len) < 0 || !(f = fopen("port.tmp", "w")))
		return 2;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);
	rename("port.tmp", "port");
	for (;;)
		if (accept(s, NULL, NULL) >= 0)
			close(open("asked", O_WRONLY | O_CREAT, 0644));
}
EOF
cc -O1 -o "$dir/mute" "$dir/mute.c" || fail "cannot build the mute server"
cat >"$dir/prog.c" <<'EOF'
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile double sink;
int main(int argc, char **argv)
{
	struct timespec a, b;
	if (argc > 2)
		close(open(argv[2], O_WRONLY | O_CREAT, 0644));
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 0.999 + i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < atof(argv[1]));
	return 0;
}
EOF
cc -O1 -Wl,--build-id -o "$dir/prog" "$dir/prog.c" || fail "cannot build prog"
strip "$dir/prog"

mkdir -p "$dir/srv"
"$dir/mute" "$dir/srv" &
srv=$!
rec=""
trap 'kill $srv 2>/dev/null || true; [ -z "$rec" ] || kill -9 $rec 2>/dev/null || true; rm -rf "$dir"' EXIT
wait_until 100 test -e "$dir/srv/port" || fail "the mute server did not start"

DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$dir/srv/port")" \
	"$HOTSTACK" record -q -o "$dir/out.folded" -o "$dir/out.pb.gz" -- "$dir/prog" 60 "$dir/started" \
	2>"$dir/err" &
rec=$!
# asked for the program's debug file: the main thread is in the download
wait_until 300 test -e "$dir/srv/asked" || fail "debuginfod was never asked: $(cat "$dir/err")"
[ -e "$dir/started" ] || fail "the program did not start"
kill -INT "$rec"
i=0
while kill -0 "$rec" 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
	# Ctrl-C again after 5 s, and every 5 s
	[ $((i % 50)) != 0 ] || kill -INT "$rec" 2>/dev/null || true
done
kill -0 "$rec" 2>/dev/null && fail "still recording 60 s after SIGINT (the download is waited out?)"
set +e
wait "$rec"
status=$?
set -e
rec=""
[ "$status" = 130 ] || fail "record exited $status, expected 130 (ended by SIGINT): $(cat "$dir/err")"
grep -q '^prog;' "$dir/out.folded" || fail "no samples of prog: $(head -3 "$dir/out.folded")"
"$HOTSTACK" convert "$dir/out.pb.gz" -o "$dir/back.folded" || fail "the pprof is unreadable"
cmp -s "$dir/out.folded" "$dir/back.folded" || fail "the pprof and the folded file differ"
echo "a SIGINT during a debuginfod download that never ends: the recording ended with its outputs"
