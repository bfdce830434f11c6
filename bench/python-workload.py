"""The Python workload of bench/python-cost.sh: for SECONDS, the call tree of
tests/workloads/calltree.py in a loop (recursion into a pure-Python leaf, a zlib call, a
generator summed), in one thread, so that its rate does not depend on how threads share the
GIL. Prints the iterations done per second and its own CPU seconds (user + system):
"iterations_per_s CPU_S".
"""
import resource
import sys
import time
import zlib


def leaf_work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def rec(d):
    return leaf_work(2000) if d == 0 else rec(d - 1)


BLOB = bytes(range(256)) * 200


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5
    start = time.time()
    end = start + seconds
    n = 0
    while time.time() < end:
        rec(20)
        zlib.compress(BLOB, 6)
        sum(x for x in range(200))
        n += 1
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print("%.1f %.3f" % (n / (time.time() - start), ru.ru_utime + ru.ru_stime))


main()
