<?php
// A PHP program with a known call tree, for the PHP frame tests (tests/e2e/php-frames.sh).
//
// tree: main -> array_map -> {closure} -> Runner::run -> rec x5 -> usort -> {closure} -> leaf
//       (a method, recursion, closures called back by C builtins, pure PHP in the leaf)
// zip:  main -> Runner::zip -> gzcompress (zlib's deflate: an extension's C)
//
// Usage: php calltree.php tree|zip [SECONDS] [READY_FILE]: runs for SECONDS (default 2.5), and
// writes "ready" to READY_FILE as it starts. Under PHP-FPM the same arguments come as the query
// string, comma-separated ("tree,5"). The line numbers below are checked by php-check.py.
function leaf(float $end): int {
    $x = 0;
    for ($i = 1; ; $i++) {
        $x = ($x + $i * 2) % 1000003;
        if (($i & 0x3ffff) == 0 && microtime(true) > $end) break;
    }
    return $x;
}
function rec(int $n, float $end): int {
    if ($n <= 0) {
        $a = [3, 1, 2];
        usort($a, function ($p, $q) use ($end) { return leaf($end) <=> $q; }); // line 22
        return $a[0];
    }
    return rec($n - 1, $end);                                                    // line 25
}
class Runner {
    public function run(int $d, float $end): int { return rec($d, $end); }      // line 28
    public static function zip(float $end): int {
        $n = 0;
        while (microtime(true) < $end) {
            $n += strlen(gzcompress(str_repeat("abcdefgh", 100000), 9));         // line 32
        }
        return $n;
    }
}
$args = PHP_SAPI === 'cli' ? array_slice($argv, 1) : explode(',', $_SERVER['QUERY_STRING'] ?? '');
$end = microtime(true) + (float)($args[1] ?? 2.5);
if (isset($args[2])) {
    file_put_contents($args[2], "ready\n");
}
if (($args[0] ?? 'tree') === 'zip') {
    echo Runner::zip($end), "\n";                                                // line 43
} else {
    $r = new Runner();
    echo array_sum(array_map(fn($d) => $r->run($d, $end), [4])), "\n";          // line 46
}
