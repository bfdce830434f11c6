# A Perl program with a known call tree, for the Perl frame tests.
#
# main -> main::__ANON__ (a closure called from map) -> Worker::run (a method)
#      -> main::rec x5 (4 .. 0) -> sort's block (called from pp_sort) -> main::leaf   (pure Perl)
# a second thread: main::__ANON__ -> main::md5loop -> md5_hex (Digest::MD5's XS code: MD5.so)
# with "fork": a child process too: main -> main::child_spin -> main::leaf
#
# Usage: perl calltree.pl [SECONDS] [READY_FILE] [fork]: runs for SECONDS (default 2.5), and
# writes "ready" to READY_FILE once both threads (and the child) run.
use strict;
use warnings;
use threads;
use Digest::MD5 qw(md5_hex);
use Time::HiRes qw(time);

package Worker;
sub new { my ($class, %args) = @_; return bless {%args}, $class }
sub run {
    my ($self) = @_;
    return main::rec($self->{depth});
}

package main;

my $seconds = $ARGV[0] // 2.5;
my $end = time + $seconds;

sub leaf {
    my $x = 0;
    for (my $i = 0; $i < 20000; $i++) {
        $x += $i * 2;
        $x %= 1000003;
    }
    return $x;
}

sub rec {
    my ($n) = @_;
    if ($n <= 0) {
        my @s = sort { leaf() <=> $b } (1, 2);
        return $s[0];
    }
    return rec($n - 1);
}

sub md5loop {
    my $d = "x" x 1000;
    while (time < $end) {
        $d = md5_hex($d) x 300;
    }
}

sub child_spin {
    leaf() while time < $end;
}

my $child;
if (($ARGV[2] // '') eq 'fork') {
    $child = fork;
    die "fork: $!" unless defined $child;
    if (!$child) {
        child_spin();
        exit 0;
    }
}
my $t = threads->create(sub { md5loop() });
if (defined $ARGV[1] && $ARGV[1] ne '') {
    open(my $f, '>', $ARGV[1]) or die "$ARGV[1]: $!";
    print $f "ready\n";
    close $f;
}
my $w = Worker->new(depth => 4);
my $code = sub { $w->run };
while (time < $end) {
    my @r = map { $code->() } (1);
}
$t->join;
waitpid($child, 0) if $child;
