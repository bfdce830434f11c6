# A Ruby program with a known call tree, for the Ruby frame tests (tests/e2e/ruby-frames.sh).
#
# <main> -> Tree.run -> Tree#recurse x5 -> Tree#leaf -> Array#map { } -> Zlib::GzipWriter.wrap { }
#   -> Spinner.spin -> Kernel#loop { }                  (a class method, recursion, blocks
#                                                        yielded to by C methods and a C extension)
#   -> Zlib::GzipWriter#write (deflate in libz)        (the extension doing the work)
# Thread: block in <main> -> Object#worker -> Enumerable#sort_by -> Range#each { }
#   -> Spinner.spin -> Kernel#loop { }                  (a second thread)
#
# Usage: ruby calltree.rb [SECONDS] [READY_FILE]: runs for SECONDS (default 2.5), and writes
# "ready" to READY_FILE once both threads run.
require 'zlib'
require 'stringio'

SECONDS = Float(ARGV[0] || 2.5)
READY = ARGV[1]

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

DEADLINE = now + SECONDS
# compressible, but not trivially: deflate works on it for tens of milliseconds
BLOB = Random.new(1).bytes(1 << 16).unpack('C*').map { |b| (b % 16 + 97).chr }.join * 16

module Spinner
  def self.spin(until_time)
    x = 0
    loop do
      x += 1
      break if (x & 0xffff) == 0 && now > until_time
    end
    x
  end
end

class Tree
  def self.run(depth)
    new.recurse(depth)
  end

  def recurse(n)
    if n == 0
      leaf
    else
      recurse(n - 1)
    end
  end

  def leaf
    [1].map do |v|
      Zlib::GzipWriter.wrap(StringIO.new) do |gz|
        while now < DEADLINE
          Spinner.spin([now + 0.2, DEADLINE].min)
          gz.write(BLOB)
          gz.flush
        end
      end
    end
  end
end

def worker
  (1..3).sort_by do |i|
    Spinner.spin(DEADLINE)
  end
end

t = Thread.new { worker }
Thread.pass
File.write(READY, "ready\n") if READY
Tree.run(4)
t.join
