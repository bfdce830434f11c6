# The Ruby workload of bench/ruby-cost.sh: one busy thread whose stacks have the shapes of
# tests/workloads/calltree.rb (recursion, a block yielded to by a C method, zlib), for SECONDS.
# Prints its rounds per second and its own CPU seconds.
require 'zlib'

BLOB = (0...4096).map { |i| (i * 7 % 251).chr }.join * 4

class Tree
  def rec(n)
    n == 0 ? leaf : rec(n - 1)
  end

  def leaf
    [1, 2, 3].map { |v| (1..200).sum { |i| i * v } }.sum
  end
end

seconds = Float(ARGV[0] || 5)
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
stop = start + seconds
tree = Tree.new
n = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  tree.rec(20)
  Zlib::Deflate.deflate(BLOB, 6)
  n += 1
end
t = Process.times
printf("%.1f %.3f\n", n / (Process.clock_gettime(Process::CLOCK_MONOTONIC) - start), t.utime + t.stime)
