#!/bin/sh
# record -a --push with the fleet's protocols, against a local receiver that checks the bytes:
# OTLP/HTTP (otlp+http://) and OTLP/gRPC (otlp://, a receiver made with grpcio), each request
# decoded by protoc against the official profiles .proto files (below), and
# Pyroscope's push API (pyroscope+http://) decoded as push.v1.PushRequest. A Python program in a
# unit's cgroup and a native one in a container's, whose environment names a Kubernetes pod:
# one resource (series) each, with the machine's labels, the user's, one renamed; Python, native
# and kernel frames with their types; the samples those of the same recording's pprof. Then what
# the push guarantees, for both: a store that fails at first gets every profile, a kill loses
# none of what was spooled, and the next recording sends it byte for byte, leaving another
# protocol's profiles in the spool alone.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
[ "$(id -u)" -eq 0 ] || skip "needs root: record -a, cgroups"
command -v protoc >/dev/null 2>&1 || fail "protoc is not installed (scripts/install-deps --test installs protobuf-compiler)"
# the official .proto files: where HOTSTACK_OTLP_PROTO says, else in shared/otlp-proto beside the
# source tree or a directory above it
proto=${HOTSTACK_OTLP_PROTO:-}
up=$SRCDIR
while [ -z "$proto" ] && [ "$up" != / ]; do
	up=$(dirname "$up")
	[ -d "$up/shared/otlp-proto" ] && proto=$up/shared/otlp-proto
done
[ -f "${proto:-/}/opentelemetry/proto/profiles/v1development/profiles.proto" ] ||
	skip "no OTLP profiles .proto files in a shared/otlp-proto above $SRCDIR (set HOTSTACK_OTLP_PROTO)"
python=/usr/bin/python3
cgroot=/sys/fs/cgroup
[ "$(stat -fc %T $cgroot 2>/dev/null)" = cgroup2fs ] || cgroot=/sys/fs/cgroup/unified
[ "$(stat -fc %T $cgroot 2>/dev/null)" = cgroup2fs ] || skip "no cgroup2 hierarchy to place the processes in"
/usr/bin/python3 -c 'import grpc' 2>/dev/null ||
	fail "Debian's python3-grpcio is not installed (scripts/install-deps --test installs it)"
# shellcheck source=push-lib.sh
. "$SRCDIR/tests/e2e/push-lib.sh"
check=$SRCDIR/tests/e2e
# the URL of each protocol's store on a port; a receiver of it (push-lib.sh's, or gRPC's own)
url_of() { # PROTOCOL PORT
	case $1 in
	otlp) echo "otlp+http://127.0.0.1:$2" ;;
	grpc) echo "otlp://127.0.0.1:$2" ;;
	pyroscope) echo "pyroscope+http://127.0.0.1:$2" ;;
	esac
}
receive_for() { # PROTOCOL PORT DIR [--fail-first N]
	p=$1
	shift
	if [ "$p" = grpc ]; then
		mkdir -p "$2"
		/usr/bin/python3 "$check/otlp-grpc-receiver.py" "$@" &
		pids="$pids $!"
		wait_until 100 test -e "$2/ready" || fail "the gRPC receiver did not start"
	else
		receive "$@"
	fi
}

# what is refused, at once, in one line
expect_status 2 "$HOTSTACK" record -a -d 1 --push otlp://127.0.0.1:4317/x
expect_stderr "^hotstack: --push: 'otlp://127.0.0.1:4317/x' is not an OTLP/gRPC address, otlp://HOST:PORT$"
expect_status 2 "$HOTSTACK" record -a -d 1 --push ftp://127.0.0.1:1
expect_stderr "^hotstack: --push: 'ftp://127.0.0.1:1' is not a URL hotstack pushes to"
expect_status 2 "$HOTSTACK" record -a -d 1 --push otlp+http://127.0.0.1:1 --push-relabel =x
expect_stderr "^hotstack: invalid --push-relabel '=x'"
expect_status 2 "$HOTSTACK" record -a -d 1 --push-relabel a=b -o "$dir/x.folded"
expect_stderr "^hotstack: --push-label, --push-relabel and --push-spool go with --push URL$"

tag=$(($$ % 100000))
unit=hs-otlp-$tag
cid=$(printf '%s' "$tag$(date +%s%N)" | sha256sum | cut -c1-64)
slice=$cgroot/hs-protocols-$tag.slice
stop_workloads() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		# shellcheck disable=SC2046 # a list of pids
		kill $(cat "$slice"/*/cgroup.procs 2>/dev/null) 2>/dev/null || true
		rmdir "$slice/$unit.service" "$slice/docker-$cid.scope" "$slice" 2>/dev/null || true
		[ -d "$slice" ] || break
		sleep 0.3
	done
}
cleanup() {
	# shellcheck disable=SC2086 # lists of pids
	kill $pids 2>/dev/null || true
	stop_workloads
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir "$slice" 2>/dev/null || skip "cannot make a cgroup under $cgroot"
mkdir "$slice/$unit.service" "$slice/docker-$cid.scope"
printf '#!/bin/sh\necho $$ >"$1/cgroup.procs" || exit 1\nshift\nexec "$@"\n' >"$dir/in-cgroup"
chmod +x "$dir/in-cgroup"

# the unit: Python, its leaf in a thread it names (the kernel's thread name, as perf sees it)
cat >"$dir/app.py" <<'EOF'
import ctypes, os, threading
def leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s
def kern():
    for _ in range(300):
        os.stat('/')
def work():
    while True:
        leaf(20000)
        kern()
def spinner():
    ctypes.CDLL(None).prctl(15, b'spinner', 0, 0, 0)
    work()
threading.Thread(target=spinner, daemon=True).start()
work()
EOF
"$dir/in-cgroup" "$slice/$unit.service" "$python" "$dir/app.py" &
# the container: a native program, in a pod as its environment says
env -i PATH=/usr/bin:/bin KUBERNETES_SERVICE_HOST=10.96.0.1 HOSTNAME=shop-web-5f7d8-x2x9z POD_NAMESPACE=shop \
	OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=web,other.key=x \
	"$dir/in-cgroup" "$slice/docker-$cid.scope" "$WORKLOADS/duty" 600 2 4 &
running() { [ "$(cat "$slice"/*/cgroup.procs | wc -l)" -ge 2 ]; }
wait_until 100 running || fail "the workloads did not start"
sleep 0.5

for protocol in otlp grpc pyroscope; do
	port=$(free_port)
	receive_for $protocol "$port" "$dir/rx-$protocol"
	nice -n -5 "$HOTSTACK" record -a -F 199 -d 4 --push "$(url_of $protocol "$port")" --push-label env=e2e \
		--push-relabel host.name=node --push-relabel process.executable.path= -o "$dir/$protocol.pb.gz" \
		2>"$dir/$protocol.err" || fail "record --push $protocol: $(cat "$dir/$protocol.err")"
	# the recording's own pprof, the period's file
	set -- "$dir/$protocol".*.pb.gz
	[ -f "$1" ] || fail "no period file of the $protocol recording"
	"$HOTSTACK" convert "$1" -o "$dir/$protocol.folded" 2>"$dir/convert.err" || fail "convert: $(cat "$dir/convert.err")"
done
for protocol in otlp grpc; do
	"$python" "$check/otlp-check.py" "$proto" "$dir/rx-$protocol" "$dir/$protocol.folded" --unit "$unit" \
		--script "$dir/app.py" --thread spinner --container "$cid" --pod shop-web-5f7d8-x2x9z --namespace shop \
		--k8s-container web --label env=e2e --label "node=$(hostname)" --no-label host.name --no-label other.key \
		--no-label process.executable.path >"$dir/otlp.out" || fail "$protocol: $(cat "$dir/otlp.out")"
	cat "$dir/otlp.out"
done
"$python" "$check/push-check.py" "$check/pyroscope-push.proto" "$dir/rx-pyroscope" --unit "$unit" \
	--script "$dir/app.py" --container "$cid" --pod shop-web-5f7d8-x2x9z --label env=e2e \
	--label "node=$(hostname)" --no-label host_name --no-label process_pid >"$dir/push.out" ||
	fail "$(cat "$dir/push.out")"
cat "$dir/push.out"
# the file: the same message, a resource per process
"$HOTSTACK" convert "$dir/otlp.folded" -o "$dir/file.otlp.pb" 2>"$dir/convert.err" || fail "convert: $(cat "$dir/convert.err")"
protoc "-I$proto" --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
	opentelemetry/proto/collector/profiles/v1development/profiles_service.proto <"$dir/file.otlp.pb" >"$dir/file.txt" ||
	fail "-o x.otlp.pb does not decode"
grep -q 'key: "service.name"' "$dir/file.txt" || fail "-o x.otlp.pb: no service.name"

# a store that fails at first: every period still arrives
for protocol in otlp grpc pyroscope; do
	port=$(free_port)
	receive_for $protocol "$port" "$dir/retry-$protocol" --fail-first 2
	"$HOTSTACK" record -p "$(head -n1 "$slice/$unit.service/cgroup.procs")" -F 99 -d 4 --switch-output=1s \
		--push "$(url_of $protocol "$port")" 2>"$dir/retry.err" || fail "record: $(cat "$dir/retry.err")"
	took=$(find "$dir/retry-$protocol" -name '*.json' | wc -l)
	[ "$took" -ge 3 ] || fail "$protocol: the store took $took profiles of 4 periods after failing twice: $(cat "$dir/retry.err")"
	grep -q "dropped" "$dir/retry.err" && fail "$protocol: profiles dropped: $(cat "$dir/retry.err")"
done

# a kill: what was spooled is sent by the next recording, byte for byte; another protocol's
# profiles are left alone
body() { # FILE: a spool file's body (after its header line and its series line)
	"$python" -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d.split(b"\n", 2)[2].hex())' "$1"
}
for protocol in otlp grpc pyroscope; do
	spool=$dir/spool-$protocol
	dead=$(free_port)
	"$HOTSTACK" record -p "$(head -n1 "$slice/$unit.service/cgroup.procs")" -F 99 -d 30 --switch-output=1s \
		--push "$(url_of $protocol "$dead")" --push-spool "$spool" 2>"$dir/kill.err" &
	rec=$!
	spooled() { [ "$(find "$spool" -name '*.push' | wc -l)" -ge 3 ]; }
	wait_until 150 spooled || fail "$protocol: nothing spooled: $(cat "$dir/kill.err")"
	kill -KILL $rec
	wait $rec 2>/dev/null || true
	head -c7 "$(find "$spool" -name '*.push' | head -n1)" | grep -q HSPUSH3 || fail "$protocol: not a kind's spool file"
	# an ingest profile of an earlier recording, for a recording that pushes to /ingest
	printf 'HSPUSH2 1 2 8 3\nsvc{a=b}\nabc' >"$spool/00000000000000000001-0000000000.push"
	find "$spool" -name '*.push' ! -name '00000000000000000001-*' | sort >"$dir/spooled"
	for f in $(cat "$dir/spooled"); do body "$f"; done >"$dir/spooled.hex"
	port=$(free_port)
	receive_for $protocol "$port" "$dir/replay-$protocol"
	"$HOTSTACK" record -p "$(head -n1 "$slice/$unit.service/cgroup.procs")" -F 99 -d 2 \
		--push "$(url_of $protocol "$port")" --push-spool "$spool" 2>"$dir/replay.err" ||
		fail "record: $(cat "$dir/replay.err")"
	grep -q "spooled for another protocol: left for a push with it" "$dir/replay.err" ||
		fail "$protocol: the ingest profile was not said: $(cat "$dir/replay.err")"
	[ -f "$spool/00000000000000000001-0000000000.push" ] || fail "$protocol: the ingest profile was not left alone"
	[ "$(find "$spool" -name '*.push' | wc -l)" -eq 1 ] || fail "$protocol: the spool was not emptied"
	n=$(wc -l <"$dir/spooled")
	ext=otlp.pb
	[ $protocol = pyroscope ] && ext=push.pb
	i=1
	while [ $i -le "$n" ]; do
		f=$dir/replay-$protocol/$i.$ext
		[ -f "$f" ] || fail "$protocol: spooled profile $i was not sent"
		"$python" -c 'import sys; print(open(sys.argv[1], "rb").read().hex())' "$f"
		i=$((i + 1))
	done >"$dir/sent.hex"
	if [ $protocol != pyroscope ]; then # the receivers keep OTLP requests decompressed
		"$python" -c 'import gzip, sys
for line in open(sys.argv[1]):
    print(gzip.decompress(bytes.fromhex(line.strip())).hex())' "$dir/spooled.hex" >"$dir/spooled.plain"
		mv "$dir/spooled.plain" "$dir/spooled.hex"
	fi
	cmp -s "$dir/spooled.hex" "$dir/sent.hex" || fail "$protocol: what was sent is not what was spooled"
done
echo "push-protocols: ok"
