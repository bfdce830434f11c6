/* Unit tests for src/collapse: the name rules of stackcollapse-perf.pl (each expectation is
 * what the Perl script's own patterns make of the same text), Perl's counts, and the order
 * the folded lines are written in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "collapse/addr2line.h"
#include "collapse/collapse.h"
#include "collapse/stack-table.h"
#include "collapse/tidy.h"

static void check_tidy(const char *name, const char *want)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_adds(&sb, ";"); /* appended after what is there */
	hs_collapse_tidy(&sb, name, strlen(name));
	assert_string_equal(sb.buf + 1, want);
	hs_strbuf_release(&sb);
}

static void test_tidy(void **state)
{
	(void)state;
	check_tidy("foo(int, char)", "foo");
	check_tidy("a;b(x;y)", "a:b");
	check_tidy("(anonymous namespace)::f(int)", "(anonymous namespace)::f");
	check_tidy("std::vector<(anonymous namespace)::X>::push(int)", "std::vector<(anonymous namespace)::X>::push");
	check_tidy("f(anonymous namespace)", "f(anonymous namespace)");
	check_tidy("main.(*T).Method", "main.(*T).Method"); /* a Go method keeps its parentheses */
	check_tidy("it's \"q\"", "its q");
	check_tidy("plain", "plain");
}

static void check_srcline(const char *line, const char *want)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_adds(&sb, "f");
	hs_collapse_srcline(&sb, (struct hs_ps_str){line, strlen(line)});
	assert_string_equal(sb.buf, want);
	hs_strbuf_release(&sb);
}

static void test_srcline(void **state)
{
	(void)state;
	check_srcline("  foo.c:12 [inlined]  ", "f:foo.c:12");
	check_srcline(" x.c:3 [a] [b] ", "f:x.c:3");
	check_srcline("a[b]c[d", "f:ac[d"); /* a '[' without its ']' stays */
	check_srcline("[x]", "f");             /* nothing left: nothing added */
	check_srcline(" \t ", "f");
}

static void test_inline_skips(void **state)
{
	static const struct {
		const char *module;
		bool skip;
	} cases[] = {
		{"/tmp/perf-123.map", true}, {"perf-12xmap", true},      {"perf-12map", true},
		{"perf-1map", false},        {"perf-map", false},         {"[kernel.kallsyms]", true},
		{"[vdso]", true},            {"[]", false},               {"/usr/lib/libc.so.6", false},
		{"/lib/kernel.so", true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (hs_addr2line_skips(cases[i].module, strlen(cases[i].module)) != cases[i].skip)
			fail_msg("'%s': want %d", cases[i].module, cases[i].skip);
}

static void check_discriminator(const char *line, const char *want)
{
	char buf[128];
	size_t n;

	snprintf(buf, sizeof(buf), "%s", line);
	n = hs_addr2line_drop_discriminator(buf, strlen(buf));
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_discriminator(void **state)
{
	(void)state;
	check_discriminator("foo.c:12 (discriminator 3)", "foo.c:12");
	check_discriminator("a (discriminator 3) b (discriminator 4)", "a b (discriminator 4)");
	check_discriminator("x (discriminator )", "x (discriminator )");
	check_discriminator("x (discriminator 3)y) z", "x z");
	check_discriminator("plain", "plain");
}

static void test_perl_count(void **state)
{
	struct hs_perl_count c = {.u = UINT64_MAX - 1}, one = {.u = 1};

	(void)state;
	hs_perl_count_add(&c, &one);
	assert_false(c.nv);
	assert_true(c.u == UINT64_MAX);
	hs_perl_count_add(&c, &one); /* past 2^64-1 Perl goes on in a double */
	assert_true(c.nv);
	assert_true(c.d == 18446744073709551616.0);
	hs_perl_count_add(&c, &one);
	assert_true(c.nv);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 4096);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_stack_table(void **state)
{
	struct hs_stack_table t = {0};
	struct hs_perl_count two = {.u = 2}, one = {.u = 1}, big = {.u = UINT64_MAX};
	struct hs_outfile o;
	char dir[] = "/tmp/test-collapse-XXXXXX", path[64];
	uint32_t a, b;
	char *got;

	(void)state;
	a = hs_stack_table_add(&t, "main;b", 6, &two);
	b = hs_stack_table_add(&t, "main;a", 6, &one);
	assert_int_not_equal(a, b);
	assert_int_equal(hs_stack_table_add(&t, "main;b", 6, &one), a);
	hs_stack_table_count(&t, b, &one);
	hs_stack_table_add(&t, "main", 4, &one);
	hs_stack_table_add(&t, "main;\xc3\xa9", 7, &big);
	hs_stack_table_add(&t, "main;\xc3\xa9", 7, &big);
	hs_stack_table_add(&t, "Main", 4, &one);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	assert_int_equal(hs_outfile_open(&o, path), 0);
	hs_stack_table_write(&t, &o);
	assert_int_equal(hs_outfile_commit(&o), 0);
	got = read_all(path);
	/* bytes compared unsigned, a prefix first; a double printed as Perl prints it */
	assert_string_equal(got, "Main 1\n"
				 "main 1\n"
				 "main;a 2\n"
				 "main;b 3\n"
				 "main;\xc3\xa9 3.68934881474191e+19\n");
	free(got);
	unlink(path);
	rmdir(dir);
	hs_stack_table_release(&t);
}

static void keep_warning(void *ctx, const char *msg)
{
	struct hs_strbuf *sb = ctx;

	hs_strbuf_addf(sb, "%s\n", msg);
}

/* What the engine leaves out is said at the end of the read: samples of other events than the
 * first, a last sample with no blank line after it, lines that are no perf script text. */
static void test_left_out_warnings(void **state)
{
	static const char text[] = "demo  1217  4810.241261:          1  page-faults: \n"
				   "\tffffffff817554ea elf_load+0x28a ([kernel.kallsyms])\n"
				   "\n"
				   "demo  1217  4810.241262:          1  task-clock: \n"
				   "\tffffffff817554ea elf_load+0x28a ([kernel.kallsyms])\n"
				   "\n"
				   "what is this\n"
				   "demo  1217  4810.241263:          1  page-faults: \n"
				   "\tffffffff817554ea elf_load+0x28a ([kernel.kallsyms])\n";
	char *path = hs_test_temp_file("collapse-warn");
	struct hs_strbuf sb = {0};
	struct hs_collapse_opts co = {.warn = keep_warning, .warn_ctx = &sb};
	struct hs_error err = {0};
	struct hs_collapse *c;

	(void)state;
	hs_test_write_file(path, text, sizeof(text) - 1);
	c = hs_collapse_new(&co);
	assert_int_equal(hs_collapse_read(c, path, &err), 0);
	assert_string_equal(hs_strbuf_str(&sb),
			    "left out 1 sample of events other than 'page-faults', the first in the input (choose "
			    "with --event-filter)\n"
			    "the input ends inside a sample (no blank line after it): that sample is left out, as "
			    "stackcollapse-perf.pl leaves it out\n"
			    "1 line is not perf script text (the first is line 7)\n");
	hs_collapse_free(c);
	/* an event no sample has */
	hs_strbuf_reset(&sb);
	co.event_filter = "cycles";
	c = hs_collapse_new(&co);
	assert_int_equal(hs_collapse_read(c, path, &err), 0);
	assert_non_null(strstr(hs_strbuf_str(&sb), "no samples of event 'cycles'\n"));
	hs_collapse_free(c);
	hs_strbuf_release(&sb);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tidy),
		cmocka_unit_test(test_srcline),
		cmocka_unit_test(test_inline_skips),
		cmocka_unit_test(test_discriminator),
		cmocka_unit_test(test_perl_count),
		cmocka_unit_test(test_stack_table),
		cmocka_unit_test(test_left_out_warnings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
