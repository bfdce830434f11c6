# The Perl workload of bench/perl-cost.sh: the call tree of tests/workloads/calltree.pl in one
# thread (a closure called from map, a method, recursion to depth 12, a sort block, a leaf loop
# in pure Perl, Digest::MD5's XS code), in a loop for SECONDS. Prints the rounds per second and
# perl's CPU seconds: "ROUNDS_PER_S CPU_S".
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);
use Time::HiRes qw(time);

package Worker;
sub new { my ($class, %args) = @_; return bless {%args}, $class }
sub run { my ($self) = @_; return main::rec($self->{depth}) }

package main;

sub leaf {
    my $x = 0;
    for (my $i = 0; $i < 2000; $i++) {
        $x += $i * 2;
        $x %= 1000003;
    }
    return $x;
}

sub rec {
    my ($n) = @_;
    if ($n <= 0) {
        my @s = sort { leaf() <=> $b } (1, 2);
        return $s[0] + length md5_hex("x" x 20000);
    }
    return rec($n - 1);
}

my $seconds = $ARGV[0] // 5;
my $w = Worker->new(depth => 12);
my $code = sub { $w->run };
my ($n, $start) = (0, time);
my $t;
do {
    my @r = map { $code->() } (1);
    $n++;
} while (($t = time) < $start + $seconds);
my @cpu = times;
printf "%.1f %.3f\n", $n / ($t - $start), $cpu[0] + $cpu[1];
