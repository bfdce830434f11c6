#!/bin/sh
# Samples in a BPF program are named after it: a tracepoint program on getppid, loaded here
# (clang, libbpf), spins for each call that a program of ours makes, and hotstack records that
# program. Where the kernel lists JIT-compiled programs (net.core.bpf_jit_kallsyms = 1), the
# frames below the kernel's BPF dispatch are bpf_prog_TAG_hs_spin, with the cache entry of
# kernel symbols (which leaves BPF programs out) and without; otherwise [kernel: unknown]. No
# kernel frame is the kernel's last init function, _einittext, nor any end marker. How many
# samples land in the program is the scheduler's: only their names are checked.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
command -v clang >/dev/null || skip "no clang to build a BPF program"
command -v cc >/dev/null || skip "no C compiler"
[ -f /usr/include/bpf/libbpf.h ] || skip "no libbpf headers (apt-get install libbpf-dev)"

cat >"$dir/spin.bpf.c" <<'EOF'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
char LICENSE[] SEC("license") = "GPL";
volatile __u64 sink;
SEC("tracepoint/syscalls/sys_enter_getppid")
int hs_spin(void *ctx)
{
	char comm[16];
	__u64 x = 0;

	bpf_get_current_comm(comm, sizeof(comm));
	if (comm[0] != 'h' || comm[1] != 's' || comm[2] != 'b' || comm[3] != 'p' || comm[4] != 'f')
		return 0;
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + (__u64)i;
	sink = x;
	return 0;
}
EOF
cat >"$dir/load.c" <<'EOF'
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	struct bpf_program *p;

	if (!obj || libbpf_get_error(obj) || bpf_object__load(obj))
		return 3;
	p = bpf_object__find_program_by_name(obj, "hs_spin");
	if (!p || libbpf_get_error(bpf_program__attach(p)))
		return 4;
	printf("attached\n");
	fflush(stdout);
	sleep((unsigned)atoi(argv[2]));
	return 0;
}
EOF
cat >"$dir/spin.c" <<'EOF'
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct timespec a, b;
	double s = argc > 1 ? atof(argv[1]) : 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100; i++)
			syscall(SYS_getppid);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < s);
	return 0;
}
EOF
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu -c "$dir/spin.bpf.c" \
	-o "$dir/spin.bpf.o" 2>"$dir/clang.err" || skip "clang cannot build a BPF program here: $(head -n1 "$dir/clang.err")"
cc -O1 -o "$dir/load" "$dir/load.c" -lbpf || fail "cannot build the loader"
cc -O1 -o "$dir/hsbpf-spin" "$dir/spin.c" || fail "cannot build the workload"

"$dir/load" "$dir/spin.bpf.o" 240 >"$dir/load.out" 2>"$dir/load.err" &
loader=$!
trap 'kill "$loader" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	[ -s "$dir/load.out" ] && break
	kill -0 "$loader" 2>/dev/null || break
	sleep 0.1
done
[ -s "$dir/load.out" ] || skip "the BPF program cannot be loaded or attached here: $(tail -n1 "$dir/load.err")"
tag=$(bpftool prog show name hs_spin 2>/dev/null | sed -n 's/.* tag \([0-9a-f]*\).*/\1/p' | head -n1 || true)

listed=$(cat /proc/sys/net/core/bpf_jit_kallsyms 2>/dev/null || echo 0)
expect='bpf_prog_[0-9a-f]{16}_hs_spin_\[k\]'
[ "$listed" = 1 ] || expect='\[kernel: unknown\]_\[k\]'
[ -z "$tag" ] || [ "$listed" != 1 ] || expect="bpf_prog_${tag}_hs_spin_\\[k\\]"

# check FILE LABEL: the frames the kernel called BPF into (after trace_call_bpf) that are a BPF
# program or nothing known are $expect; no frame is an end marker of the kernel's text. Prints
# how many samples are in the program.
check() {
	awk -F';' '{ sub(/ [0-9]+$/, ""); for (i = 1; i < NF; i++) if ($i == "trace_call_bpf_[k]") print $(i + 1) }' "$1" |
		sort -u >"$1.under"
	bad=$(grep -E '^(bpf_prog_|\[kernel: unknown\]|\[kernel\.kallsyms\])' "$1.under" | grep -vE "^$expect\$" || true)
	[ -z "$bad" ] || fail "$2: the BPF program's frames are not $expect: $bad"
	if tr ';' '\n' <"$1" | sed 's/ [0-9]*$//' | grep -qE '^(_einittext|_etext|__[a-z_]*_text_end)_\[k\]$'; then
		fail "$2: a kernel end marker is a frame: $(grep -m3 -E '_einittext|_etext|_text_end' "$1")"
	fi
	awk -v e="^$expect\$" '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ e) { s += c; break } } END { print s + 0 }' "$1"
}

# hotstack's own recordings, with the kernel-symbol cache (which leaves BPF programs out: a
# second run reads kallsyms again for them) and without
mkdir -m 700 "$dir/cache"
for run in first cached; do
	HOTSTACK_CACHE_DIR=$dir/cache "$HOTSTACK" record -o "$dir/$run.folded" -- "$dir/hsbpf-spin" 2 2>"$dir/$run.err" ||
		fail "record ($run) failed: $(cat "$dir/$run.err")"
	echo "kernel-bpf-names: $run recording: $(check "$dir/$run.folded" "$run") samples in the BPF program"
done
[ -f "$dir/cache/kallsyms" ] || fail "no kernel-symbol cache entry was written"
if grep -q 'hs_spin' "$dir/cache/kallsyms"; then fail "the cache entry holds a BPF program"; fi

# perf's recording of the same, read by hotstack: perf's copy of kallsyms in its build-id cache
# is the first it made for this kernel, without this program; the running kernel names it
command -v perf >/dev/null || exit 0
perf record -q -e cpu-clock:ppp -g -o "$dir/p.data" -- "$dir/hsbpf-spin" 1 >/dev/null 2>&1 ||
	perf record -q -g -o "$dir/p.data" -- "$dir/hsbpf-spin" 1 >/dev/null 2>&1 || exit 0
perf report -i "$dir/p.data" --stdio --no-children --sort sym 2>/dev/null | grep -c 'bpf_prog_.*_hs_spin' >"$dir/p.n" || true
HOTSTACK_CACHE_DIR=$dir/cache "$HOTSTACK" convert "$dir/p.data" -o "$dir/p.folded" 2>"$dir/p.err" ||
	fail "convert of perf.data failed: $(cat "$dir/p.err")"
n=$(check "$dir/p.folded" perf.data)
if [ "$(cat "$dir/p.n")" != 0 ] && [ "$listed" = 1 ] && [ "$n" = 0 ]; then
	fail "perf has samples in bpf_prog_*_hs_spin, hotstack names none of them: $(sort -t' ' -k2 -nr "$dir/p.folded" | head -n 3)"
fi
echo "kernel-bpf-names: perf.data: $n samples in the BPF program"
exit 0
