#!/bin/sh
# Runs one libFuzzer target briefly, as a test: FUZZER CORPUS_DIR DICT_OR_EMPTY SECONDS ARTIFACTS.
# The stored corpus is copied to a scratch directory first (libFuzzer adds what it finds to the
# corpus it is given, and the source tree is never written); a crash, leak, timeout or
# out-of-memory or undefined behaviour is a failure, and its input is kept under ARTIFACTS (named crash-*, leak-*,
# timeout-*, oom-* by libFuzzer) to be added to the corpus with the fix.
set -eu
fuzzer=$1
corpus=$2
dict=$3
seconds=$4
artifacts=$5

name=$(basename "$fuzzer")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hs-$name.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/corpus" "$artifacts"
cp -- "$corpus"/* "$scratch/corpus/" 2>/dev/null || true
set -- -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$artifacts/$name-" -error_exitcode=1 -timeout_exitcode=1
[ -z "$dict" ] || set -- "$@" -dict="$dict"
# undefined behaviour is a finding too (the sanitizer would only print it and go on)
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
set +e
"$fuzzer" "$@" "$scratch/corpus" >"$scratch/log" 2>&1
status=$?
set -e
# the summary: executions, their rate, coverage
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|cov: ' "$scratch/log" | tail -n 4
if [ "$status" -ne 0 ]; then
	tail -n 60 "$scratch/log" >&2
	echo "$name: FAIL: the fuzzer found something (exit $status); inputs kept in $artifacts:" >&2
	for f in "$artifacts/$name-"*; do
		[ ! -e "$f" ] || echo "$f" >&2
	done
	exit 1
fi
exit 0
