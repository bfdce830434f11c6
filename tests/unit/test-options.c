/* Unit tests of the option tables (util/option.h) and of each layer's options: the getopt table
 * and the help built from the rows, and the values each layer takes or refuses (record, live,
 * top, runtime, filters, collapse). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include <cmocka.h>

#include "collapse/collapse.h"
#include "live/opts.h"
#include "output/output.h"
#include "profile/view-opts.h"
#include "top/opts.h"
#include "util/strbuf.h"

/* The key getopt returns for --name of table t. */
static int key_of(const struct hs_option *t, const char *name)
{
	struct option lo[128];

	hs_options_getopt(t, lo, 0, 128);
	for (struct option *o = lo; o->name; o++)
		if (!strcmp(o->name, name))
			return o->val;
	fail_msg("no --%s", name);
	return -1;
}

static void test_getopt_and_help(void **state)
{
	static int flag;
	static const struct hs_option inner[] = {{"b", 'b', required_argument, "  -b B\n"}, {"c", 3, no_argument}, {0}};
	static const struct hs_option t[] = {{"a", 'a', no_argument, "  -a\n"},
					     HS_OPTIONS(inner),
					     {"d", 7, no_argument, "  -d\n", NULL, &flag},
					     {0}};
	struct option lo[8];
	struct hs_strbuf sb = {0};

	assert_int_equal(hs_options_getopt(t, lo, 0, 8), 4);
	assert_string_equal(lo[1].name, "b");
	assert_int_equal(lo[1].has_arg, required_argument);
	assert_int_equal(lo[2].val, 3);
	assert_ptr_equal(lo[3].flag, &flag);
	assert_null(lo[4].name);
	/* appended after what is there */
	assert_int_equal(hs_options_getopt(inner, lo, 4, 8), 6);
	assert_string_equal(lo[5].name, "c");
	hs_options_help(t, &sb);
	assert_string_equal(hs_strbuf_str(&sb), "  -a\n  -b B\n  -d\n");
	hs_strbuf_release(&sb);
}

/* Each command's getopt table: no name twice, no key twice, every help line within 100
 * columns and ended. */
static void check_table(const struct option *lo, const struct hs_option *t)
{
	struct hs_strbuf sb = {0};

	for (const struct option *a = lo; a->name; a++)
		for (const struct option *b = a + 1; b->name; b++) {
			if (!strcmp(a->name, b->name))
				fail_msg("--%s twice", a->name);
			if (a->val == b->val && !a->flag && !b->flag)
				fail_msg("--%s and --%s: one key", a->name, b->name);
		}
	hs_options_help(t, &sb);
	for (const char *l = hs_strbuf_str(&sb); *l;) {
		size_t n = strcspn(l, "\n");
		assert_true(n <= 100);
		assert_int_equal(l[n], '\n');
		l += n + 1;
	}
	hs_strbuf_release(&sb);
}

static void test_tables(void **state)
{
	struct option lo[128];
	size_t n;

	n = hs_output_options_getopt(lo, 0, 128, false);
	hs_options_getopt(hs_live_record_options, lo, n, 128);
	check_table(lo, hs_live_record_options);
	n = hs_output_options_getopt(lo, 0, 128, false);
	n = hs_options_getopt(hs_filter_options, lo, n, 128);
	n = hs_output_options_getopt(lo, n, 128, true);
	hs_options_getopt(hs_load_symbol_options, lo, n, 128);
	check_table(lo, hs_filter_options);
	check_table(lo, hs_load_symbol_options);
	hs_options_getopt(hs_top_options, lo, 0, 128);
	check_table(lo, hs_top_options);
	hs_options_getopt(hs_collapse_options, lo, 0, 128);
	check_table(lo, hs_collapse_options);
	/* -s is --sort's, as perf's; --format is no writer's option to set */
	assert_string_equal(hs_output_option_of_key('s')->name, "sort");
	assert_null(hs_output_option_of_key(HS_OUTPUT_FORMAT_KEY));
}

static void test_record_args(void **state)
{
	struct hs_record_args a;
	struct hs_error err = {0};
	char *argv[] = {"record", NULL};
	int ind = 1;

	hs_record_args_init(&a);
	assert_int_equal(a.ro.freq, 999);
	assert_true(a.ro.kernel);
	assert_int_equal(hs_record_args_option(&a, 'p', "1,2", argv, &ind, &err), 1);
	assert_int_equal(a.pids.n, 2);
	assert_int_equal(hs_record_args_option(&a, 'F', "0", argv, &ind, &err), -EINVAL);
	assert_string_equal(err.detail, "invalid frequency '0' (expected a number from 1 to 100000)");
	err = (struct hs_error){0};
	assert_int_equal(hs_record_args_option(&a, 't', "x", argv, &ind, &err), -EINVAL);
	assert_string_equal(err.detail, "invalid thread id list 'x'");
	assert_int_equal(hs_record_args_option(&a, HS_REC_NO_KERNEL, NULL, argv, &ind, &err), 1);
	assert_false(a.ro.kernel);
	assert_int_equal(hs_record_args_option(&a, 'C', "0-1", argv, &ind, &err), 1);
	assert_true(a.ro.all_cpus);
	assert_string_equal(a.ro.cpu_list, "0-1");
	assert_int_equal(hs_record_args_option(&a, 'z', NULL, argv, &ind, &err), 0);
	hs_record_args_release(&a);
}

static void test_live_args(void **state)
{
	struct hs_live_args a = {0};
	struct hs_error err = {0};
	char *argv[] = {"record", NULL};
	int ind = 1;

	hs_record_args_init(&a.ra);
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "no-python"), NULL, argv, &ind, &err),
			 1);
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "perl-internals"), NULL, argv, &ind,
					     &err),
			 1);
	assert_int_equal(a.rt.off, HS_RT_BIT(HS_RT_PYTHON));
	assert_int_equal(a.rt.internals, HS_RT_BIT(HS_RT_PERL));
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "symfs"), "/x", argv, &ind, &err), 1);
	assert_string_equal(a.syms.symfs, "/x");
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "switch-output"), NULL, argv, &ind,
					     &err),
			 1);
	assert_true(a.lo.periodic.by_signal);
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "off-cpu-min"), "2ms", argv, &ind,
					     &err),
			 1);
	assert_true(a.off_cpu_min_given);
	assert_int_equal(a.off_cpu_min, 2000000);
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "window"), "0", argv, &ind, &err),
			 -EINVAL);
	assert_string_equal(err.detail, "invalid window '0' (whole seconds from 1 to 3600: 60, 60s, 5m)");
	assert_int_equal(hs_live_args_option(&a, key_of(hs_live_record_options, "window"), "2m", argv, &ind, &err),
			 1);
	assert_int_equal(a.window, 120);
	/* --serve is the caller's: the server checks its address */
	assert_int_equal(hs_live_args_option(&a, HS_LIVE_SERVE, "1", argv, &ind, &err), 0);
	hs_record_args_release(&a.ra);
}

static void test_top_args(void **state)
{
	struct hs_top_args a;
	struct hs_error err = {0};
	char *argv[] = {"top", NULL};
	char buf[128];
	int ind = 1;

	hs_top_args_init(&a);
	assert_null(hs_top_args_check(&a, buf, sizeof(buf)));
	assert_int_equal(hs_top_args_option(&a, 'd', "0.05", argv, &ind, &err), -EINVAL);
	assert_string_equal(err.detail,
			    "invalid refresh interval '0.05' (seconds, or with a unit: 500ms, 2s, 1m; from 0.1 s to 1 h)");
	assert_int_equal(hs_top_args_option(&a, 'd', "500ms", argv, &ind, &err), 1);
	assert_true(a.refresh == 0.5);
	assert_int_equal(hs_top_args_option(&a, 'd', "10", argv, &ind, &err), 1);
	assert_string_equal(hs_top_args_check(&a, buf, sizeof(buf)),
			    "invalid --window 5 with -d 10 (from one refresh to 1000 of them)");
	assert_int_equal(hs_top_args_option(&a, key_of(hs_top_options, "stdio"), NULL, argv, &ind, &err), 1);
	assert_true(a.stdio);
	assert_int_equal(hs_top_args_option(&a, 'e', "cycles", argv, &ind, &err), 1);
	assert_string_equal(a.ra.event, "cycles");
	hs_record_args_release(&a.ra);
}

static void test_filter_and_collapse(void **state)
{
	struct hs_filter f = {0};
	struct hs_load_opts lo = {0};
	struct hs_collapse_opts co = {0};
	struct hs_error err = {0};
	double tree_min = 0;

	assert_int_equal(hs_filter_option(&f, key_of(hs_filter_options, "min-percent"), "5", &tree_min, &err), 1);
	assert_true(tree_min == 5);
	assert_int_equal(hs_filter_option(&f, key_of(hs_filter_options, "comm"), "(", &tree_min, &err), -EINVAL);
	assert_non_null(strstr(err.detail, "invalid regular expression '('"));
	assert_int_equal(hs_filter_option(&f, 'z', "", &tree_min, &err), 0);
	hs_filter_release(&f);
	assert_int_equal(hs_load_symbol_option(&lo, key_of(hs_load_symbol_options, "no-inline"), NULL), 1);
	assert_true(lo.no_inline && !lo.no_demangle);
	assert_int_equal(hs_collapse_option(&co, key_of(hs_collapse_options, "all"), NULL), 1);
	assert_int_equal(hs_collapse_option(&co, key_of(hs_collapse_options, "srcline"), NULL), 1);
	assert_true(co.kernel && co.jit && co.srcline && !co.pid && !co.context);
	assert_int_equal(hs_collapse_option(&co, 'o', "x"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getopt_and_help), cmocka_unit_test(test_tables),
		cmocka_unit_test(test_record_args),     cmocka_unit_test(test_live_args),
		cmocka_unit_test(test_top_args),        cmocka_unit_test(test_filter_and_collapse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
