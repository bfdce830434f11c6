/* CPython's layouts, per minor version, for x86_64 release builds (no Py_DEBUG, no
 * Py_TRACE_REFS, not free-threaded): the offsets the frame walk needs and those of the code
 * objects, strings and bytes it leads to. Taken from each version's DWARF (gdb ptype /o of
 * _PyRuntimeState, PyInterpreterState, PyThreadState, _PyCFrame, _PyInterpreterFrame,
 * PyFrameObject, PyCodeObject, PyASCIIObject, PyCompactUnicodeObject, PyBytesObject); the live
 * tests in tests/unit/test-python.c prove them on real interpreters. */
#include "runtime/python/python.h"

#define N HS_PY_NONE

/* PyASCIIObject and PyCompactUnicodeObject lost wstr (and with it 8 bytes each) in 3.12; the
 * character data follows the struct, so its size is where the characters are. */
#define UNICODE_WSTR .unicode_state = 32, .unicode_length = 16, .unicode_ascii_data = 48, .unicode_compact_data = 72
#define UNICODE_NO_WSTR .unicode_state = 32, .unicode_length = 16, .unicode_ascii_data = 40, .unicode_compact_data = 56
#define BYTES .bytes_size = 16, .bytes_data = 32

/* one version a block, its fields grouped as in the structs */
/* clang-format off */
static const struct hs_py_interp layouts[] = {
	{
		/* no _PyRuntime (interp_head itself, as 3.6); thread states without a prev; names are
		 * str (PyStringObject: its characters at 36); line steps unsigned */
		.version = HS_PY_VERSION(2, 7),
		.info.off = {
			.runtime_interp_head = 0, .interp_tstate_head = 8,
			.tstate_next = 0, .tstate_thread_id = 144, .tstate_frame = 16,
			.cframe_current_frame = N,
			.frame_back = 24, .frame_code = 32, .frame_instr = 120, .frame_owner = N,
			.code_firstlineno = 96, .code_code = N,
			.instr = HS_PY_INSTR_LASTI_BYTES, .entry = HS_PY_ENTRY_EVERY,
		},
		.code = {
			.code_name = 88, .code_qualname = N, .code_filename = 80,
			.code_linetable = 104, /* co_lnotab */
			.code_firstlineno = 96, .code_size = 112,
			UNICODE_WSTR, .bytes_size = 16, .bytes_data = 36, .names_bytes = true,
		},
	},
	{
		/* no _PyRuntime: "runtime" is the static interp_head itself (find.c), the head at
		 * its offset 0 */
		.version = HS_PY_VERSION(3, 6),
		.info.off = {
			.runtime_interp_head = 0, .interp_tstate_head = 8,
			.tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 24,
			.cframe_current_frame = N,
			.frame_back = 24, .frame_code = 32, .frame_instr = 120, .frame_owner = N,
			.code_firstlineno = 36, .code_code = N,
			.instr = HS_PY_INSTR_LASTI_BYTES, .entry = HS_PY_ENTRY_EVERY,
		},
		.code = {
			.code_name = 104, .code_qualname = N, .code_filename = 96,
			.code_linetable = 112, /* co_lnotab */
			.code_firstlineno = 36, .code_size = 120,
			UNICODE_WSTR, BYTES,
		},
	},
	{
		/* _PyRuntime's interpreters 8 bytes nearer its start; the code object's fields in
		 * another order */
		.version = HS_PY_VERSION(3, 7),
		.info.off = {
			.runtime_interp_head = 24, .interp_tstate_head = 8,
			.tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = N,
			.frame_back = 24, .frame_code = 32, .frame_instr = 104, .frame_owner = N,
			.code_firstlineno = 36, .code_code = N,
			.instr = HS_PY_INSTR_LASTI_BYTES, .entry = HS_PY_ENTRY_EVERY,
		},
		.code = {
			.code_name = 104, .code_qualname = N, .code_filename = 96,
			.code_linetable = 112, /* co_lnotab */
			.code_firstlineno = 36, .code_size = 120,
			UNICODE_WSTR, BYTES,
		},
	},
	{
		.version = HS_PY_VERSION(3, 8),
		.info.off = {
			.runtime_interp_head = 32, .interp_tstate_head = 8,
			.tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = N,
			.frame_back = 24, .frame_code = 32, .frame_instr = 104, .frame_owner = N,
			.code_firstlineno = 40, .code_code = N,
			.instr = HS_PY_INSTR_LASTI_BYTES, .entry = HS_PY_ENTRY_EVERY,
		},
		.code = {
			.code_name = 112, .code_qualname = N, .code_filename = 104,
			.code_linetable = 120, /* co_lnotab */
			.code_firstlineno = 40, .code_size = 128,
			UNICODE_WSTR, BYTES,
		},
	},
	{
		/* 3.9 moved nothing the walk reads */
		.version = HS_PY_VERSION(3, 9),
		.info.off = {
			.runtime_interp_head = 32, .interp_tstate_head = 8,
			.tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = N,
			.frame_back = 24, .frame_code = 32, .frame_instr = 104, .frame_owner = N,
			.code_firstlineno = 40, .code_code = N,
			.instr = HS_PY_INSTR_LASTI_BYTES, .entry = HS_PY_ENTRY_EVERY,
		},
		.code = {
			.code_name = 112, .code_qualname = N, .code_filename = 104,
			.code_linetable = 120, /* co_lnotab */
			.code_firstlineno = 40, .code_size = 128,
			UNICODE_WSTR, BYTES,
		},
	},
	{
		/* f_lasti counts 2-byte code units from 3.10; co_linetable replaces co_lnotab at
		 * the same place (PEP 626) */
		.version = HS_PY_VERSION(3, 10),
		.info.off = {
			.runtime_interp_head = 32, .interp_tstate_head = 8,
			.tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
			.cframe_current_frame = N,
			.frame_back = 24, .frame_code = 32, .frame_instr = 96, .frame_owner = N,
			.code_firstlineno = 40, .code_code = N,
			.instr = HS_PY_INSTR_LASTI_UNITS, .entry = HS_PY_ENTRY_EVERY,
		},
		.code = {
			.code_name = 112, .code_qualname = N, .code_filename = 104,
			.code_linetable = 120,
			.code_firstlineno = 40, .code_size = 128,
			UNICODE_WSTR, BYTES,
		},
	},
	{
		/* frames live in the thread's data stack (_PyInterpreterFrame), reached through
		 * tstate->cframe; one eval loop runs many frames, the first with is_entry set */
		.version = HS_PY_VERSION(3, 11),
		.info.off = {
			.runtime_interp_head = 40, .interp_tstate_head = 16,
			.tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 56,
			.cframe_current_frame = 8,
			.frame_back = 48, .frame_code = 32, .frame_instr = 56, .frame_owner = 68,
			.code_firstlineno = 72, .code_code = 184,
			.instr = HS_PY_INSTR_PTR, .entry = HS_PY_ENTRY_FLAG,
		},
		.code = {
			.code_name = 120, .code_qualname = 128, .code_filename = 112,
			.code_linetable = 136,
			.code_firstlineno = 72, .code_size = 144,
			UNICODE_WSTR, BYTES,
		},
	},
	{
		/* each run of the eval loop starts with a shim frame owned by the C stack
		 * (FRAME_OWNED_BY_CSTACK = 3) */
		.version = HS_PY_VERSION(3, 12),
		.info.off = {
			.runtime_interp_head = 40, .interp_tstate_head = 72,
			.tstate_next = 8, .tstate_thread_id = 136, .tstate_frame = 56,
			.cframe_current_frame = 0,
			.frame_back = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70,
			.code_firstlineno = 68, .code_code = 192,
			.instr = HS_PY_INSTR_PTR, .entry = HS_PY_ENTRY_SHIM, .owner_cstack = 3,
		},
		.code = {
			.code_name = 120, .code_qualname = 128, .code_filename = 112,
			.code_linetable = 136,
			.code_firstlineno = 68, .code_size = 144,
			UNICODE_NO_WSTR, BYTES,
		},
	},
	{
		/* no _PyCFrame: tstate->current_frame; f_executable may be a non-code object (the
		 * shim's is None). hs_py_find() checks this against the process's _Py_DebugOffsets */
		.version = HS_PY_VERSION(3, 13),
		.info.off = {
			.runtime_interp_head = 632, .interp_tstate_head = 7344,
			.tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 72,
			.cframe_current_frame = N,
			.frame_back = 8, .frame_code = 0, .frame_instr = 56, .frame_owner = 70,
			.code_firstlineno = 68, .code_code = 200,
			.instr = HS_PY_INSTR_PTR, .entry = HS_PY_ENTRY_SHIM, .owner_cstack = 3,
		},
		.code = {
			.code_name = 120, .code_qualname = 128, .code_filename = 112,
			.code_linetable = 136,
			.code_firstlineno = 68, .code_size = 144,
			UNICODE_NO_WSTR, BYTES,
		},
	},
};
/* clang-format on */

const struct hs_py_interp *hs_py_layout(unsigned version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}
