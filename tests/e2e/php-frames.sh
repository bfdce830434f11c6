#!/bin/sh
# PHP frames read at sample time, under Debian's php8.2: a program with a known call tree
# (recursion, a method, closures called back by usort and array_map, zlib's gzcompress) in two
# processes, started with no flag and attached to with -p; then two PHP-FPM workers serving one
# request each, recorded system-wide: at least 95% of the leaf function's samples carry the
# exact PHP chain from the top level down, with lines, zlib's frames sit under gzcompress, none
# looks whole and is wrong, and the FPM master shows no PHP frame (php-check.py). Then
# --php-internals, --no-php, a version the reader does not know and a user without BPF rights.
set -eu
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
require_perf_events
php=/usr/bin/php8.2
fpm=/usr/sbin/php-fpm8.2
check="$SRCDIR/tests/e2e/php-check.py"
client="$SRCDIR/tests/e2e/php-fcgi.py"
[ -x "$php" ] || fail "Debian's php8.2 is missing (scripts/install-deps --test installs php-cli)"
# the scripts where PHP-FPM's workers (www-data) can read them, and write that they started;
# -n: no php.ini (PHP's defaults), but for the processes attached to, and PHP-FPM
chmod 777 "$dir"
cp "$SRCDIR/tests/workloads/calltree.php" "$dir/calltree.php"
printf '<?php\nrequire __DIR__ . "/calltree.php";\n' >"$dir/app.php"
prog="$dir/calltree.php"

pids=""
trap 'kill $pids 2>/dev/null || true; remove_jit_files; rm -rf "$dir"' EXIT

folded() { # PB FOLDED [OPTIONS...]: PB as folded stacks per process, frames with their lines
	in=$1 out=$2
	shift 2
	"$HOTSTACK" report "$in" --root pid --lines "$@" -o "$out" || fail "report of $in failed"
}

# started: the tree and the zip part, each in a process of its own
"$HOTSTACK" record -q -o "$dir/started.pb.gz" -- sh -c "$php -n $prog tree 2.5 >/dev/null & $php -n $prog zip 2.5 >/dev/null; wait" \
	2>"$dir/started.err" || fail "record failed: $(cat "$dir/started.err")"
[ ! -s "$dir/started.err" ] || fail "record said: $(cat "$dir/started.err")"
folded "$dir/started.pb.gz" "$dir/started.folded"
python3 "$check" "$dir/started.folded" --expect tree,zip || fail "started"

# attached to both, started without hotstack
rm -f "$dir/ready1" "$dir/ready2"
"$php" "$prog" tree 4 "$dir/ready1" >/dev/null &
p1=$!
"$php" "$prog" zip 4 "$dir/ready2" >/dev/null &
p2=$!
pids="$pids $p1 $p2"
wait_until 100 test -s "$dir/ready1" -a -s "$dir/ready2" || fail "the programs did not start"
"$HOTSTACK" record -q -p "$p1,$p2" -d 2 -o "$dir/attached.pb.gz" 2>"$dir/attached.err" ||
	fail "record -p failed: $(cat "$dir/attached.err")"
folded "$dir/attached.pb.gz" "$dir/attached.folded"
python3 "$check" "$dir/attached.folded" --expect tree,zip || fail "attached with -p"
wait "$p1" "$p2" || true

# PHP-FPM (its php.ini: opcache on), two workers each serving a request, recorded system-wide
if [ -x "$fpm" ]; then
	cat >"$dir/fpm.conf" <<EOF
[global]
pid = $dir/fpm.pid
error_log = $dir/fpm.log
daemonize = no
[www]
user = www-data
group = www-data
listen = $dir/fpm.sock
listen.mode = 0666
pm = static
pm.max_children = 2
EOF
	"$fpm" -y "$dir/fpm.conf" >"$dir/fpm.out" 2>&1 &
	pids="$pids $!"
	wait_until 100 test -S "$dir/fpm.sock" -a -s "$dir/fpm.pid" || fail "php-fpm did not start: $(cat "$dir/fpm.out")"
	master=$(cat "$dir/fpm.pid")
	wait_until 100 sh -c "[ \$(pgrep -c -P $master) = 2 ]" || fail "php-fpm did not start its 2 workers"
	python3 "$client" "$dir/fpm.sock" "$dir/app.php" "tree,8,$dir/ready-fpm1" >"$dir/fpm1.out" &
	c1=$!
	python3 "$client" "$dir/fpm.sock" "$prog" "zip,8,$dir/ready-fpm2" >"$dir/fpm2.out" &
	c2=$!
	pids="$pids $c1 $c2"
	wait_until 100 test -s "$dir/ready-fpm1" -a -s "$dir/ready-fpm2" || fail "the requests did not start"
	"$HOTSTACK" record -q -a --off-cpu -d 2.5 -o "$dir/fpm.pb.gz" 2>"$dir/fpm.err" ||
		fail "record -a failed: $(cat "$dir/fpm.err")"
	folded "$dir/fpm.pb.gz" "$dir/fpm.folded"
	grep '^php-fpm8.2-' "$dir/fpm.folded" >"$dir/fpm-only.folded" || fail "-a: no php-fpm8.2 samples"
	python3 "$check" "$dir/fpm-only.folded" --expect tree,zip --fpm || fail "PHP-FPM workers under -a"
	# the master, waiting, off-CPU: its stacks, and no PHP frame in them
	folded "$dir/fpm.pb.gz" "$dir/fpm-off.folded" --value off-cpu
	grep -q "^php-fpm8.2-$master;" "$dir/fpm-off.folded" || fail "-a: no stack of the PHP-FPM master"
	grep "^php-fpm8.2-$master;" "$dir/fpm-off.folded" >"$dir/master.folded"
	python3 "$check" "$dir/master.folded" --expect "" --master "$master" || fail "the PHP-FPM master"
	wait "$c1" "$c2" || fail "a FastCGI request failed: $(cat "$dir/fpm1.out" "$dir/fpm2.out")"
	grep -q '^1$' "$dir/fpm1.out" || fail "the tree request's output: $(cat "$dir/fpm1.out")"
else
	echo "$test_name: no php-fpm8.2 here: PHP-FPM not tested" >&2
fi

# a deep recursion read whole (300 frames under main), and a stack deeper than the frames read
# (1,024) cut where the reading stopped, and said so: never a chain that looks whole and is not
cat >"$dir/deep.php" <<'PHP'
<?php
function deep($n) {
    if ($n == 0) { $t = microtime(true); while (microtime(true) - $t < 1) {} return 0; }
    return deep($n - 1);
}
deep((int)$argv[1]);
PHP
"$HOTSTACK" record -q -o "$dir/deep300.folded" -- "$php" -n "$dir/deep.php" 300 || fail "record of a stack 300 deep failed"
# (when it fails: the stack most seen that was not whole, its deep frames counted)
awk '/;deep[; ]/ {n += $NF; s = $0; d = gsub(/;deep/, "", s)
		if (index($0, ";php_execute_script;main;deep;") && d == 301) w += $NF
		else if ($NF > most) { most = $NF; shape = d " deep frames in " substr($0, 1, 300) " ... " substr($0, length($0) - 200) }}
	END {print "php-frames: deep(300): " w + 0 " of " n + 0 " samples whole"; if (n < 100 || w < 0.95 * n) { print "not whole: " shape; exit 1 }}' \
	"$dir/deep300.folded" || fail "a stack 300 deep not read whole"
"$HOTSTACK" record -q -o "$dir/deep1500.folded" -- "$php" -n "$dir/deep.php" 1500 || fail "record of a stack 1500 deep failed"
awk '/;deep[; ]/ {n += $NF} /;\[php: truncated\];deep;deep;/ {c += $NF} END {if (n < 100 || c < 0.95 * n) {print "deep: " c " of " n " samples cut and said so"; exit 1}}' \
	"$dir/deep1500.folded" || fail "a deep stack cut silently"

# --php-internals keeps the engine's frames between the PHP frames
"$HOTSTACK" record -q --php-internals -o "$dir/int.pb.gz" -- "$php" -n "$prog" tree 2 >/dev/null ||
	fail "record --php-internals failed"
folded "$dir/int.pb.gz" "$dir/int.folded"
python3 "$check" "$dir/int.folded" --expect tree --internals || fail "--php-internals"

# --no-php: the native view, the engine's loop where the script ran
"$HOTSTACK" record -q --no-php -o "$dir/nophp.folded" -- "$php" -n "$prog" tree 1 >/dev/null || fail "record --no-php failed"
grep -q ';execute_ex;' "$dir/nophp.folded" || fail "--no-php: no execute_ex"
if grep -q ';leaf' "$dir/nophp.folded"; then fail "--no-php: PHP frames still read"; fi

# a version the reader does not know (the binary's version string changed): one line naming it,
# and the native view
mkdir -p "$dir/old"
sed 's|X-Powered-By: PHP/8\.2\.|X-Powered-By: PHP/8.9.|' "$php" >"$dir/old/php8.9"
chmod +x "$dir/old/php8.9"
expect_status 0 "$HOTSTACK" record -o "$dir/old.folded" -- "$dir/old/php8.9" -n "$prog" tree 0.7
[ "$(grep -c "php 8.9 is not supported" "$dir/.err")" = 1 ] || fail "php 8.9: no one-line warning: $(cat "$dir/.err")"
grep -q ';execute_ex;' "$dir/old.folded" || fail "php 8.9: no native stacks"
if grep -q ';leaf' "$dir/old.folded"; then fail "php 8.9: PHP frames read"; fi

# without the right to load BPF programs: one line, and the recording goes on
if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	runuser -u nobody -- "$HOTSTACK" record -o "$dir/nobpf.folded" -- "$php" -n "$prog" tree 1 \
		>"$dir/nobpf.out" 2>"$dir/nobpf.err" || fail "record as nobody failed: $(cat "$dir/nobpf.err")"
	[ "$(grep -c 'PHP frames needs root' "$dir/nobpf.err")" = 1 ] ||
		fail "no one-line notice without BPF rights: $(cat "$dir/nobpf.err")"
	grep -q ';execute_ex;' "$dir/nobpf.folded" || fail "no native stacks without BPF rights"
else
	fail "no user 'nobody' or no runuser to test without BPF rights"
fi
exit 0
