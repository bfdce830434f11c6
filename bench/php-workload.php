<?php
// The PHP workload of bench/php-cost.sh: one busy process, the shapes of a PHP program
// (recursion 20 deep, a method, a closure called back by usort, zlib's gzcompress, builtins).
// Usage: php php-workload.php [SECONDS]: prints the rounds per second and the CPU seconds used.
function rec(int $d, Runner $r): int {
    return $d ? rec($d - 1, $r) : $r->round();
}
class Runner {
    private string $blob;
    public function __construct() { $this->blob = str_repeat("hotstack php workload ", 2000); }
    public function round(): int {
        $a = range(1, 200);
        usort($a, function ($x, $y) { return ($y * 7) % 13 <=> ($x * 7) % 13; });
        $s = 0;
        for ($i = 0; $i < 2000; $i++) {
            $s += $i * $i % 7;
        }
        return $s + strlen(gzcompress($this->blob, 6)) + $a[0];
    }
}
$seconds = (float)($argv[1] ?? 5);
$r = new Runner();
$start = microtime(true);
$end = $start + $seconds;
$n = 0;
while (microtime(true) < $end) {
    rec(20, $r);
    $n++;
}
$ru = getrusage();
printf("%.1f %.3f\n", $n / (microtime(true) - $start),
    $ru['ru_utime.tv_sec'] + $ru['ru_utime.tv_usec'] / 1e6 + $ru['ru_stime.tv_sec'] + $ru['ru_stime.tv_usec'] / 1e6);
