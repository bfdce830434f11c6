#!/bin/sh
# A file replaced or deleted on disk after a process mapped it never yields names from whatever
# is at that path now: hotstack either names the code from the very file that was mapped
# (captured while the process lived) or falls back to "[module]". Two builds of a library and
# of a program have the same code at the same offsets under different names (alpha_* in the
# one that runs, omega_* in the replacement); no omega_* name may ever show up. As a user,
# hotstack holds no file and takes the one at the path only if it is the one mapped: by device
# and inode, and on btrfs (a subvolume swapped for a twin whose files have the same inode
# numbers) by the inode's generation too.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v cc >/dev/null 2>&1 || skip "cc is not installed (apt-get install gcc)"
require_perf_events

# Same code whatever the prefix; "alpha" and "omega" have the same length, so that even the
# string tables, and with them every offset, are the same in both builds.
cat >"$dir/lib.c" <<'EOF'
#include <time.h>
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(P, x)

double NAME(pad)(double x);
double NAME(spin)(double secs);

double NAME(pad)(double x)
{
	return x * 3 + 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double NAME(spin)(double secs)
{
	volatile double acc = 0;
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 200000; i++)
			acc = acc * 0.999 + i;
	return acc;
}
EOF

# prog MODE: "lib" loads ./libx.so and spins in its alpha_spin, "exe" spins in its own
# alpha_prog_spin. It writes "ready" once loaded, then waits for "go" (so that the first
# sample in the code under test comes after the file was changed), except "lib-now", which
# spins at once for 3 s while the file is changed under it.
cat >"$dir/prog.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(P, x)

double NAME(prog_spin)(double secs);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double NAME(prog_spin)(double secs)
{
	volatile double acc = 0;
	double end = now() + secs;

	while (now() < end)
		for (int i = 0; i < 200000; i++)
			acc = acc * 0.999 + i;
	return acc;
}

static int signal_ready(void)
{
	FILE *f = fopen("ready", "w");
	return f && fclose(f) == 0 ? 0 : -1;
}

static int wait_go(void)
{
	struct timespec ts = {0, 10000000};
	for (int i = 0; i < 3000; i++) {
		if (access("go", F_OK) == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

int main(int argc, char **argv)
{
	double (*spin)(double);
	void *h;

	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "exe")) {
		if (signal_ready() || wait_go())
			return 3;
		NAME(prog_spin)(2.0);
		return 0;
	}
	h = dlopen("./libx.so", RTLD_NOW);
	if (!h || !(spin = (double (*)(double))dlsym(h, "alpha_spin"))) {
		fprintf(stderr, "prog: %s\n", dlerror());
		return 4;
	}
	if (signal_ready())
		return 3;
	if (!strcmp(argv[1], "lib-now")) {
		spin(3.0);
		return 0;
	}
	if (wait_go())
		return 3;
	spin(2.0);
	return 0;
}
EOF

cflags="-O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls"
for p in alpha omega; do
	# shellcheck disable=SC2086
	cc $cflags -fPIC -shared -DP=$p -o "$dir/libx-$p.so" "$dir/lib.c" ||
		skip "cc cannot build a shared library here"
	# shellcheck disable=SC2086
	cc $cflags -DP=$p -o "$dir/prog-$p" "$dir/prog.c" -ldl || skip "cc cannot build a program here"
done
# the premise: same offsets, different names
cmp -s "$dir/libx-alpha.so" "$dir/libx-omega.so" && fail "the two library builds are identical"
if command -v nm >/dev/null 2>&1; then
	for p in alpha omega; do
		nm -D --defined-only "$dir/libx-$p.so" | awk '$3 ~ /_(spin|pad)$/ { print $1 }'
	done >"$dir/addrs"
	if [ "$(sort -u "$dir/addrs" | wc -l)" -ne 2 ] || [ "$(wc -l <"$dir/addrs")" -ne 4 ]; then
		fail "the library builds differ in layout: $(cat "$dir/addrs")"
	fi
fi

# fill DIR BUILD: the program, its library and their replacements into DIR, in this order (so
# that two directories filled alike hold their files under the same inode numbers on btrfs).
fill() {
	other=omega
	[ "$2" = alpha ] || other=alpha
	cp "$dir/prog-$2" "$1/prog"
	cp "$dir/libx-$2.so" "$1/libx.so"
	cp "$dir/libx-$other.so" "$1/libx-omega.so"
	cp "$dir/prog-$other" "$1/prog-omega"
}

# run CASE MODE ACTION [BASE [USER]]: records ./prog MODE in a fresh directory BASE/CASE (BASE
# is $dir unless given; made by $mkcase, mkdir unless set), hotstack running as USER when one is
# given; ACTION (a shell command run in that directory) changes the files once the program is
# ready. The profile goes to $dir/out/CASE.folded, hotstack's messages to $dir/out/CASE.err.
run() {
	tcase=$1 mode=$2 action=$3 base=${4:-$dir} user=${5:-}
	cdir="$base/$tcase"
	out="$dir/out/$tcase"
	${mkcase:-mkdir} "$cdir"
	fill "$cdir" alpha
	set --
	if [ -n "$user" ]; then
		chown "$user" "$cdir"
		set -- setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups env HOME="$dir/home"
	fi
	(cd "$cdir" && exec "$@" "$HOTSTACK" record -g fp -o "$out.folded" -- ./prog "$mode") >"$out.out" 2>"$out.err" &
	rec=$!
	i=0
	while [ ! -e "$cdir/ready" ]; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 $rec 2>/dev/null; then
			kill $rec 2>/dev/null || true
			wait $rec || true
			fail "$tcase: the program never got ready: $(cat "$out.err")"
		fi
		sleep 0.05
	done
	[ "$mode" = lib-now ] && sleep 1
	(cd "$cdir" && eval "$action") || fail "$tcase: '$action' failed"
	touch "$cdir/go"
	status=0
	wait $rec || status=$?
	[ $status -eq 0 ] || fail "$tcase: hotstack record exited $status: $(cat "$out.err")"
	[ -s "$out.folded" ] || fail "$tcase: empty output"
}

# check CASE NAME PLACEHOLDER [named]: no name from a replacement, and most samples in NAME (the
# captured file) or PLACEHOLDER (no names at all); with "named", most in NAME.
check() {
	tcase=$1 name=$2 placeholder=$3
	out="$dir/out/$tcase.folded"
	if grep -q omega "$out"; then
		fail "$tcase: names from the file that replaced the mapped one:
$(grep omega "$out" | head -n 5)"
	fi
	counts=$(awk -v a="$name" -v b="$placeholder" '
	{
		n = $NF; total += n
		line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		for (i = 2; i <= k; i++) {
			if (f[i] == a) { named += n; break }
			if (f[i] == b) { held += n; break }
		}
	}
	END { printf "%d %d %d\n", named, held, total }' "$out")
	read -r named held total <<EOF
$counts
EOF
	[ "$total" -ge 200 ] || fail "$tcase: only $total samples"
	[ $((2 * (named + held))) -ge "$total" ] ||
		fail "$tcase: $named samples in $name and $held in $placeholder of $total:
$(awk '{ print $NF, $0 }' "$out" | sort -nr | head -n 5)"
	echo "$tcase: $named samples named $name, $held shown as $placeholder, of $total"
	[ -z "${4:-}" ] || [ $((2 * named)) -ge "$total" ] || fail "$tcase: only $named of $total samples named $name"
}

mkdir "$dir/out"

run lib-replaced lib 'mv libx-omega.so libx.so'
check lib-replaced alpha_spin '[libx.so]'
run lib-deleted lib 'rm libx.so'
check lib-deleted alpha_spin '[libx.so]'
run lib-replaced-while-running lib-now 'mv libx-omega.so libx.so'
check lib-replaced-while-running alpha_spin '[libx.so]'
run exe-deleted exe 'rm prog'
check exe-deleted alpha_prog_spin '[prog]'
run exe-replaced exe 'mv prog-omega prog'
check exe-replaced alpha_prog_spin '[prog]'

# As a user, hotstack cannot hold on to the mapped files (/proc/PID/map_files needs
# CAP_CHECKPOINT_RESTORE): a file is found by its path and taken only if it is the one mapped,
# by the device and inode of the kernel's records (hotstack asks the kernel for no build-ids)
# and on btrfs, where stat gives each subvolume's device rather than the file system's and
# inode numbers repeat across subvolumes, the inode's generation too.
[ "$(id -u)" = 0 ] || { echo "replaced-binary: not root: no cases as another user"; exit 0; }
user=nobody
id "$user" >/dev/null 2>&1 || fail "no user $user here"
chmod 755 "$dir"
chmod 777 "$dir/out"
mkdir "$dir/home"
chown "$user" "$dir/home"
run user-lib lib ':' "$dir" "$user"
check user-lib alpha_spin '[libx.so]' named
run user-lib-replaced lib 'mv libx-omega.so libx.so' "$dir" "$user"
check user-lib-replaced alpha_spin '[libx.so]'

command -v mkfs.btrfs >/dev/null 2>&1 || skip "mkfs.btrfs is not installed (apt-get install btrfs-progs)"
truncate -s 128M "$dir/btrfs.img"
mkfs.btrfs -q "$dir/btrfs.img" >/dev/null 2>"$dir/mkfs.err" || fail "mkfs.btrfs failed: $(cat "$dir/mkfs.err")"
mkdir "$dir/bt"
mount -o loop "$dir/btrfs.img" "$dir/bt" 2>"$dir/mount.err" || skip "cannot mount btrfs here: $(cat "$dir/mount.err")"
# detached, not unmounted: a hotstack record -a running beside the test holds the files it saw
# mapped there, and the file system goes once they are closed
trap 'umount -l "$dir/bt" 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT
chmod 755 "$dir/bt"
subvolume() {
	btrfs subvolume create "$1" >/dev/null
}
mkcase=subvolume run user-btrfs lib ':' "$dir/bt" "$user"
check user-btrfs alpha_spin '[libx.so]' named
# a twin of the case's subvolume: the same inode numbers, the replacements' contents, made in
# an earlier transaction (another generation); it takes the case's name once the program runs
subvolume "$dir/bt/user-btrfs-twin.new"
fill "$dir/bt/user-btrfs-twin.new" omega
sync
mkcase=subvolume run user-btrfs-twin lib \
	'mv ../user-btrfs-twin ../user-btrfs-twin.old && mv ../user-btrfs-twin.new ../user-btrfs-twin && touch ../user-btrfs-twin.old/go' \
	"$dir/bt" "$user"
[ "$(stat -c %i "$dir/bt/user-btrfs-twin/libx.so")" = "$(stat -c %i "$dir/bt/user-btrfs-twin.old/libx.so")" ] ||
	fail "user-btrfs-twin: the twin's library has another inode number"
check user-btrfs-twin alpha_spin '[libx.so]'
echo "replaced-binary: ok"
