/* Python frames merged into native stacks (python/merge.h): which native frames are the eval
 * loop, the interpreter's machinery or a -X perf trampoline, and where each run of the eval
 * loop's Python frames goes, for whole stacks, stacks cut short and stacks with no eval-loop
 * frame, with and without --python-internals; and the builder's Python stacks waiting for their
 * samples, forgotten at a period's end when their samples never came. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile/builder.h"
#include "runtime/python/merge.h"
#include "runtime/python/names.h"

enum {
	O = HS_PY_NATIVE_OTHER,
	E = HS_PY_NATIVE_EVAL,
	P = HS_PY_NATIVE_PLUMBING,
	T = HS_PY_NATIVE_TRAMPOLINE,
	S = HS_PY_NATIVE_STOP,
	J = HS_PY_NATIVE_JIT,
	U = HS_PY_NATIVE_UNKNOWN
};

/* native frames are 0..9, Python frames -1..-10: the merged stack as a string "k,0,-1,-2" */
static const char *merged_cut(const uint8_t *native, size_t nn, const bool *entry, size_t np, bool cut, bool internals)
{
	static char buf[256];
	int32_t out[64];
	size_t n = hs_py_merge(native, nn, entry, np, cut, internals, out), at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (out[i] == HS_PY_MERGE_CUT)
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%scut", i ? "," : "");
		else
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%d", i ? "," : "", out[i]);
	}
	return buf;
}

static const char *merged(const uint8_t *native, size_t nn, const bool *entry, size_t np, bool internals)
{
	return merged_cut(native, nn, entry, np, false, internals);
}

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(hs_py_native_class("_PyEval_EvalFrameDefault", false), E);
	assert_int_equal(hs_py_native_class("_PyEval_EvalFrameDefault.cold", false), E);
	assert_int_equal(hs_py_native_class("_PyFunction_Vectorcall", false), P);
	assert_int_equal(hs_py_native_class("PyObject_Call", false), P);
	assert_int_equal(hs_py_native_class("gen_send_ex2.lto_priv.0", false), P);
	assert_int_equal(hs_py_native_class("pymain_run_file_obj", false), P);
	/* where Python starts running stays, as do builtins and extensions Python calls */
	assert_int_equal(hs_py_native_class("Py_RunMain", false), O);
	assert_int_equal(hs_py_native_class("t_bootstrap", false), O);
	assert_int_equal(hs_py_native_class("builtin_sum_impl", false), O);
	assert_int_equal(hs_py_native_class("zlib_compress_impl", false), O);
	assert_int_equal(hs_py_native_class("deflate", false), O);
	/* names like the machinery's, outside it: only an exact name or a prefix counts */
	assert_int_equal(hs_py_native_class("my_PyObject_Call", false), O);
	assert_int_equal(hs_py_native_class("py::leaf:/app/x.py", true), T);
	assert_int_equal(hs_py_native_class("jitted_loop", true), O);
	assert_int_equal(hs_py_native_class(NULL, false), O);
}

/* 3.11+: one eval-loop frame runs several Python frames (calls inlined); a whole stack */
static void test_runs_in_order(void **state)
{
	/* leaf first: deflate, zlib_compress, PyCFunction machinery, eval (run 0: compress_blob,
	 * main, <module>), machinery, Py_RunMain, main */
	const uint8_t native[] = {O, O, P, E, P, O, O};
	const bool entry[] = {false, false, true};

	(void)state;
	assert_string_equal(merged(native, 7, entry, 3, false), "0,1,-1,-2,-3,5,6");
	/* internals: the machinery, and the eval loop outside the frames it runs */
	assert_string_equal(merged(native, 7, entry, 3, true), "0,1,2,-1,-2,-3,3,4,5,6");
}

/* 3.8-3.10: every frame its own run, one eval-loop frame each */
static void test_every_frame_a_run(void **state)
{
	const uint8_t native[] = {E, P, E, P, E, O};
	const bool entry[] = {true, true, true};

	(void)state;
	assert_string_equal(merged(native, 6, entry, 3, false), "-1,-2,-3,5");
}

/* A whole stack with one eval-loop frame more than runs (a run starting or ending as the sample
 * is taken): paired from the base, the extra one is inside, and left out */
static void test_whole_stack_pairs_from_base(void **state)
{
	const uint8_t native[] = {E, P, E, P, E, O};
	const bool entry[] = {true, true};

	(void)state;
	assert_string_equal(merged(native, 6, entry, 2, false), "-1,-2,5");
	/* and one fewer: the innermost run goes with the innermost eval-loop frame's */
	{
		const uint8_t two[] = {E, P, E, O};
		const bool three[] = {true, true, true};
		assert_string_equal(merged(two, 4, three, 3, false), "-1,-2,-3,3");
	}
}

/* A stack cut short (a stop pseudo-frame): paired from the leaf, the runs left over go
 * outside the last eval-loop frame */
static void test_cut_stack_pairs_from_leaf(void **state)
{
	const uint8_t native[] = {O, E, P, S};
	const bool entry[] = {true, false, true, true};

	(void)state;
	assert_string_equal(merged(native, 4, entry, 4, false), "0,-1,-2,-3,-4,3");
}

/* No eval-loop frame at all (the native walk broke in the interpreter): the Python frames go
 * just inside the stop pseudo-frame, or at the base */
static void test_no_eval_frame(void **state)
{
	const uint8_t cut[] = {O, O, S};
	const uint8_t whole[] = {O, O};
	const bool entry[] = {true, true};

	(void)state;
	assert_string_equal(merged(cut, 3, entry, 2, false), "0,1,-1,-2,2");
	assert_string_equal(merged(whole, 2, entry, 2, false), "0,1,-1,-2");
}

/* -X perf: trampolines are the Python frames again; JIT code not named yet is one only where
 * it calls the eval loop (outside the innermost eval-loop frame) */
static void test_trampolines(void **state)
{
	const uint8_t native[] = {J, E, J, P, E, T, P, O};
	const bool entry[] = {true, true};

	(void)state;
	assert_string_equal(merged(native, 8, entry, 2, false), "0,-1,-2,7");
	assert_string_equal(merged(native, 8, entry, 2, true), "0,-1,1,2,3,-2,4,5,6,7");
}

/* A Python stack read in part (too deep): paired from the leaf even where the native stack is
 * whole, the eval-loop frames of the runs not read left out, and the cut said just outside
 * the outermost Python frame read */
static void test_cut_python_stack(void **state)
{
	/* 3.11: four runs in the native stack, two read (the second cut, no entry mark) */
	const uint8_t native[] = {O, E, P, E, P, E, P, E, O};
	const bool entry[] = {true, false, false};

	(void)state;
	assert_string_equal(merged_cut(native, 9, entry, 3, true, false), "0,-1,-2,-3,cut,8");
	/* with no eval-loop frame, at the base */
	{
		const uint8_t none[] = {O, O};
		assert_string_equal(merged_cut(none, 2, entry, 3, true, false), "0,1,-1,-2,-3,cut");
	}
}

/* -g fp through the interpreter: addresses in no mapping say nothing, and go */
static void test_unknown_frames(void **state)
{
	const uint8_t native[] = {E, U, U, O};
	const bool entry[] = {true};

	(void)state;
	assert_string_equal(merged(native, 4, entry, 1, false), "-1,3");
	assert_string_equal(merged(native, 4, entry, 1, true), "-1,0,1,2,3");
}

/* Without Python frames nothing changes: the machinery stays */
static void test_no_python_frames(void **state)
{
	const uint8_t native[] = {O, E, P, T, O};

	(void)state;
	assert_string_equal(merged(native, 5, NULL, 0, false), "0,1,2,3,4");
}

/* A Python stack of thread tid read at time t, as the frame reader hands it on. */
static void py_stack(struct hs_builder *b, uint32_t tid, uint64_t t)
{
	struct hs_py_sample s;
	struct hs_perf_event ev;

	memset(&s, 0, sizeof(s));
	s.head.time = t;
	s.head.pid = 100;
	s.head.tid = tid;
	s.head.nframes = 1;
	memset(&ev, 0, sizeof(ev));
	ev.type = HS_RECORD_RT_STACK;
	ev.misc = HS_RT_PYTHON;
	ev.raw.data = &s;
	ev.raw.size = offsetof(struct hs_py_sample, frames) + sizeof(s.frames[0]);
	hs_builder_event(b, &ev);
}

/* Many short-lived Python threads: the stacks whose samples never came are forgotten at a
 * period's end with the threads left with none; one read just now waits on. */
static void test_pending_forgotten(void **state)
{
	const uint64_t s = 1000000000;
	struct hs_builder_opts o = {0};
	struct hs_builder b;
	struct hs_perf_event ev;

	(void)state;
	o.user = true;
	o.rt_names = hs_rt_names_new(HS_RT_BIT(HS_RT_PYTHON));
	hs_builder_init(&b, &o);
	for (uint32_t tid = 1000; tid < 1500; tid++)
		py_stack(&b, tid, 10 * s + tid);
	/* the recording's clock moves on: a record with a time, then one more stack */
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_COMM;
	ev.sid.has_time = true;
	ev.sid.time = 20 * s;
	ev.comm.pid = ev.comm.tid = 100;
	ev.comm.comm = "worker";
	hs_builder_event(&b, &ev);
	py_stack(&b, 7, 20 * s - 1000);
	assert_int_equal(b.rt.threads.n, 501);
	assert_true(hs_builder_rebase(&b));
	assert_int_equal(b.rt.threads.n, 1);
	assert_int_equal(b.stats.rt[HS_RT_PYTHON].orphans, 500);
	/* the one left is found by its thread: its next stack goes with it, not to a new entry */
	py_stack(&b, 7, 20 * s);
	assert_int_equal(b.rt.threads.n, 1);
	hs_builder_release(&b);
	hs_rt_names_free(o.rt_names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_runs_in_order),
		cmocka_unit_test(test_every_frame_a_run),
		cmocka_unit_test(test_whole_stack_pairs_from_base),
		cmocka_unit_test(test_cut_stack_pairs_from_leaf),
		cmocka_unit_test(test_no_eval_frame),
		cmocka_unit_test(test_trampolines),
		cmocka_unit_test(test_cut_python_stack),
		cmocka_unit_test(test_unknown_frames),
		cmocka_unit_test(test_no_python_frames),
		cmocka_unit_test(test_pending_forgotten),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
