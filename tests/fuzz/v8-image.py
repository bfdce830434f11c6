"""Writes a seed for fuzz-v8-objects: a memory image at 0x100000 holding, with node 20's layout,
a SharedFunctionInfo named "fib" in a Script "/app/hot.js" whose source has three lines, the
strings, a source position table (a ByteArray) and the maps they need; its first words point at
each of them.

usage: v8-image.py OUT
"""
import struct
import sys

BASE = 0x100000
img = bytearray(4096)


def put(off, fmt, *v):
    struct.pack_into("<" + fmt, img, off, *v)


def tagged(off):
    return BASE + off + 1


def smi(v):
    return (v & 0xffffffff) << 32


def obj_map(off, itype):
    """a Map at off whose instance type is itype"""
    put(off, "Q", tagged(off))
    put(off + 12, "H", itype)
    return tagged(off)


def string(off, m, text):
    put(off, "Q", m)
    put(off + 12, "I", len(text))
    img[off + 16:off + 16 + len(text)] = text
    return tagged(off)


maps = {n: obj_map(0x200 + 0x20 * i, t) for i, (n, t) in
        enumerate((("str", 8), ("sfi", 262), ("script", 167), ("ba", 190), ("fa", 175), ("code", 245)))}
name = string(0x400, maps["str"], b"fib")
path = string(0x440, maps["str"], b"/app/hot.js")
src = string(0x480, maps["str"], b"'use strict';\nfunction fib(n) {\n  return n;\n}\n")
script = tagged(0x500)
put(0x500, "QQQ", maps["script"], src, path)
put(0x500 + 56, "Q", smi(0))
sfi = tagged(0x580)
put(0x580, "QQQ", maps["sfi"], 0, name)
put(0x580 + 32, "Q", script)
table = tagged(0x600)
# (code delta, position delta) pairs, zigzag VLQ: entry -1 -> 14, then 0 -> 28, 5 -> 40
pairs = bytes([0x00, (15 << 1) & 0x7f | 0, 0x02, 0x1c, 0x0a, 0x18])
put(0x600, "QQ", maps["ba"], smi(len(pairs)))
img[0x610:0x610 + len(pairs)] = pairs
put(0, "QQQQQ", sfi, name, script, table, src)
open(sys.argv[1], "wb").write(bytes(img))
