#!/bin/sh
# Names of optimised C++ and Rust code, built here with debug information: inlined functions are
# frames of their own, outer to inner, marked _[i] with --inline-annotate; C++ and Rust (legacy
# and v0) names are demangled, and kept mangled with --no-demangle; --lines gives each frame's
# file and line (the line table's for the innermost, the call site for the others); pprof
# carries the same as multi-line locations, which `go tool pprof` shows as "(inline)" frames.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v g++ >/dev/null 2>&1 || skip "g++ is not installed (apt-get install g++)"
require_perf_events

# -- C++: two always_inline levels, a class template method, a lambda, a namespace. The markers
#    name the lines --lines must give.
cat >"$dir/prog.cpp" <<'EOF'
#include <chrono>
#include <cstdio>

static volatile unsigned long sink;

namespace geo {

__attribute__((always_inline)) inline unsigned long hs_inner_mix(unsigned long x)
{ // INNER-BEGIN
	for (int i = 0; i < 1000; i++) // INNER-FOR
		x = x * 6364136223846793005UL + 1442695040888963407UL; // INNER-HOT
	return x;
} // INNER-END

__attribute__((always_inline)) inline unsigned long hs_outer_step(unsigned long x)
{
	return hs_inner_mix(x ^ 0x9e3779b97f4a7c15UL) + 1; // CALL-INNER
}

template <typename T> class Accumulator {
public:
	__attribute__((noinline)) T spin(T seed, double secs);
};

template <typename T> T Accumulator<T>::spin(T seed, double secs)
{
	auto t0 = std::chrono::steady_clock::now();
	T x = seed;
	auto work = [&x]() __attribute__((noinline)) { x = hs_outer_step(x); sink = x; }; // CALL-OUTER
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs)
		for (int k = 0; k < 100; k++)
			work(); // CALL-LAMBDA
	return x;
}

} // namespace geo

int main(int argc, char **argv)
{
	geo::Accumulator<unsigned long> acc;
	std::printf("%lu\n", acc.spin((unsigned long)argc, argc > 1 ? 0.3 : 1.5)); // CALL-SPIN
	(void)argv;
	return 0;
}
EOF
g++ -O2 -g -o "$dir/prog" "$dir/prog.cpp" 2>"$dir/g++.err" || fail "g++ failed: $(cat "$dir/g++.err")"
line_of() { grep -n "// $1\$" "$dir/prog.cpp" | cut -d: -f1; }
src="$dir/prog.cpp"

"$HOTSTACK" record -q -o "$dir/x.folded" -o "$dir/x.pb.gz" -- "$dir/prog" >/dev/null 2>"$dir/rec.err" ||
	fail "record failed: $(cat "$dir/rec.err")"
# GCC may clone the non-inlined functions (spin(...) [clone .isra.0], _Z...Emd.isra.0): names
# are compared without the clone suffix
declone() { sed -E 's/ \[clone [^]]*\]//g; s/(\.(isra|constprop|part|cold)\.[0-9]+)+//g' "$1"; }
declone "$dir/x.folded" >"$dir/x.txt"

SPIN='geo::Accumulator<unsigned long>::spin(unsigned long, double)'
LAMBDA="$SPIN::{lambda()#1}::operator()() const"
OUTER='geo::hs_outer_step(unsigned long)'
INNER='geo::hs_inner_mix(unsigned long)'
CHAIN=";main;$SPIN;$LAMBDA;$OUTER;$INNER"
# the sum of the counts of the lines of a file that contain a fixed string
count() { grep -F -- "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }
total=$(awk '{ n += $NF } END { print n + 0 }' "$dir/x.txt")
hot=$(count "$dir/x.txt" "$CHAIN")
echo "c++: $hot of $total samples in main > spin > the lambda > (inline) hs_outer_step > (inline) hs_inner_mix"
[ "$hot" -gt 0 ] && [ "$((hot * 2))" -ge "$total" ] ||
	fail "the inline chain '$CHAIN' is not in most samples ($hot of $total): $(sort -t';' -k1,1 "$dir/x.txt" | head -8)"
# order: the inlined function is never outside its caller, nor its caller inside it
if grep -F -- "$INNER" "$dir/x.txt" | grep -vqF -- "$OUTER;$INNER"; then
	fail "$INNER without $OUTER as its caller: $(grep -F -- "$INNER" "$dir/x.txt" | grep -vF -- "$OUTER;$INNER" | head -3)"
fi
if grep -qF -- "$INNER;$OUTER" "$dir/x.txt"; then fail "the inline chain is upside down"; fi
# demangled everywhere in the program's frames
if grep -qE ';_Z[A-Za-z0-9_]+' "$dir/x.txt"; then fail "mangled names left: $(grep -oE ';_Z[A-Za-z0-9_.]+' "$dir/x.txt" | sort -u | head -5)"; fi

# --inline-annotate: _[i] on the inlined two, not on the functions they are inlined into
"$HOTSTACK" convert "$dir/x.pb.gz" --inline-annotate -o "$dir/a.folded" 2>"$dir/conv.err" ||
	fail "convert --inline-annotate failed: $(cat "$dir/conv.err")"
declone "$dir/a.folded" >"$dir/a.txt"
grep -qF -- ";$SPIN;$LAMBDA;${OUTER}_[i];${INNER}_[i]" "$dir/a.txt" ||
	fail "no '${OUTER}_[i];${INNER}_[i]' under the lambda with --inline-annotate: $(grep -F -- "$INNER" "$dir/a.txt" | head -3)"
if grep -qF -- "const_[i]" "$dir/a.txt" || grep -qF -- "${SPIN}_[i]" "$dir/a.txt" || grep -qF -- ";main_[i]" "$dir/a.txt"; then
	fail "a function that is not inlined is marked _[i]: $(grep -F -- "$INNER" "$dir/a.txt" | head -3)"
fi
if grep -F -- "$INNER" "$dir/x.txt" | grep -qF '_[i]'; then fail "_[i] without --inline-annotate"; fi

# --lines: FUNCTION:FILE:LINE; the innermost at a line of its loop, each other at its call site
"$HOTSTACK" convert "$dir/x.pb.gz" --lines -o "$dir/l.folded" 2>"$dir/conv.err" ||
	fail "convert --lines failed: $(cat "$dir/conv.err")"
declone "$dir/l.folded" >"$dir/l.txt"
want=";main:$src:$(line_of CALL-SPIN);$SPIN:$src:$(line_of CALL-LAMBDA);$LAMBDA:$src:$(line_of CALL-OUTER);$OUTER:$src:$(line_of CALL-INNER);$INNER:$src:"
grep -qF -- "$want" "$dir/l.txt" ||
	fail "--lines: no stack with '$want': $(grep -F -- "$INNER" "$dir/l.txt" | head -3)"
# the innermost frame's lines: all inside hs_inner_mix, most of the samples in its loop
awk -v pre="$INNER:$src:" '{
	n = $NF
	while ((i = index($0, pre)) > 0) { $0 = substr($0, i + length(pre)); split($0, a, /[; ]/); c[a[1]] += n }
} END { for (l in c) print l, c[l] }' "$dir/l.txt" | sort -k2,2nr >"$dir/inner-lines.txt"
begin=$(line_of INNER-BEGIN) end=$(line_of INNER-END) loop=$(line_of INNER-FOR) body=$(line_of INNER-HOT)
echo "c++: hs_inner_mix's lines (line samples), loop at $loop-$body: $(tr '\n' ' ' <"$dir/inner-lines.txt")"
while read -r l n; do
	[ "$l" -ge "$((begin - 1))" ] && [ "$l" -le "$end" ] || fail "hs_inner_mix at line $l, outside its lines $begin-$end"
done <"$dir/inner-lines.txt"
top=$(head -n1 "$dir/inner-lines.txt" | cut -d' ' -f1)
[ "$top" = "$loop" ] || [ "$top" = "$body" ] || fail "hs_inner_mix's most sampled line is $top, not its loop ($loop-$body)"

# --no-demangle: a second recording keeps the names of the symbol table and of DWARF
"$HOTSTACK" record -q --no-demangle -o "$dir/n.folded" -- "$dir/prog" short >/dev/null 2>"$dir/rec.err" ||
	fail "record --no-demangle failed: $(cat "$dir/rec.err")"
declone "$dir/n.folded" >"$dir/n.txt"
MCHAIN=';main;_ZN3geo11AccumulatorImE4spinEmd;_ZZN3geo11AccumulatorImE4spinEmdENKUlvE_clEv;_ZN3geo13hs_outer_stepEm;_ZN3geo12hs_inner_mixEm'
grep -qF -- "$MCHAIN" "$dir/n.txt" || fail "--no-demangle: no '$MCHAIN': $(head -5 "$dir/n.txt")"
if grep -qF 'geo::' "$dir/n.txt"; then fail "--no-demangle: demangled names: $(grep -F 'geo::' "$dir/n.txt" | head -3)"; fi

# ... and the same for a perf.data, with and without --no-demangle
if command -v perf >/dev/null 2>&1 && mkdir -p "$dir/home" &&
	HOME="$dir/home" PERF_BUILDID_DIR="$dir/home/.debug" perf record -q --call-graph dwarf -o "$dir/p.data" -- "$dir/prog" short >/dev/null 2>&1; then
	"$HOTSTACK" convert "$dir/p.data" --no-demangle -o "$dir/pn.folded" 2>"$dir/conv.err" || fail "convert --no-demangle of a perf.data failed: $(cat "$dir/conv.err")"
	"$HOTSTACK" convert "$dir/p.data" -o "$dir/pd.folded" 2>"$dir/conv.err" || fail "convert of a perf.data failed: $(cat "$dir/conv.err")"
	declone "$dir/pn.folded" >"$dir/pn.txt"
	declone "$dir/pd.folded" >"$dir/pd.txt"
	grep -qF -- "$MCHAIN" "$dir/pn.txt" || fail "perf.data --no-demangle: no '$MCHAIN': $(head -5 "$dir/pn.txt")"
	if grep -qF 'geo::' "$dir/pn.txt"; then fail "perf.data --no-demangle: demangled names"; fi
	grep -qF -- "$CHAIN" "$dir/pd.txt" || fail "perf.data: no '$CHAIN': $(head -5 "$dir/pd.txt")"
	echo "c++: perf.data: mangled names with --no-demangle, demangled without"
	# --no-inline: no DWARF read, so the inlined functions fold into the function they are in
	"$HOTSTACK" convert "$dir/p.data" --no-inline --lines -o "$dir/pi.folded" 2>"$dir/conv.err" || fail "convert --no-inline failed: $(cat "$dir/conv.err")"
	declone "$dir/pi.folded" >"$dir/pi.txt"
	if grep -qF 'hs_inner_mix' "$dir/pi.txt"; then fail "--no-inline: inline frames shown: $(grep -F hs_inner_mix "$dir/pi.txt" | head -2)"; fi
	if grep -q '\.cpp:[0-9]' "$dir/pi.txt"; then fail "--no-inline: source lines shown"; fi
	grep -qF 'geo::Accumulator<unsigned long>::spin(unsigned long, double)::{lambda()#1}::operator()() const' "$dir/pi.txt" ||
		fail "--no-inline: the lambda is not named from the symbol table: $(head -3 "$dir/pi.txt")"
	echo "c++: perf.data --no-inline: the inlined functions folded into the lambda, no lines"
else
	echo "c++: perf is missing or cannot record: --no-demangle on a perf.data not checked"
fi

# pprof as Go's pprof reads it: one location holding the inline chain, innermost first, each
# line with its file and line and the mangled system name; -traces marks inlined frames "(inline)"
if command -v go >/dev/null 2>&1 && go tool -n pprof >/dev/null 2>&1; then
	export PPROF_TMPDIR="$dir"
	HOME="$dir" go tool pprof -raw -symbolize=none "$dir/x.pb.gz" >"$dir/raw.txt" 2>"$dir/pprof.err" ||
		fail "go tool pprof -raw rejected the file: $(cat "$dir/pprof.err")"
	HOME="$dir" go tool pprof -traces -symbolize=none "$dir/x.pb.gz" >"$dir/traces.txt" 2>"$dir/pprof.err" ||
		fail "go tool pprof -traces rejected the file: $(cat "$dir/pprof.err")"
	# -raw: "N: 0xADDR M=1 NAME FILE:LINE s=0(SYSTEM NAME)" then the location's further lines
	sed -E 's/ \[clone [^]]*\]//g; s/(\.(isra|constprop|part|cold)\.[0-9]+)+//g' "$dir/raw.txt" |
		awk -v inner="$INNER $src:" -v outer="$OUTER $src:$(line_of CALL-INNER) " \
			-v lambda="$LAMBDA $src:$(line_of CALL-OUTER) " -v lo="$loop" -v hi="$body" '
		/^Locations/ { in_loc = 1; next }
		/^Mappings/ { in_loc = 0 }
		!in_loc { next }
		/^ +[0-9]+: 0x/ { k = 0; sub(/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ /, "") }
		{ sub(/^ +/, ""); line[++k] = $0 }
		k == 3 && index(line[1], inner) == 1 && index(line[2], outer) == 1 && index(line[3], lambda) == 1 {
			l = substr(line[1], length(inner) + 1) + 0
			if (l >= lo && l <= hi && index(line[1], "(_ZN3geo12hs_inner_mixEm)") &&
			    index(line[2], "(_ZN3geo13hs_outer_stepEm)") && index(line[3], "(_ZZN3geo11AccumulatorImE4spinEmdENKUlvE_clEv)"))
				found = 1
		}
		END { exit !found }' ||
		fail "go tool pprof -raw: no location holding hs_inner_mix at $src:$loop-$body, hs_outer_step and the lambda at their call sites, with their system names: $(sed -n '/^Locations/,/^Mappings/p' "$dir/raw.txt" | head -12)"
	grep -qF -- "$INNER (inline)" "$dir/traces.txt" && grep -qF -- "$OUTER (inline)" "$dir/traces.txt" ||
		fail "go tool pprof -traces does not show the inlined functions as (inline): $(sed -n '8,20p' "$dir/traces.txt")"
	if sed -E 's/ \[clone [^]]*\]//g' "$dir/traces.txt" | grep -qF -- "operator()() const (inline)"; then
		fail "go tool pprof -traces shows the lambda, which is not inlined, as (inline)"
	fi
	echo "c++: go tool pprof shows the inline chain with files, lines and (inline) markers"
else
	echo "c++: go tool pprof is not installed: the pprof file not checked with it"
fi

# -- Rust: a method in an impl block in a module, named by both mangling schemes
if ! command -v rustc >/dev/null 2>&1; then
	echo "names: rustc is not installed (apt-get install rustc): Rust names not checked" >&2
	exit 0
fi
cat >"$dir/r.rs" <<'EOF'
#[cfg(not(old_rustc))]
use std::hint::black_box;
// std::hint::black_box is stable from Rust 1.66 (Debian 12 has 1.63)
#[cfg(old_rustc)]
fn black_box<T: Copy>(x: T) -> T {
    unsafe { std::ptr::read_volatile(&x) }
}

mod shapes {
    use super::black_box;

    pub struct Circle {
        pub r: f64,
    }

    impl Circle {
        #[inline(never)]
        pub fn area_sum(&self, n: u64) -> f64 {
            let mut s = 0.0;
            for i in 0..n {
                s += black_box(self.r) * black_box(self.r) * 3.14159 + i as f64;
            }
            s
        }
    }
}

fn main() {
    let c = shapes::Circle { r: black_box(1.5) };
    let t0 = std::time::Instant::now();
    let mut total = 0.0;
    while t0.elapsed().as_secs_f64() < 0.7 {
        total += c.area_sum(black_box(100_000));
    }
    println!("{}", total);
}
EOF
cfg=""
rustc -O -g -o "$dir/r" "$dir/r.rs" 2>"$dir/rustc.err" || {
	cfg="--cfg old_rustc"
	rustc -O -g $cfg -o "$dir/r" "$dir/r.rs" 2>"$dir/rustc.err" || fail "rustc failed: $(cat "$dir/rustc.err")"
}
echo "rust: $(rustc --version)${cfg:+, without std::hint::black_box}"
# rust_names BINARY NAME: the binary's samples include NAME as a frame of its own, and no hash
rust_names() {
	"$HOTSTACK" record -q -o "$dir/$1.folded" -- "$dir/$1" >/dev/null 2>"$dir/rec.err" ||
		fail "record of $1 failed: $(cat "$dir/rec.err")"
	n=$(grep -F -e ";$2;" -e ";$2 " "$dir/$1.folded" | awk '{ n += $NF } END { print n + 0 }')
	[ "$n" -gt 0 ] || fail "$1: no frame '$2': $(grep -F area_sum "$dir/$1.folded" | head -3)"
	if grep -qE '::h[0-9a-f]{16}|17h[0-9a-f]{16}E|;_[RZ]' "$dir/$1.folded"; then
		fail "$1: names left mangled or with their hash: $(grep -oE ';(_[RZ][^;]*|[^;]*::h[0-9a-f]{16}[^;]*|[^;]*17h[0-9a-f]{16}E[^;]*)' "$dir/$1.folded" | sort -u | head -3)"
	fi
	echo "rust: $1: '$2' in $n samples"
}
# the scheme rustc uses by default: legacy until Rust 1.97, v0 from then on; legacy can only be
# asked for with -Z unstable-options
if grep -q '_ZN1r6shapes6Circle8area_sum17h' "$dir/r"; then
	rust_names r 'r::shapes::Circle::area_sum'
else
	echo "rust: this rustc does not mangle with the legacy scheme by default: legacy names not checked"
fi
if rustc -O -g $cfg -C symbol-mangling-version=v0 -o "$dir/r0" "$dir/r.rs" 2>"$dir/rustc.err"; then
	grep -q '_RNv' "$dir/r0" || fail "rustc -C symbol-mangling-version=v0 did not mangle with v0"
	rust_names r0 '<r::shapes::Circle>::area_sum'
else
	echo "rust: this rustc has no -C symbol-mangling-version=v0 (before 1.59): v0 names not checked"
fi
exit 0
