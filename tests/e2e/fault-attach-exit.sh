#!/bin/sh
# -p on a process that exits while hotstack attaches to it (before, while its threads are being
# opened, or just after): every time, either one clear line ("no such process", or that it is a
# zombie) and status 1, or
# status 0 with complete outputs (empty when nothing was sampled) — never a hang, a crash or a
# half-written file. The process lives for 0 to 228 ms from the moment hotstack starts, with 8
# threads being created and ending around the attach.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v timeout >/dev/null || skip "timeout (coreutils) is missing"

errors=0 recorded=0
for i in $(seq 0 19); do
	life=$(awk -v i="$i" 'BEGIN { printf "%.3f", i * 0.012 }')
	"$WORKLOADS/threads" 8 "$life" >/dev/null &
	pid=$!
	rm -f "$dir/out.folded" "$dir/out.pb.gz"
	set +e
	timeout 60 "$HOTSTACK" record -q -p "$pid" -o "$dir/out.folded" -o "$dir/out.pb.gz" 2>"$dir/err"
	status=$?
	set -e
	wait "$pid" 2>/dev/null || true
	case $status in
	0)
		recorded=$((recorded + 1))
		[ -f "$dir/out.folded" ] && [ -f "$dir/out.pb.gz" ] || fail "run $i (life $life s): status 0 without outputs"
		"$HOTSTACK" convert "$dir/out.pb.gz" -o "$dir/back.folded" 2>"$dir/conv.err" ||
			fail "run $i: the pprof is unreadable: $(cat "$dir/conv.err")"
		cmp -s "$dir/out.folded" "$dir/back.folded" || fail "run $i: pprof and folded disagree"
		if grep -vE '^(threads|spin-[0-9]+);' "$dir/out.folded" | grep -q .; then
			fail "run $i: samples of something else than the process: $(head -n 3 "$dir/out.folded")"
		fi
		;;
	1)
		errors=$((errors + 1))
		# (a zombie: the process exited before this shell's wait reaped it)
		grep -qxE "hotstack: (no such process: $pid|process $pid has exited: a zombie, .*)" "$dir/err" ||
			fail "run $i (life $life s): status 1 with: $(cat "$dir/err")"
		[ "$(wc -l <"$dir/err")" -eq 1 ] || fail "run $i: more than one line: $(cat "$dir/err")"
		[ ! -e "$dir/out.folded" ] || fail "run $i: an output was written for a process never attached"
		;;
	124) fail "run $i (life $life s): hotstack hung attaching to a process that exited" ;;
	*) fail "run $i (life $life s): hotstack exited $status: $(cat "$dir/err")" ;;
	esac
done
echo "fault-attach-exit: 20 runs: $recorded recorded (until the process ended), $errors 'no such process'"
exit 0
