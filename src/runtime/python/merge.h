/* Python frames into a native stack: where each run of the eval loop's Python frames goes, and
 * which of the interpreter's own frames are left out (docs/python.md). */
#ifndef HS_PY_MERGE_H
#define HS_PY_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hs_py_native {
	HS_PY_NATIVE_OTHER = 0,  /* anything else: kept */
	HS_PY_NATIVE_EVAL,       /* _PyEval_EvalFrameDefault: a run of the eval loop */
	HS_PY_NATIVE_PLUMBING,   /* the interpreter's calling machinery between Python frames */
	HS_PY_NATIVE_TRAMPOLINE, /* a -X perf trampoline (py::NAME:FILE): the Python frame again */
	HS_PY_NATIVE_STOP,       /* the pseudo-frame that ends a stack that could not be finished */
	HS_PY_NATIVE_JIT,        /* JIT code not named yet: outside the innermost eval-loop frame,
	                         * where the interpreter's calls run, a -X perf trampoline */
	HS_PY_NATIVE_UNKNOWN,    /* [unknown]: an address in no mapping (a frame-pointer walk
	                          * through the interpreter, built without them, finds such) */
};

#define HS_PY_MERGE_MAX_GROUPS 256 /* runs of the eval loop told apart in one stack */

/* What a native frame of function name is to the merge (never HS_PY_NATIVE_STOP: the caller
 * knows its pseudo-frames); jit: in JIT code (a perf map). */
enum hs_py_native hs_py_native_class(const char *name, bool jit);

/* In the merged stack: where a Python stack read only in part (HS_PY_TRUNCATED, or stopped by
 * a frame it could not read) is cut, just outside the outermost Python frame read. */
#define HS_PY_MERGE_CUT INT32_MIN

/* Merges: native[] classes of the native frames, leaf first; entry[] for each Python frame,
 * innermost first, whether it is the outermost of its run of the eval loop; cut: the Python
 * stack was read only in part, from the innermost frame. Writes to out (room for nnative +
 * npy + 1) the merged stack, leaf first: i >= 0 for native frame i, -1 - j for Python frame j,
 * HS_PY_MERGE_CUT for the cut. Each eval-loop frame takes a run of Python frames (paired from
 * the base when the native stack is whole and the Python one too, else from the leaf); runs
 * with no eval-loop frame go next to the nearest run placed, or, with no eval-loop frame at
 * all, just inside the stop pseudo-frame (else at the base). Unless internals, plumbing,
 * trampolines, [unknown] frames, HS_PY_NATIVE_JIT outside the innermost eval-loop frame and
 * the eval-loop frames themselves are left out. Returns the merged length. */
size_t hs_py_merge(const uint8_t *native, size_t nnative, const bool *entry, size_t npy, bool cut, bool internals,
		   int32_t *out);

#endif
