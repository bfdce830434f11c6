/* Merging Python frames into native stacks (merge.h). */
#include "runtime/python/merge.h"

#include <string.h>

#include "util/util.h"

/* The interpreter's own frames between a Python function and the next, or between the
 * interpreter's start and the first: calls, vectorcall, generators resumed, the run of a
 * module. Matched on the name up to a compiler suffix (".constprop.0", ".lto_priv.0", ".cold").
 * Builtins a Python function calls (builtin_sum, list_sort) and extension code stay. An import
 * and an asyncio task step are machinery too: the Python frames either side say what ran. */
/* clang-format off */
static const char *const plumbing_exact[] = {
	"PyObject_Call", "PyObject_CallObject", "PyObject_CallOneArg", "PyObject_CallNoArgs",
	"PyObject_CallFunction", "PyObject_CallFunctionObjArgs", "PyObject_CallMethod",
	"PyObject_CallMethodObjArgs", "PyObject_VectorcallMethod", "PyObject_Vectorcall",
	"PyObject_VectorcallDict", "PyVectorcall_Call", "PyIter_Next", "PyIter_Send", "call_function",
	"do_call_core", "function_code_fastcall", "object_vacall", "callmethod", "vectorcall_method",
	"vectorcall_unbound", "vectorcall_maybe", "type_call", "method_vectorcall", "run_mod",
	"run_eval_code_obj", "run_pyc_file", "py_trampoline_evaluator", "builtin_exec_impl",
	"builtin_exec", "exec_code_in_module", "gen_iternext", "gen_send",
	"gen_send_ex", "gen_send_ex2", "coro_wrapper_iternext", "slot_mp_subscript",
	"slot_sq_item", "slot_nb_add", "call_unbound", "call_unbound_noarg", "call_method",
	"lookup_maybe_method", "vgetargs1_impl", "PyEval_EvalCode", "PyEval_EvalCodeEx",
	"property_descr_get", "wrapperdescr_call", "wrapper_call", "partial_vectorcall",
	"partial_call", "partial_call_impl", "bounded_lru_cache_wrapper", "lru_cache_call",
	"context_run", "meth_vectorcall", "PyCFunction_Call", "builtin___build_class__",
	/* 2.7, 3.6 and 3.7 */
	"function_call", "fast_function", "method_call", "call_function_tail", "instancemethod_call",
	"ext_do_call", "PyEval_CallObjectWithKeywords", "PyEval_EvalFrameEx", "exec_statement",
	/* imports */
	"builtin___import__", "builtin___import___impl", "import_find_and_load",
	/* asyncio's C tasks stepping coroutines */
	"TaskStepMethWrapper_call", "task_step", "task_step_impl", "task_step_handle_result_impl",
	"task_wakeup", "task_wakeup_impl", "PyGen_am_send", "gen_am_send", "FutureIter_am_send",
	"FutureIter_iternext",
};

/* ...and by prefix. */
static const char *const plumbing_prefix[] = {
	"_PyEval_", "PyEval_EvalFrame", "_PyFunction_", "_PyObject_Call", "_PyObject_Vectorcall",
	"_PyObject_FastCall", "_PyObject_MakeTpCall", "_PyVectorcall_", "_PyCFunction_",
	"_PyMethodDef_Raw", "cfunction_call", "cfunction_vectorcall", "_PyMethodDescr_",
	"method_vectorcall_", "_PyRun_", "PyRun_", "pymain_", "_PyGen_", "_PyCoro_", "_PyPerfTrampoline",
	"_Py_call_", "slot_tp_", "_PyStack_", "_PyEval_Vector", "PyImport_", "_PyImport_",
};
/* clang-format on */

/* Py_RunMain is where a program starts running Python: it stays, as the base the Python
 * frames stand on; thread_run/t_bootstrap likewise for threads. */
static const char *const kept[] = {"Py_RunMain", "thread_run", "t_bootstrap", "Py_BytesMain"};

static size_t base_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot ? (size_t)(dot - name) : strlen(name);
}

static bool is(const char *name, size_t n, const char *word)
{
	return strlen(word) == n && !strncmp(name, word, n);
}

enum hs_py_native hs_py_native_class(const char *name, bool jit)
{
	size_t n;

	if (!name)
		return HS_PY_NATIVE_OTHER;
	if (jit)
		return !strncmp(name, "py::", 4) ? HS_PY_NATIVE_TRAMPOLINE : HS_PY_NATIVE_OTHER;
	n = base_len(name);
	if (is(name, n, "_PyEval_EvalFrameDefault"))
		return HS_PY_NATIVE_EVAL;
	for (size_t i = 0; i < HS_ARRAY_SIZE(kept); i++)
		if (is(name, n, kept[i]))
			return HS_PY_NATIVE_OTHER;
	for (size_t i = 0; i < HS_ARRAY_SIZE(plumbing_exact); i++)
		if (is(name, n, plumbing_exact[i]))
			return HS_PY_NATIVE_PLUMBING;
	for (size_t i = 0; i < HS_ARRAY_SIZE(plumbing_prefix); i++)
		if (!strncmp(name, plumbing_prefix[i], strlen(plumbing_prefix[i])))
			return HS_PY_NATIVE_PLUMBING;
	return HS_PY_NATIVE_OTHER;
}

/* Python frames [from, to) into out at *n. */
static void put_frames(int32_t *out, size_t *n, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++)
		out[(*n)++] = -1 - (int32_t)j;
}

/* The Python frames from next on, and the cut after them when there is one. */
static void put_rest(int32_t *out, size_t *n, size_t *next, size_t npy, bool cut)
{
	put_frames(out, n, *next, npy);
	*next = npy;
	if (cut)
		out[(*n)++] = HS_PY_MERGE_CUT;
}

size_t hs_py_merge(const uint8_t *native, size_t nnative, const bool *entry, size_t npy, bool cut, bool internals,
		   int32_t *out)
{
	size_t n = 0, nevals = 0, ngroups = 0, rank = 0, next = 0, bounds[HS_PY_MERGE_MAX_GROUPS + 1];
	bool complete = !cut, placed_all = false;
	ptrdiff_t offset;

	if (!npy) {
		for (size_t i = 0; i < nnative; i++)
			out[i] = (int32_t)i;
		return nnative;
	}
	/* the runs of the eval loop, innermost first: run g is frames [bounds[g], bounds[g + 1]) */
	bounds[0] = 0;
	for (size_t j = 0; j < npy && ngroups < HS_PY_MERGE_MAX_GROUPS; j++)
		if (entry[j] || j + 1 == npy)
			bounds[++ngroups] = j + 1;
	if (ngroups && bounds[ngroups] < npy)
		bounds[ngroups] = npy; /* past the cap: the outermost run takes the rest */
	for (size_t i = 0; i < nnative; i++) {
		nevals += native[i] == HS_PY_NATIVE_EVAL;
		complete &= native[i] != HS_PY_NATIVE_STOP;
	}
	/* A whole native stack pairs its eval-loop frames with the runs from the outermost in: a
	 * sample taken as a run starts or ends has one more (or one fewer) inside. A stack cut
	 * short (or a Python stack read in part) pairs them from the innermost out, and the runs
	 * left over go outside the last. */
	offset = complete ? (ptrdiff_t)ngroups - (ptrdiff_t)nevals : 0;
	for (size_t i = 0; i < nnative; i++) {
		uint8_t c = native[i];
		if (c == HS_PY_NATIVE_EVAL) {
			ptrdiff_t g = (ptrdiff_t)rank++ + offset;
			if (g >= 0 && (size_t)g < ngroups && !placed_all) {
				/* runs inside the first one paired (none of their own) come first */
				size_t to = rank == nevals && !complete ? ngroups : (size_t)g + 1;
				if (bounds[to] == npy) {
					put_rest(out, &n, &next, npy, cut);
					placed_all = true;
				} else {
					put_frames(out, &n, next, bounds[to]);
					next = bounds[to];
				}
			}
			if (internals)
				out[n++] = (int32_t)i;
			continue;
		}
		if (c == HS_PY_NATIVE_STOP && !nevals && !placed_all) {
			put_rest(out, &n, &next, npy, cut);
			placed_all = true;
		}
		if (!internals && (c == HS_PY_NATIVE_PLUMBING || c == HS_PY_NATIVE_TRAMPOLINE ||
				   c == HS_PY_NATIVE_UNKNOWN || (c == HS_PY_NATIVE_JIT && rank)))
			continue;
		out[n++] = (int32_t)i;
	}
	if (!placed_all) /* no eval-loop frame took the outer runs: they go at the base */
		put_rest(out, &n, &next, npy, cut);
	return n;
}
