"""A Python program with a known call tree, for the Python frame tests.

<module> -> main -> Parser.parse -> rec x7 (depth 6 .. 0) -> leaf_work   (pure Python)
<module> -> main -> compress_blob -> zlib.compress (C: deflate)         (an extension)
Thread "spinner": ... Thread.run -> spin -> sum(<genexpr>)              (a second thread)

Usage: calltree.py [SECONDS] [READY_FILE]: runs for SECONDS (default 2.5), and writes "ready"
to READY_FILE once both threads run.
"""
import sys
import threading
import time
import zlib

DEPTH = 6


def leaf_work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def rec(d):
    if d == 0:
        return leaf_work(20000)
    return rec(d - 1)


class Parser:
    def parse(self):
        return rec(DEPTH)


BLOB = bytes(range(256)) * 2000


def compress_blob():
    return zlib.compress(BLOB, 9)


def spin(end):
    while time.time() < end:
        sum(x for x in range(1000))


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
    end = time.time() + seconds
    t = threading.Thread(target=spin, args=(end,), name="spinner")
    t.start()
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("ready\n")
    p = Parser()
    while time.time() < end:
        p.parse()
        compress_blob()
    t.join()


main()
