/* Unit tests of what the text report and its relatives say: values as people read them (times
 * in ns, us, ms, s), the JSON report, the text diff, the report broken down by source line and
 * the annotation of a function, thread names. Profiles are built in memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "output/output.h"
#include "output/writers.h"
#include "profile/profile.h"
#include "util/strbuf.h"

static struct hs_profile *new_profile(void)
{
	struct hs_profile *p = hs_profile_new();

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "off-cpu", "nanoseconds");
	return p;
}

/* A location of function name (in file at line, when file is not NULL) in /usr/bin/app. */
static uint32_t location(struct hs_profile *p, const char *name, const char *file, int64_t line)
{
	struct hs_mapping m = {0x1000, 0x2000, 0, hs_profile_intern_str(p, "/usr/bin/app"), 0, HS_KIND_USER};
	uint32_t fn =
		hs_profile_function(p, hs_profile_intern_str(p, name), 0, file ? hs_profile_intern_str(p, file) : 0, 0);
	struct hs_line l = {fn, file ? line : 0};

	return hs_profile_location(p, hs_profile_mapping(p, &m), 0x1000 + (uint64_t)line, HS_KIND_USER, &l, 1);
}

/* Adds a sample of thread comm (pid 100, tid) at time with the stack "root;...;leaf"
 * ("name@line": in app.c at that line), v samples and v ms off-CPU. */
static void add_at(struct hs_profile *p, const char *comm, int32_t tid, uint64_t time, const char *stack, int64_t v)
{
	uint32_t locs[64];
	uint32_t n = 0;
	char *copy = strdup(stack), *save = NULL;
	int64_t vals[2] = {v, 1000000 * v};

	for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		char *at = strchr(f, '@');
		if (at)
			*at++ = 0;
		assert_true(n < 64);
		locs[n++] = location(p, f, at ? "app.c" : NULL, at ? atoi(at) : 0);
	}
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	hs_profile_add_sample(p, hs_profile_stack(p, locs, n), hs_profile_intern_str(p, comm), 100, tid, time, vals);
	free(copy);
}

static void add(struct hs_profile *p, const char *comm, int32_t tid, const char *stack, int64_t v)
{
	add_at(p, comm, tid, 0, stack, v);
}

static void test_value_fmt(void **state)
{
	static const struct {
		int64_t v;
		const char *unit, *want;
	} cases[] = {
		{0, "nanoseconds", "0 ns"},
		{999, "nanoseconds", "999 ns"},
		{1000, "nanoseconds", "1.00 us"},
		{89400000, "nanoseconds", "89.4 ms"},
		{1147212021, "nanoseconds", "1.15 s"},
		{999960000, "nanoseconds", "1.00 s"},
		{123456789, "nanoseconds", "123 ms"},
		{7200000000000, "nanoseconds", "7200 s"},
		{-2500000, "nanoseconds", "-2.50 ms"},
		{1500, "milliseconds", "1.50 s"},
		{3, "seconds", "3.00 s"},
		{1147212021, "count", "1147212021"},
		{42, "bytes", "42"},
		{INT64_MAX, "nanoseconds", "9223372037 s"},
	};
	char buf[HS_VALUE_BUF];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(hs_value_fmt(buf, cases[i].v, cases[i].unit), cases[i].want);
	assert_int_equal(hs_unit_ns("count"), 0);
	assert_int_equal(hs_unit_ns("microseconds"), 1000);
}

/* A profile of two threads of one process: main → parse → lex and main → run → spin. */
static struct hs_profile *two_threads(void)
{
	struct hs_profile *p = new_profile();

	add(p, "worker-1", 101, "main@10;run@20;spin@21", 6);
	add(p, "worker-1", 101, "main@10;run@20;spin@22", 2);
	add(p, "app", 100, "main@10;parse@30;lex@31", 2);
	return p;
}

static void test_report_units(void **state)
{
	struct hs_profile *p = two_threads();
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	out = hs_test_write_format(p, "txt", &o);
	/* counts stay counts */
	assert_non_null(strstr(out, "# 10 samples in "));
	assert_non_null(strstr(out, "  80.00%            8   80.00%            8  spin  [app]\n"));
	free(out);
	o.value_index = 1;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "# 10.0 ms off-cpu (10000000 nanoseconds) in "));
	assert_non_null(strstr(out, "  80.00%      8.00 ms   80.00%      8.00 ms  spin  [app]\n"));
	assert_non_null(strstr(out, "   0.00%         0 ns  100.00%      10.0 ms  main  [app]\n"));
	free(out);
	hs_profile_free(p);
}

/* The JSON report honours -g none and --lines (tree nodes with their lines); the text report's
 * --sort sym and tree with --lines go by function and line; annotate names the kernel's module
 * as the report does. */
static void test_report_lines_tree(void **state)
{
	struct hs_profile *p = two_threads();
	struct hs_mapping km = {0xffff0000, 0xffffffff, 0, 0, 0, HS_KIND_KERNEL};
	struct hs_line kl = {0, 7};
	struct hs_output_opts o = {0};
	int64_t one[2] = {1, 0};
	uint32_t loc;
	char *out;

	(void)state;
	out = hs_test_write_format(p, "json", &o);
	assert_non_null(strstr(out, "\"tree_order\":\"caller\",\n \"tree\":{\"name\":\"all\","));
	free(out);
	assert_int_equal(hs_report_callgraph_set(&o, "none"), 0);
	out = hs_test_write_format(p, "json", &o);
	assert_non_null(strstr(out, "\"tree_order\":\"none\",\n \"tree\":null}\n"));
	free(out);
	out = hs_test_write_format(p, "txt", &o);
	assert_null(strstr(out, "Call tree"));
	free(out);

	memset(&o, 0, sizeof(o));
	o.lines = true;
	out = hs_test_write_format(p, "json", &o);
	assert_non_null(strstr(out, "{\"name\":\"run\",\"module\":\"/usr/bin/app\",\"file\":\"app.c\",\"line\":20,"
				    "\"self\":0,\"total\":8,\"total_percent\":80.0000,\"children\":["
				    "{\"name\":\"spin\",\"module\":\"/usr/bin/app\",\"file\":\"app.c\",\"line\":21,"
				    "\"self\":6,\"total\":6,"));
	free(out);
	o.sort[0] = HS_SORT_SYM;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "  60.00%            6   60.00%            6  spin app.c:21\n"
				    "  20.00%            2   20.00%            2  spin app.c:22\n"));
	free(out);
	o.sort[0] = 0;
	o.tree = HS_TREE_CALLER;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, " 100.00%    0.00%  main app.c:10  [app]\n"
				    "  80.00%    0.00%  |-- run app.c:20\n"
				    "  60.00%   60.00%  |   |-- spin app.c:21\n"
				    "  20.00%   20.00%  |   `-- spin app.c:22\n"));
	free(out);

	/* a kernel function: "[kernel.kallsyms]", not "[[kernel.kallsyms]]" */
	km.file = hs_profile_intern_str(p, "[kernel.kallsyms]");
	kl.function =
		hs_profile_function(p, hs_profile_intern_str(p, "schedule"), 0, hs_profile_intern_str(p, "core.c"), 0);
	loc = hs_profile_location(p, hs_profile_mapping(p, &km), 0xffff1000, HS_KIND_KERNEL, &kl, 1);
	hs_profile_add_sample(p, hs_profile_stack(p, &loc, 1), p->samples.v[0].comm, 100, 101, 0, one);
	memset(&o, 0, sizeof(o));
	o.annotate = "schedule";
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "schedule  [kernel.kallsyms]  core.c\n"));
	free(out);
	hs_profile_free(p);
}

/* The flame graph's subtitle states the total of the value drawn, as the report's header. */
static void test_flame_subtitle(void **state)
{
	struct hs_profile *p = two_threads();
	struct hs_output_opts o = {0};
	struct hs_strbuf sb = {0};
	int64_t many[2] = {1234566, 0};
	char *out;

	(void)state;
	out = hs_test_write_format(p, "svg", &o);
	assert_non_null(strstr(out, "<text id=\"subtitle\" x=\"600\" y=\"44\">10 samples</text>"));
	free(out);
	o.value_index = 1;
	out = hs_test_write_format(p, "svg", &o);
	assert_non_null(strstr(out, "<text id=\"subtitle\" x=\"600\" y=\"44\">10.0 ms off-cpu</text>"));
	free(out);
	out = hs_test_write_format(p, "html", &o);
	assert_non_null(strstr(out, "<div id=\"subtitle\">10.0 ms off-cpu</div>"));
	free(out);

	hs_profile_add_sample(p, p->samples.v[0].stack, p->samples.v[0].comm, 100, 101, 0, many);
	assert_string_equal(hs_value_total_text(p, 0, &sb), "1,234,576 samples");
	p->types.v[0].type = hs_profile_intern_str(p, "page-faults");
	assert_string_equal(hs_value_total_text(p, 0, &sb), "1,234,576 page-faults");
	p->types.v[0].unit = hs_profile_intern_str(p, "bytes");
	assert_string_equal(hs_value_total_text(p, 0, &sb), "1,234,576 page-faults (bytes)");
	hs_strbuf_release(&sb);
	hs_profile_free(p);
}

/* A thread that names itself after it starts is sampled under two names: wherever a thread is
 * named by its tid, it is one thread under its latest name (by time, not profile order). */
static void test_thread_renamed(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	struct hs_flame_tree t;
	char *out;
	int lanes = 0;

	(void)state;
	add_at(p, "spin-1", 101, 3000, "main;run;spin", 5);
	add_at(p, "app", 101, 1000, "main;run", 1);
	add_at(p, "app", 100, 2000, "main;parse", 2);
	o.root_tid = true;
	out = hs_test_write_format(p, "folded", &o);
	assert_string_equal(out,
			    "app-100/100;main;parse 2\nspin-1-100/101;main;run 1\nspin-1-100/101;main;run;spin 5\n");
	free(out);

	/* a flame chart: a lane per thread */
	memset(&o, 0, sizeof(o));
	o.flamechart = true;
	hs_flame_tree_init(&t);
	hs_flame_tree_add(&t, p, &o, 0, false);
	for (size_t i = 1; i < t.nodes.n; i++) {
		if (t.nodes.v[i].parent != 0)
			continue;
		lanes++;
		assert_true(!strcmp(t.nodes.v[i].name, "app-100/100") || !strcmp(t.nodes.v[i].name, "spin-1-100/101"));
	}
	assert_int_equal(lanes, 2);
	hs_flame_tree_release(&t);

	memset(&o, 0, sizeof(o));
	out = hs_test_write_format(p, "speedscope", &o);
	assert_non_null(strstr(out, "\"name\":\"spin-1 (100/101)\""));
	assert_null(strstr(out, "app (100/101)"));
	free(out);
	out = hs_test_write_format(p, "json", &o);
	assert_non_null(strstr(out, "{\"pid\":100,\"tid\":101,\"name\":\"spin-1\","));
	free(out);
	o.sort[0] = HS_SORT_TID;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "  101:spin-1\n"));
	assert_null(strstr(out, "101:app"));
	free(out);

	/* by command name: each name the thread had */
	memset(&o, 0, sizeof(o));
	out = hs_test_write_format(p, "folded", &o);
	assert_string_equal(out, "app;main;parse 2\napp;main;run 1\nspin-1;main;run;spin 5\n");
	free(out);
	hs_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_fmt),         cmocka_unit_test(test_report_units),
		cmocka_unit_test(test_thread_renamed),    cmocka_unit_test(test_flame_subtitle),
		cmocka_unit_test(test_report_lines_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
