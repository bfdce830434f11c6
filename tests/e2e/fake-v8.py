"""Writes the C source of a fake binary that carries V8's metadata: the v8dbg_ symbols hotstack's
V8 reader reads, with Node.js 20's (V8 11.3's) values, V8's version and the builtins' symbols,
and a main() that spins for a second. For tests/e2e/v8-tables.sh.

usage: fake-v8.py OUT.c [NAME=VALUE | NAME=- | VERSION=MAJOR.MINOR]...
NAME=VALUE sets v8dbg_NAME, NAME=- leaves it out.
"""
import sys

# V8 11.3's values; None: a symbol with no initialised value (in .bss)
SYMS = {
    "CodeKindBaseline": 11, "CodeKindFieldMask": 15, "CodeKindFieldShift": None,
    "CodeKindInterpretedFunction": 10, "ConsStringTag": 1,
    "DeoptimizationDataInlinedFunctionCountIndex": 1, "DeoptimizationDataInliningPositionsIndex": 7,
    "DeoptimizationDataLiteralArrayIndex": 2, "DeoptimizationDataSharedFunctionInfoIndex": 6,
    "ExternalStringTag": 2, "FirstNonstringType": 128, "HeapObjectTag": 1, "HeapObjectTagMask": 3,
    "InterpreterBytecodeArrayRegister": 12, "InterpreterBytecodeOffsetRegister": 9, "OneByteStringTag": 8,
    "SeqStringTag": None, "SlicedStringTag": 3, "SmiShiftSize": 31, "SmiTagMask": 1, "SmiValueShift": 1,
    "StringEncodingMask": 8, "StringRepresentationMask": 7, "SystemPointerSize": 8, "TaggedSize": 8,
    "ThinStringTag": 5,
    "class_BytecodeArray__data__uintptr_t": 54, "class_Code__bytecode_offset_table__ByteArray": 24,
    "class_Code__deoptimization_data__FixedArray": 16, "class_Code__source_position_table__ByteArray": 24,
    "class_ConsString__first__String": 16, "class_ConsString__second__String": 24,
    "class_ExternalString__resource__Object": 16, "class_FixedArrayBase__length__SMI": 8,
    "class_FixedArray__data__uintptr_t": 16, "class_HeapObject__map__Map": None,
    "class_JSFunction__shared__SharedFunctionInfo": 24, "class_Map__instance_type__uint16_t": 12,
    "class_Script__line_ends__Object": 56, "class_Script__name__Object": 16, "class_Script__source__Object": 8,
    "class_SeqOneByteString__chars__char": 16, "class_SeqTwoByteString__chars__char": 16,
    "class_SharedFunctionInfo__function_data__Object": 8,
    "class_SharedFunctionInfo__name_or_scope_info__Object": 16,
    "class_SharedFunctionInfo__raw_function_token_offset__int16_t": 44,
    "class_SharedFunctionInfo__script_or_debug_info__HeapObject": 32, "class_SlicedString__offset__SMI": 24,
    "class_SlicedString__parent__String": 16, "class_String__length__int32_t": 12,
    "class_ThinString__actual__String": 16,
    "frametype_BaselineFrame": 14, "frametype_BuiltinExitFrame": 25, "frametype_BuiltinFrame": 24,
    "frametype_ConstructEntryFrame": 2, "frametype_ConstructFrame": 23, "frametype_EntryFrame": 1,
    "frametype_ExitFrame": 3, "frametype_InternalFrame": 22, "frametype_InterpretedFrame": 13,
    "frametype_MaglevFrame": 15, "frametype_StubFrame": 17, "frametype_TurbofanFrame": 16,
    "off_fp_bytecode_array": -32, "off_fp_bytecode_offset": -40, "off_fp_context": -8,
    "off_fp_context_or_frame_type": -8, "off_fp_function": -16,
    "scopeinfo_idx_first_vars": 3, "scopeinfo_idx_ncontextlocals": 2, "scopeinfo_idx_nparams": 1,
    "type_ByteArray__BYTE_ARRAY_TYPE": 190, "type_BytecodeArray__BYTECODE_ARRAY_TYPE": 191,
    "type_Code__CODE_TYPE": 245, "type_FixedArray__FIXED_ARRAY_TYPE": 175,
    "type_InstructionStream__INSTRUCTION_STREAM_TYPE": 252, "type_JSFunction__JS_FUNCTION_TYPE": 2066,
    "type_ScopeInfo__SCOPE_INFO_TYPE": 261, "type_Script__SCRIPT_TYPE": 167,
    "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE": 262, "type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE": 240,
}


def main():
    out, args = sys.argv[1], sys.argv[2:]
    syms, version = dict(SYMS), (11, 3)
    for a in args:
        name, _, value = a.partition("=")
        if name == "VERSION":
            version = tuple(int(x) for x in value.split("."))
        elif value == "-":
            syms.pop(name, None)
        else:
            syms[name] = int(value)
    lines = ["/* written by tests/e2e/fake-v8.py */", "#include <time.h>"]
    for name, value in sorted(syms.items()):
        lines.append("int v8dbg_%s%s;" % (name, "" if value is None else " = %d" % value))
    for part, value in zip(("major", "minor", "build", "patch"), version + (244, 8)):
        lines.append('int v8_version_%s __asm__("_ZN2v88internal7Version%d%s_E") = %d;' % (part, len(part) + 1, part, value))
    lines += [
        '__asm__(".text\\n.globl v8_Default_embedded_blob_code_\\nv8_Default_embedded_blob_code_:\\n"',
        '        ".skip 4096, 0xcc\\n");',
        'const unsigned v8_Default_embedded_blob_code_size_ = 4096;',
        "int main(void)",
        "{",
        "\tstruct timespec t0, t;",
        "\tclock_gettime(CLOCK_MONOTONIC, &t0);",
        "\tdo",
        "\t\tclock_gettime(CLOCK_MONOTONIC, &t);",
        "\twhile (t.tv_sec - t0.tv_sec < 2);",
        "\treturn 0;",
        "}",
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


main()
