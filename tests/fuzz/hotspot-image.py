#!/usr/bin/env python3
"""Writes a seed for fuzz-hotspot-tables: the VMStructs tables of a running JVM, only the types
the reader keeps (and their fields' types) and the constants it reads, laid out again as one memory image at 0x100000 (the
fuzz target's format, tests/fuzz/fuzz-hotspot-tables.c): 20 words of symbol values, then the
four tables and their strings, then one zeroed word per static field for its value (the
version's four ints keep theirs). Usage: hotspot-image.py PID OUT (as root, the JVM running)."""
import struct
import subprocess
import sys

BASE = 0x100000
KEPT = set('''Abstract_VM_Version AbstractInterpreter Array<Method*> CodeBlob CodeCache CodeHeap
CompiledMethod ConstantPool ConstMethod GrowableArray<int> GrowableArrayBase HeapBlock
HeapBlock::Header InstanceKlass JavaFrameAnchor JavaThread Klass Method nmethod OSThread PcDesc
StubQueue StubRoutines Symbol Thread ThreadsList ThreadsSMRSupport VirtualSpace'''.split())
CONSTS = set('''oopSize InvocationEntryBci CodeBlobKind::Nmethod ConstMethod::_has_linenumber_table
ConstMethodFlags::_misc_has_linenumber_table frame::interpreter_frame_sender_sp_offset
frame::interpreter_frame_last_sp_offset'''.split())
SYMS = '''gHotSpotVMStructs gHotSpotVMStructEntryArrayStride gHotSpotVMStructEntryTypeNameOffset
gHotSpotVMStructEntryFieldNameOffset gHotSpotVMStructEntryTypeStringOffset
gHotSpotVMStructEntryIsStaticOffset gHotSpotVMStructEntryOffsetOffset
gHotSpotVMStructEntryAddressOffset gHotSpotVMTypes gHotSpotVMTypeEntryArrayStride
gHotSpotVMTypeEntryTypeNameOffset gHotSpotVMTypeEntrySizeOffset gHotSpotVMIntConstants
gHotSpotVMIntConstantEntryArrayStride gHotSpotVMIntConstantEntryNameOffset
gHotSpotVMIntConstantEntryValueOffset gHotSpotVMLongConstants
gHotSpotVMLongConstantEntryArrayStride gHotSpotVMLongConstantEntryNameOffset
gHotSpotVMLongConstantEntryValueOffset'''.split()


def main(pid, out):
    lib = base = None
    for line in open('/proc/%d/maps' % pid):
        p = line.split()
        if len(p) >= 6 and p[5].endswith('/libjvm.so') and int(p[2], 16) == 0:
            base, lib = int(p[0].split('-')[0], 16), p[5]
            break
    sym = {}
    for line in subprocess.check_output(['nm', '-D', lib]).decode().splitlines():
        p = line.split()
        if len(p) == 3 and p[2].split('@')[0] in SYMS:
            sym[p[2].split('@')[0]] = int(p[0], 16) + base
    mem = open('/proc/%d/mem' % pid, 'rb')

    def rd(a, n):
        mem.seek(a)
        return mem.read(n)

    def u64(a):
        return struct.unpack('<Q', rd(a, 8))[0]

    def s(a):
        return rd(a, 256).split(b'\0')[0] if a else None

    def q(n):
        return u64(sym[n])

    def entries(table, stride, names):
        i = 0
        while True:
            e = u64(sym[table]) + i * q(stride)
            first = s(u64(e + q(names[0])))
            if first is None:
                return
            yield e
            i += 1

    o = [q(n) for n in SYMS[2:8]]
    fields = []
    for e in entries('gHotSpotVMStructs', 'gHotSpotVMStructEntryArrayStride', ['gHotSpotVMStructEntryTypeNameOffset']):
        t = s(u64(e + o[0]))
        if t.decode() in KEPT:
            st = struct.unpack('<i', rd(e + o[3], 4))[0]
            fields.append((t, s(u64(e + o[1])), s(u64(e + o[2])), st, u64(e + o[4]), u64(e + o[5])))
    types = [(s(u64(e + q('gHotSpotVMTypeEntryTypeNameOffset'))), u64(e + q('gHotSpotVMTypeEntrySizeOffset')))
             for e in entries('gHotSpotVMTypes', 'gHotSpotVMTypeEntryArrayStride', ['gHotSpotVMTypeEntryTypeNameOffset'])]
    used = KEPT | set(f[2].decode().replace('const ', '') for f in fields if f[2])
    types = [t for t in types if t[0].decode() in used]
    ints = [(s(u64(e + q('gHotSpotVMIntConstantEntryNameOffset'))), u64(e + q('gHotSpotVMIntConstantEntryValueOffset')) & 0xffffffff)
            for e in entries('gHotSpotVMIntConstants', 'gHotSpotVMIntConstantEntryArrayStride', ['gHotSpotVMIntConstantEntryNameOffset'])]
    longs = [(s(u64(e + q('gHotSpotVMLongConstantEntryNameOffset'))), u64(e + q('gHotSpotVMLongConstantEntryValueOffset')))
             for e in entries('gHotSpotVMLongConstants', 'gHotSpotVMLongConstantEntryArrayStride', ['gHotSpotVMLongConstantEntryNameOffset'])]

    ints = [c for c in ints if c[0].decode() in CONSTS]
    longs = [c for c in longs if c[0].decode() in CONSTS]
    # the image: symbols, tables (48-byte struct entries, 16-byte others), strings, statics
    img = bytearray(160)
    strings = {}
    fixups = []  # (offset in img, string)

    def put_str(at, v):
        if v is not None:
            fixups.append((at, v))

    structs_at = len(img)
    for t, f, ts, st, off, addr in fields + [(None,) * 6]:
        e = bytearray(48)
        if t is not None:
            struct.pack_into('<iQ', e, 24, st, off)
        img += e
        if t is not None:
            at = len(img) - 48
            put_str(at, t), put_str(at + 8, f), put_str(at + 16, ts)
    types_at = len(img)
    for n, size in types + [(None, 0)]:
        img += struct.pack('<QQ', 0, size)
        put_str(len(img) - 16, n)
    ints_at = len(img)
    for n, v in ints + [(None, 0)]:
        img += struct.pack('<QQ', 0, v)
        put_str(len(img) - 16, n)
    longs_at = len(img)
    for n, v in longs + [(None, 0)]:
        img += struct.pack('<QQ', 0, v)
        put_str(len(img) - 16, n)
    for at, v in fixups:
        if v not in strings:
            strings[v] = len(img)
            img += v + b'\0'
        struct.pack_into('<Q', img, at, BASE + strings[v])
    for i, (t, f, ts, st, off, addr) in enumerate(fields):
        if st:
            value = rd(addr, 8) if t == b'Abstract_VM_Version' and f.startswith(b'_vm_') else bytes(8)
            struct.pack_into('<Q', img, structs_at + i * 48 + 40, BASE + len(img))
            img += value
    vals = [BASE + structs_at, 48, 0, 8, 16, 24, 32, 40, BASE + types_at, 16, 0, 8,
            BASE + ints_at, 16, 0, 8, BASE + longs_at, 16, 0, 8]
    struct.pack_into('<20Q', img, 0, *vals)
    open(out, 'wb').write(img)


main(int(sys.argv[1]), sys.argv[2])
