# shellcheck shell=sh
# Shared by the tests of record --push against ingest-receiver.py (record-push.sh,
# record-push-faults.sh): receivers on free ports, their pids in $pids for the test to kill at
# its end. Sourced after lib.sh.
receiver=$SRCDIR/tests/e2e/ingest-receiver.py
pids=""

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

receive() { # PORT DIR [ingest-receiver.py's options...]: a receiver, running once it says it is ready
	mkdir -p "$2"
	python3 "$receiver" "$@" &
	pids="$pids $!"
	wait_until 100 test -e "$2/ready" || fail "the receiver did not start"
}
