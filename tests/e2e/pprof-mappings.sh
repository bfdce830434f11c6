#!/bin/sh
# pprof files as Go's tools read them: a program built as a PIE and without (-no-pie), recorded
# under a shell and after kernel-heavy start-up (its first samples are the kernel's), then
#   go tool pprof -top     names the program as the profile's binary ("File: NAME"), not the
#                          kernel: the main binary is the first mapping (profile.proto)
#   go tool pprof -raw     lists the program's mapping first
#   go tool pprof -disasm  prints the hot function's instructions with samples on them, for the
#                          PIE as for the other (the PIE is written at its file's addresses)
#   go tool pprof -list    shows its source lines with samples
# and hotstack reads the file back: the report names the function, and converting it to pprof
# again gives the same profile bytes. Skips (77) without Go, a C compiler or perf events.
set -eu
. "$SRCDIR/tests/e2e/lib.sh"

command -v go >/dev/null 2>&1 || skip "go is not installed (apt-get install golang-go)"
go tool -n pprof >/dev/null 2>&1 || skip "this Go has no 'go tool pprof'"
command -v cc >/dev/null 2>&1 || skip "cc is not installed (apt-get install gcc)"
require_perf_events
export PPROF_TMPDIR="$dir" HOME="${HOME:-$dir}"

cat >"$dir/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* kernel time first: fresh pages faulted in */
static void fault_pages(void)
{
	for (int i = 0; i < 24; i++) {
		size_t n = 8 << 20;
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			exit(1);
		memset(p, i, n);
		munmap(p, n);
	}
}

__attribute__((noinline)) static unsigned long spin_hot(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	return x;
}

int main(void)
{
	fault_pages();
	printf("%lu\n", spin_hot(300000000UL));
	return 0;
}
EOF

# e_type of an ELF file: 2 ET_EXEC, 3 ET_DYN (little-endian, as x86-64 and arm64 are)
elf_type() {
	od -An -j16 -N1 -tu1 "$1" | tr -d ' '
}

for kind in pie nopie; do
	if [ "$kind" = pie ]; then
		cc -O2 -g -fPIE -pie -o "$dir/hot-$kind" "$dir/prog.c" || fail "cannot build the PIE"
		[ "$(elf_type "$dir/hot-$kind")" = 3 ] || fail "the PIE build is not ET_DYN"
	else
		cc -O2 -g -fno-PIE -no-pie -o "$dir/hot-$kind" "$dir/prog.c" || fail "cannot build with -no-pie"
		[ "$(elf_type "$dir/hot-$kind")" = 2 ] || fail "the -no-pie build is not ET_EXEC"
	fi
	pb="$dir/$kind.pb.gz"
	# as a user types it; the shell forks the program (": " after it), so two processes
	(cd "$dir" && "$HOTSTACK" record -o "$pb" -- sh -c "./hot-$kind >/dev/null; :") 2>"$dir/rec.err" ||
		fail "$kind: hotstack record failed: $(cat "$dir/rec.err")"

	go tool pprof -top "$pb" >"$dir/top.txt" 2>"$dir/top.err" ||
		fail "$kind: go tool pprof -top rejected the file: $(cat "$dir/top.err")"
	file_line=$(head -n1 "$dir/top.txt")
	[ "$file_line" = "File: hot-$kind" ] ||
		fail "$kind: go tool pprof -top says '$file_line', expected 'File: hot-$kind'"

	go tool pprof -raw "$pb" >"$dir/raw.txt" 2>"$dir/raw.err" ||
		fail "$kind: go tool pprof -raw rejected the file: $(cat "$dir/raw.err")"
	first=$(sed -n '/^Mappings$/{n;p;q}' "$dir/raw.txt")
	case "$first" in
	"1: "*" $dir/hot-$kind "*) ;;
	*) fail "$kind: the first mapping is not the program: '$first'" ;;
	esac

	# -disasm: instructions of spin_hot, with (nearly) all of the function's samples on them
	go tool pprof -disasm=spin_hot "$pb" >"$dir/disasm.txt" 2>"$dir/disasm.err" ||
		fail "$kind: go tool pprof -disasm failed: $(cat "$dir/disasm.err") $(cat "$dir/disasm.txt")"
	grep -q '^ROUTINE =* spin_hot' "$dir/disasm.txt" ||
		fail "$kind: -disasm printed no routine spin_hot: $(cat "$dir/disasm.txt")"
	# instruction lines: "FLAT CUM ADDRESS: INSTRUCTION", FLAT "." when none; the function's
	# own on the line "FLAT CUM (flat, cum) ..." after its ROUTINE line
	awk -v kind="$kind" '
	function ms(v) {
		if (v ~ /ms$/) return v + 0
		if (v ~ /us$/) return v / 1000
		if (v ~ /s$/) return v * 1000
		return v + 0
	}
	/\(flat, cum\)/ { total += ms($1) }
	$3 ~ /^[0-9a-f]+:$/ { n++; if ($1 != ".") { hot++; sum += ms($1) } }
	END {
		if (n < 5) { printf "%s: only %d instructions listed\n", kind, n; exit 1 }
		if (!hot) { printf "%s: no instruction has samples\n", kind; exit 1 }
		if (sum < 0.9 * total) { printf "%s: the instructions hold %g of %g\n", kind, sum, total; exit 1 }
	}' "$dir/disasm.txt" >"$dir/check.txt" || fail "$(cat "$dir/check.txt"); -disasm printed: $(cat "$dir/disasm.txt")"

	go tool pprof -list=spin_hot "$pb" >"$dir/list.txt" 2>"$dir/list.err" ||
		fail "$kind: go tool pprof -list failed: $(cat "$dir/list.err")"
	grep -qE '^ +[0-9.]+[mu]?s +[0-9.]+[mu]?s +[0-9]+:.*6364136223846793005' "$dir/list.txt" ||
		fail "$kind: -list shows no samples on the loop's line: $(cat "$dir/list.txt")"

	# hotstack reads it back, and writes the same profile again
	"$HOTSTACK" report "$pb" >"$dir/report.txt" 2>"$dir/report.err" ||
		fail "$kind: hotstack report cannot read it: $(cat "$dir/report.err")"
	grep -q 'spin_hot' "$dir/report.txt" || fail "$kind: the report has no spin_hot"
	"$HOTSTACK" convert "$pb" -o "$dir/again.pb.gz" 2>"$dir/conv.err" ||
		fail "$kind: hotstack convert cannot read it: $(cat "$dir/conv.err")"
	gzip -dc "$pb" >"$dir/a.pb"
	gzip -dc "$dir/again.pb.gz" >"$dir/b.pb"
	cmp -s "$dir/a.pb" "$dir/b.pb" || fail "$kind: pprof -> hotstack -> pprof changed the profile"
done
echo "pprof-mappings: ok"
