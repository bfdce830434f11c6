#!/bin/bash
# Inline frames and source lines from a perf.data, in one run on one machine: on the same
# recording of a C++ program built -O2 -g (a tree of NFUNC functions, templates, always_inline
# chains), `hotstack convert perf.data --lines -o x.folded` (inline frames are always on) against
# `perf script --inline -F +srcline -i perf.data > /dev/null` (target: at least 10x faster), best
# of RUNS wall-clock runs, for a `--call-graph dwarf` recording and a `-g` (frame pointer) one;
# then the frames per sample each prints for the same samples, to show they do comparable work.
# Needs perf and g++; exits 77 with a reason without them.
#
#   bench/inline-names.sh               # BUILD=build DURATION=30 RUNS=3 NFUNC=300 MODES="dwarf fp"
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
hotstack=$(cd "$build" 2>/dev/null && pwd)/hotstack
secs=${DURATION:-30}
runs=${RUNS:-3}
nfunc=${NFUNC:-300}
modes=${MODES:-dwarf fp}

skip() {
	echo "inline-names: skipped: $*" >&2
	exit 77
}
command -v perf >/dev/null || skip "perf not found (apt-get install linux-perf)"
command -v g++ >/dev/null || skip "g++ not found (apt-get install g++)"
[ -x "$hotstack" ] || { echo "build first (ninja -C build)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/hotstack-inline-names.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# perf copies what it samples into $HOME/.debug and reads ~/.perfconfig: both stay in here; no
# debuginfod server is asked by either tool
mkdir -p "$tmp/home"
export HOME="$tmp/home" DEBUGINFOD_URLS=
unset PERF_BUILDID_DIR

# The workload: fn_0 .. fn_N-1 in a binary tree (fn_i calls fn_2i+1 and fn_2i+2), each running
# an always_inline template chain Mixer<k>::step -> Mixer<k-1>::step -> ... -> Mixer<0>::step
# (1 to 6 levels) and a function template accumulate<T, K> with fold<T> and Mixer inlined into it.
generate() {
	cat <<'EOF'
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace bench {
static volatile unsigned long sink;

template <int N> struct Mixer {
	__attribute__((always_inline)) static inline unsigned long step(unsigned long x)
	{
		return Mixer<N - 1>::step(x * 6364136223846793005UL + N) ^ (x >> 7);
	}
};
template <> struct Mixer<0> {
	__attribute__((always_inline)) static inline unsigned long step(unsigned long x)
	{
		for (int i = 0; i < 40; i++)
			x = x * 0x9e3779b97f4a7c15UL + (x >> 13);
		return x;
	}
};

template <typename T> __attribute__((always_inline)) inline T fold(T a, T b)
{
	return a * (T)31 + b;
}

template <typename T, int K> __attribute__((noinline)) T accumulate(T x)
{
	for (int i = 0; i < K; i++)
		x = fold<T>(x, (T)Mixer<K % 4>::step((unsigned long)x + i));
	return x;
}
EOF
	local i types=("unsigned long" "unsigned int" "unsigned short")
	for ((i = 0; i < nfunc; i++)); do echo "unsigned long fn_$i(unsigned long x);"; done
	for ((i = 0; i < nfunc; i++)); do
		echo "__attribute__((noinline)) unsigned long fn_$i(unsigned long x)"
		echo "{"
		echo "	x = Mixer<$((i % 6 + 1))>::step(x + $i);"
		echo "	x += (unsigned long)accumulate<${types[i % 3]}, $((i % 8 + 2))>((${types[i % 3]})x);"
		[ $((2 * i + 1)) -lt "$nfunc" ] && echo "	x ^= fn_$((2 * i + 1))(x);"
		[ $((2 * i + 2)) -lt "$nfunc" ] && echo "	x += fn_$((2 * i + 2))(x >> 1);"
		echo "	return x;"
		echo "}"
	done
	cat <<'EOF'
} // namespace bench

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	auto t0 = std::chrono::steady_clock::now();
	unsigned long x = 1, calls = 0;
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs) {
		x = bench::fn_0(x);
		calls++;
	}
	bench::sink = x;
	std::printf("%lu calls\n", calls);
	return 0;
}
EOF
}
generate >"$tmp/w.cpp"
# frame pointers too, so that a -g recording has whole stacks
g++ -O2 -g -fno-omit-frame-pointer -o "$tmp/w" "$tmp/w.cpp" 2>"$tmp/g++.err" || {
	echo "g++ failed: $(head -5 "$tmp/g++.err")" >&2
	exit 1
}

# seconds of wall time of a command line, best of $runs
best() {
	local t0 t1 t b=""
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N)
		bash -c "$1" >/dev/null 2>&1
		t1=$(date +%s.%N)
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
	done
	echo "$b"
}

echo "workload: $nfunc functions (g++ $(g++ -dumpfullversion) -O2 -g), $(perf version 2>/dev/null), $(addr2line --version 2>/dev/null | head -1)"
for mode in $modes; do
	case $mode in
	dwarf) opt="--call-graph dwarf" ;;
	fp) opt="-g" ;;
	*) echo "unknown mode '$mode' (dwarf, fp)" >&2; exit 1 ;;
	esac
	data="$tmp/$mode.data"
	# shellcheck disable=SC2086
	perf record -q -F 999 $opt -o "$data" -- "$tmp/w" "$secs" >/dev/null 2>"$tmp/rec.err" ||
		skip "perf record failed: $(head -1 "$tmp/rec.err")"
	hs=$(best "'$hotstack' convert '$data' --lines -o '$tmp/hs.folded'")
	pf=$(best "perf script --inline -F +srcline -i '$data' > /dev/null")

	# what each printed, for the same samples (untimed runs): perf script text has one line per
	# frame, inlined ones included ("(inlined)" on the source line under them), and a source line
	# under each; hotstack's folded stacks with _[i] on inlined frames
	perf script --inline -F +srcline -i "$data" 2>/dev/null >"$tmp/perf.txt"
	"$hotstack" convert "$data" --lines --inline-annotate -o "$tmp/hs-i.folded" 2>/dev/null
	read -r p_samples p_frames p_inlined p_lines <<EOF
$(awk '/^[^ \t]/ { s++ } /^\t *[0-9a-f]+ / { f++ } /^  .*\(inlined\)$/ { i++ } /^  [^ ]*:[1-9][0-9]*( \(inlined\))?$/ { l++ }
	END { print s + 0, f + 0, i + 0, l + 0 }' "$tmp/perf.txt")
EOF
	read -r h_samples h_frames h_inlined h_lines <<EOF
$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); s += n; f_ += n * (k - 1)
	for (j = 2; j <= k; j++) { if (f[j] ~ /_\[i\]$/) i += n; if (f[j] ~ /:[1-9][0-9]*(_\[i\])?$/) l += n } }
	END { print s + 0, f_ + 0, i + 0, l + 0 }' "$tmp/hs-i.folded")
EOF
	size=$(stat -c %s "$data")
	awk -v s="$size" -v o="$opt" -v t="$secs" 'BEGIN { printf "perf record -F 999 %s, %s s: %.1f MiB\n", o, t, s / 1048576 }'
	printf '  hotstack convert --lines                %8.2f s\n' "$hs"
	printf '  perf script --inline -F +srcline        %8.2f s\n' "$pf"
	awk -v a="$pf" -v b="$hs" 'BEGIN { r = b > 0 ? a / b : 0; printf "  ratio %.1fx (target >= 10x: %s)\n", r, (r >= 10 ? "met" : "not met") }'
	awk -v s="$h_samples" -v f="$h_frames" -v i="$h_inlined" -v l="$h_lines" 'BEGIN {
		printf "  hotstack: %d samples, %.1f frames/sample (%.1f inlined), %.1f with a source line\n", s, s ? f / s : 0, s ? i / s : 0, s ? l / s : 0 }'
	awk -v s="$p_samples" -v f="$p_frames" -v i="$p_inlined" -v l="$p_lines" 'BEGIN {
		printf "  perf:     %d samples, %.1f frames/sample (%.1f inlined), %.1f with a source line\n", s, s ? f / s : 0, s ? i / s : 0, s ? l / s : 0 }'
done
