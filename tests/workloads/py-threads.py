"""Two named Python threads, busy in different functions, for the thread name tests.

Thread "worker-1": Thread.run -> spin_a; thread "worker-2": Thread.run -> spin_b.

Usage: py-threads.py SECONDS [os-names]: runs for SECONDS. With os-names each thread also gives
its name to the operating system (prctl PR_SET_NAME, 15 bytes at most), as CPython 3.14's
threading.Thread.start does itself; before 3.14 a thread's name is Python's alone.
"""
import ctypes
import sys
import threading
import time

PR_SET_NAME = 15


def os_name(name):
    if sys.version_info < (3, 14):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)


def spin_a(until):
    n = 0
    while time.monotonic() < until:
        n += 1
    return n


def spin_b(until):
    n = 0
    while time.monotonic() < until:
        n -= 1
    return n


def run(fn, until, named):
    if named:
        os_name(threading.current_thread().name)
    fn(until)


def main():
    until = time.monotonic() + float(sys.argv[1])
    named = len(sys.argv) > 2 and sys.argv[2] == "os-names"
    threads = [threading.Thread(target=run, args=(fn, until, named), name=name)
               for fn, name in ((spin_a, "worker-1"), (spin_b, "worker-2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


main()
