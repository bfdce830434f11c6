#!/usr/bin/env python3
"""Hostile inputs for hotstack's readers: small files that ask for much memory or time.

    tests/hostile-inputs.py DIR [NAME...]

writes each named input (all of them without names) into DIR. The bounds they test are in
docs/limits.md; tests/e2e/hostile-inputs.sh asserts them, bench/hostile-inputs.sh measures
peak memory and time on each. Needs python3 and, for the perf.data files, the zstd program.
"""
import os
import struct
import subprocess
import sys
import zlib



# ---- protobuf (profile.proto) by hand ----

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wire):
    return varint(num << 3 | wire)


def f_varint(num, v):
    return key(num, 0) + varint(v)


def f_len(num, data):
    return key(num, 2) + varint(len(data)) + data


def packed(num, values):
    return f_len(num, b"".join(varint(v) for v in values))


def pprof_head(strings, locations, functions=((1, 3),)):
    """string table, one sample type (strings 1/2), functions (id, name), locations"""
    out = bytearray()
    out += f_len(1, f_varint(1, 1) + f_varint(2, 2))
    for s in strings:
        out += f_len(6, s.encode())
    for fid, name in functions:
        out += f_len(5, f_varint(1, fid) + f_varint(2, name))
    for loc in locations:
        out += f_len(4, loc)
    return out


def gzip_stream(path, chunks, level=9):
    """gzip-compresses the byte strings chunks yields into path."""
    z = zlib.compressobj(level, zlib.DEFLATED, 16 + 15)
    with open(path, "wb") as f:
        for c in chunks:
            f.write(z.compress(c))
        f.write(z.flush())


# ---- the inputs ----

def gzip_bomb(d):
    """1 GiB of zeros, gzipped: about 1 MB."""
    zero = bytes(1 << 20)
    gzip_stream(os.path.join(d, "gzip-bomb.gz"), (zero for _ in range(1024)))


def gzip_bomb_pprof(d):
    """A valid pprof start (its string table), then 1 GiB in one string: about 1 MB gzipped."""
    n = (1 << 30)
    head = pprof_head(["", "samples", "count", "f"], [])
    big = key(6, 2) + varint(n)
    zero = bytes(1 << 20)
    gzip_stream(os.path.join(d, "gzip-bomb-pprof.pb.gz"),
                [head, big] + [zero] * (n >> 20))


def pprof_deep(d):
    """4,096 distinct stacks 65,536 deep, gzipped: about 300 KB for 268 M frames. Each stack's
    root location differs, so no two share a prefix in a flame graph."""
    nstacks, depth = 4096, 65536
    locs = [f_varint(1, i) + f_varint(3, 0x1000 + 16 * i) + f_len(4, f_varint(1, 1))
            for i in range(1, nstacks + 2)]
    head = pprof_head(["", "samples", "count", "f"], locs)

    def samples():
        yield bytes(head)
        ones = b"\x01" * (depth - 1)  # location 1, packed: one byte each
        for i in range(2, nstacks + 2):
            ids = ones + varint(i)  # leaf first: the root is location i
            yield f_len(2, f_len(1, ids) + packed(2, [1]))
    gzip_stream(os.path.join(d, "pprof-deep.pb.gz"), samples())


def pprof_inline(d):
    """One location of 4,096 inlined lines, in 16 stacks 65,536 deep: 4 G frames to draw."""
    nstacks, depth, nlines = 16, 65536, 4096
    line = f_len(4, f_varint(1, 1))
    locs = [f_varint(1, 1) + line * nlines] + [f_varint(1, i) + f_varint(3, 0x1000 + 16 * i) + line
                                             for i in range(2, nstacks + 2)]
    out = bytearray(pprof_head(["", "samples", "count", "f"], locs))
    for i in range(2, nstacks + 2):
        out += f_len(2, f_len(1, b"\x01" * (depth - 1) + varint(i)) + packed(2, [1]))
    gzip_stream(os.path.join(d, "pprof-inline.pb.gz"), [bytes(out)])


def pprof_timed_inline(d):
    """300,000 samples told apart by their timestamps, each of one location of 4,096 inlined
    lines: 4.8 MB whose samples' stacks hold 1.2 G frames for writers to go through."""
    nsamples, nlines = 300000, 4096
    line = f_len(4, f_varint(1, 1))
    out = bytearray(pprof_head(["", "samples", "count", "f", "timestamp_ns"], [f_varint(1, 1) + line * nlines]))
    for i in range(nsamples):
        out += f_len(2, packed(1, [1]) + packed(2, [1]) + f_len(3, f_varint(1, 4) + f_varint(3, i + 1)))
    with open(os.path.join(d, "pprof-timed-inline.pb"), "wb") as f:
        f.write(out)


def pprof_int64(d):
    """Two samples whose values sum past INT64_MAX, a third near INT64_MIN (raw protobuf)."""
    locs = [f_varint(1, 1) + f_len(4, f_varint(1, 1)), f_varint(1, 2) + f_len(4, f_varint(1, 1))]
    out = bytearray(pprof_head(["", "samples", "count", "f"], locs))
    big = (1 << 63) - 50
    out += f_len(2, packed(1, [1]) + packed(2, [big]))
    out += f_len(2, packed(1, [2]) + packed(2, [big]))
    out += f_len(2, packed(1, [1, 2]) + packed(2, [100]))
    with open(os.path.join(d, "pprof-int64.pb"), "wb") as f:
        f.write(out)


def perf_data_header(attr, data):
    """A perf.data file: header, one attribute without ids, the data section, no features."""
    attr_off = 104
    attr_sz = len(attr) + 16
    data_off = attr_off + attr_sz
    hdr = b"PERFILE2" + struct.pack("<Q", 104) + struct.pack("<Q", attr_sz)
    hdr += struct.pack("<QQ", attr_off, attr_sz) + struct.pack("<QQ", data_off, len(data))
    hdr += struct.pack("<QQ", 0, 0) + bytes(32)  # event_types, features
    return hdr + attr + struct.pack("<QQ", 0, 0) + data


def perf_attr(sample_type):
    # struct perf_event_attr, PERF_ATTR_SIZE_VER7 (128 bytes): software cpu-clock
    a = bytearray(128)
    struct.pack_into("<IIQQQQQ", a, 0, 1, 128, 0, 1000000, sample_type, 0, 0)
    return bytes(a)


def perfdata_zstd(d):
    """100 PERF_RECORD_COMPRESSED records of about 6 KB, each 60 MiB of FINISHED_ROUND records
    once decompressed: 6 GiB of records from 600 KB."""
    payload = struct.pack("<IHH", 68, 0, 8) * ((60 << 20) // 8)
    z = subprocess.run(["zstd", "-19", "-c", "-q"], input=payload, stdout=subprocess.PIPE, check=True).stdout
    size = 8 + len(z)
    pad = (-size) % 8
    rec = struct.pack("<IHH", 81, 0, size + pad) + z + bytes(pad)
    data = rec * (100)
    with open(os.path.join(d, "perfdata-zstd.data"), "wb") as f:
        f.write(perf_data_header(perf_attr(1 | 2), data))  # IP | TID


def perfdata_zstd_samples(d):
    """PERF_RECORD_COMPRESSED records of samples without a FINISHED_ROUND: every sample waits in
    the time-ordering queue. 8 records of 16 MiB of samples each."""
    # PERF_SAMPLE_IP | TID | TIME: ip, pid/tid, time
    one = b"".join(struct.pack("<IHH", 9, 2, 32) + struct.pack("<QIIQ", 0x400000 + 16 * i, 1, 1, i)
                   for i in range(4096))
    payload = one * ((16 << 20) // len(one))
    z = subprocess.run(["zstd", "-19", "-c", "-q"], input=payload, stdout=subprocess.PIPE, check=True).stdout
    size = 8 + len(z)
    pad = (-size) % 8
    rec = struct.pack("<IHH", 81, 0, size + pad) + z + bytes(pad)
    with open(os.path.join(d, "perfdata-zstd-samples.data"), "wb") as f:
        f.write(perf_data_header(perf_attr(1 | 2 | 4), rec * 8))


def perf_data_short(d):
    """The first 60 bytes of a perf.data header."""
    with open(os.path.join(d, "perf-data-short.data"), "wb") as f:
        f.write(perf_data_header(perf_attr(1), b"")[:60])


def perf_map_huge(d):
    """16 M perf map lines (600 MB; HOSTILE_PERFMAP_LINES others), as a process could write to
    /tmp/perf-PID.map."""
    n = int(os.environ.get("HOSTILE_PERFMAP_LINES", 16 << 20))
    with open(os.path.join(d, "perf-map-huge.map"), "w") as f:
        step = 1 << 16
        for base in range(0, n, step):
            f.write("".join("%x 10 jitted_function_%d\n" % (0x10000000 + 16 * i, i)
                            for i in range(base, min(n, base + step))))


def perf_map_long_name(d):
    """A perf map line whose name is 2 MiB long, between two ordinary lines."""
    with open(os.path.join(d, "perf-map-long-name.map"), "w") as f:
        f.write("1000 10 before\n")
        f.write("2000 10 " + "x" * (2 << 20) + "\n")
        f.write("3000 10 after\n")


def jitdump_zero_size(d):
    """A jitdump header, one CODE_LOAD, then a record whose size is 0."""
    hdr = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 1, 0, 0)
    name = b"loaded\0"
    code = b"\x90" * 16
    body = struct.pack("<IIQQQQ", 1, 1, 0x10000, 0x10000, len(code), 1) + name + code
    load = struct.pack("<IIQ", 0, 16 + len(body), 1) + body
    zero = struct.pack("<IIQ", 0, 0, 2)
    with open(os.path.join(d, "jitdump-zero-size.dump"), "wb") as f:
        f.write(hdr + load + zero + load)


def folded_counts(d):
    """Folded lines with a count of 2^62, and of -5."""
    with open(os.path.join(d, "folded-big-count.folded"), "w") as f:
        f.write("main;a 1\nmain;b %d\nmain;c 4611686018427387904\n" % (1 << 62))
    with open(os.path.join(d, "folded-negative-count.folded"), "w") as f:
        f.write("main;a 1\nmain;b 2\nmain;c -5\n")


def folded_gzip(d):
    """Folded text, gzipped."""
    text = "".join("main;work;f%d %d\n" % (i % 7, i + 1) for i in range(100)).encode()
    gzip_stream(os.path.join(d, "folded.folded.gz"), [text])


def folded_inline(d):
    """One folded line of 1,000,000 inlined frames (6 MB)."""
    n = 1000000
    with open(os.path.join(d, "folded-inline.folded"), "w") as f:
        f.write("main;" + "f_[i];" * n + "leaf 1\n")


def folded_bomb(d):
    """1 GiB of folded lines, gzipped: about 1 MB."""
    line = b"main;a;b;c 1\n" * 80000
    n = (1 << 30) // len(line)
    gzip_stream(os.path.join(d, "folded-bomb.folded.gz"), (line for _ in range(n)))


def perf_script_bomb(d):
    """1 GiB of perf script text (one sample over and over), gzipped: about 1 MB."""
    block = (b"prog 123 [000] 1.000000: cpu-clock:\n"
             b"\t          401000 leaf+0x10 (/bin/prog)\n"
             b"\t          402000 main+0x20 (/bin/prog)\n\n") * 8000
    n = (1 << 30) // len(block)
    gzip_stream(os.path.join(d, "perf-script-bomb.txt.gz"), (block for _ in range(n)))


def speedscope_evented(d):
    """A speedscope evented profile that opens one frame 65,536 deep, a unit of time apart, then
    closes it: 131,072 events (4.5 MB) whose intervals' stacks hold 4 G frames in all
    (HOSTILE_SPEEDSCOPE_REPEAT times over, one after the other)."""
    depth, n = 65536, int(os.environ.get("HOSTILE_SPEEDSCOPE_REPEAT", 1))
    with open(os.path.join(d, "speedscope-evented.json"), "w") as f:
        f.write('{"$schema":"https://www.speedscope.app/file-format-schema.json",'
                '"shared":{"frames":[{"name":"f"}]},"profiles":[{"type":"evented","name":"deep",'
                '"unit":"none","startValue":0,"endValue":%d,"events":[' % (2 * depth * n))
        f.write(",".join('{"type":"%s","frame":0,"at":%d}' % ("O" if t % (2 * depth) < depth else "C", t)
                         for t in range(2 * depth * n)))
        f.write("]}]}\n")


def fuzz_seeds(d):
    """Small seeds of these shapes for the fuzz corpora, in DIR/FORMAT/ (tests/fuzz/corpus/)."""
    def put(fmt, name, data):
        os.makedirs(os.path.join(d, fmt), exist_ok=True)
        with open(os.path.join(d, fmt, name), "wb") as f:
            f.write(data)

    def made_by(fn, name):
        """what fn writes into a scratch directory as name"""
        tmp = os.path.join(d, ".tmp")
        os.makedirs(tmp, exist_ok=True)
        fn(tmp)
        with open(os.path.join(tmp, name), "rb") as f:
            data = f.read()
        os.remove(os.path.join(tmp, name))
        os.rmdir(tmp)
        return data

    put("folded", "count-negative.folded", b"main;a 1\nmain;b 2\nmain;c -5\n")
    put("folded", "count-2e62.folded", b"main;a 4611686018427387904\nmain;b 9223372036854775807\n")
    put("folded", "count-too-large.folded", b"main;a 1\nmain;b 9223372036854775808\n")
    put("folded", "frames-over-cap.folded", b"main;" + b"f;" * 65540 + b"g_[i];leaf_[i] 3\n")
    # pprof: a tiny gzip bomb (8 MiB in one string), stacks that draw to 268 M frames, INT64_MAX
    head = pprof_head(["", "samples", "count", "f"], [])
    put("pprof", "gzip-bomb-tiny.pb.gz", gzip_bytes(head + key(6, 2) + varint(8 << 20) + bytes(8 << 20)))
    line = f_len(4, f_varint(1, 1))
    locs = [f_varint(1, 1) + line * 4096] + [f_varint(1, i) + f_varint(3, 0x1000 + 16 * i) + line for i in (2, 3)]
    out = bytearray(pprof_head(["", "samples", "count", "f"], locs))
    for i in (2, 3):
        out += f_len(2, f_len(1, b"\x01" * 65535 + varint(i)) + packed(2, [1]))
    put("pprof", "inline-deep.pb.gz", gzip_bytes(bytes(out)))
    put("pprof", "int64-values.pb", made_by(pprof_int64, "pprof-int64.pb"))
    # perf.data: one COMPRESSED record of 96 MiB of FINISHED_ROUND, a header cut short
    payload = struct.pack("<IHH", 68, 0, 8) * ((96 << 20) // 8)
    z = subprocess.run(["zstd", "-19", "-c", "-q"], input=payload, stdout=subprocess.PIPE, check=True).stdout
    size = 8 + len(z)
    rec = struct.pack("<IHH", 81, 0, size + (-size) % 8) + z + bytes((-size) % 8)
    put("perf-data", "compressed-bomb.data", perf_data_header(perf_attr(1 | 2), rec))
    put("perf-data", "short-header.data", made_by(perf_data_short, "perf-data-short.data"))
    # jitdump: a record of size 0; perf map: a name over the cap
    put("jitdump", "zero-size.dump", made_by(jitdump_zero_size, "jitdump-zero-size.dump"))
    put("perf-map", "long-name.map", b"1000 10 before\n2000 10 " + b"x" * 5000 + b"\n3000 10 after\n")


def gzip_bytes(data):
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + 15)
    return z.compress(data) + z.flush()


ALL = {
    "gzip-bomb": gzip_bomb,
    "gzip-bomb-pprof": gzip_bomb_pprof,
    "pprof-deep": pprof_deep,
    "pprof-inline": pprof_inline,
    "pprof-timed-inline": pprof_timed_inline,
    "pprof-int64": pprof_int64,
    "perfdata-zstd": perfdata_zstd,
    "perfdata-zstd-samples": perfdata_zstd_samples,
    "perf-data-short": perf_data_short,
    "perf-map-huge": perf_map_huge,
    "perf-map-long-name": perf_map_long_name,
    "jitdump-zero-size": jitdump_zero_size,
    "folded-counts": folded_counts,
    "folded-gzip": folded_gzip,
    "folded-inline": folded_inline,
    "folded-bomb": folded_bomb,
    "perf-script-bomb": perf_script_bomb,
    "speedscope-evented": speedscope_evented,
}
# not made by default: DIR/FORMAT/ seeds for tests/fuzz/corpus/
SEEDS = {"fuzz-seeds": fuzz_seeds}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name in sys.argv[2:] or ALL:
        if name not in ALL and name not in SEEDS:
            sys.exit("unknown input '%s' (%s)" % (name, ", ".join(list(ALL) + list(SEEDS))))
        (ALL.get(name) or SEEDS[name])(d)


if __name__ == "__main__":
    main()
