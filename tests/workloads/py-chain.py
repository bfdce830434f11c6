# A known Python call chain for the trampoline tests (tests/e2e/py-trampolines.sh): the main
# thread runs main_loop -> rec * (DEPTH + 1) -> leaf, a second thread worker -> worker_leaf,
# for SECONDS (argv[1]). Python 3.12+ with -X perf or -X perf_jit calls each through a
# trampoline.
import sys
import threading
import time

DEPTH = 8


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def rec(d):
    if d == 0:
        return leaf(3000)
    return rec(d - 1)


def main_loop(deadline):
    while time.monotonic() < deadline:
        rec(DEPTH)


def worker_leaf(n):
    s = 0
    for i in range(n):
        s += i ^ 7
    return s


def worker(stop):
    while not stop.is_set():
        worker_leaf(3000)


stop = threading.Event()
t = threading.Thread(target=worker, args=(stop,))
t.start()
main_loop(time.monotonic() + float(sys.argv[1]))
stop.set()
t.join()
