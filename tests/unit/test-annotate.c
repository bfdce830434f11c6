/* Unit tests of the annotation of a function (src/output/annotate.c, hotstack annotate):
 * samples per source line, the source text shown around them, the hottest line marked, names
 * matched exactly then as a regular expression, the closest names of an unknown one, a source
 * file that cannot be read. Profiles are built in memory, their source files in a scratch
 * directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "output/output.h"
#include "profile/profile.h"
#include "util/strbuf.h"

static char dir[PATH_MAX];
static char src[PATH_MAX + 16];

/* A location of function name in file at line (no file: unknown line) in /usr/bin/app. */
static uint32_t location(struct hs_profile *p, const char *name, const char *file, int64_t line)
{
	struct hs_mapping m = {0x1000, 0x2000, 0, hs_profile_intern_str(p, "/usr/bin/app"), 0, HS_KIND_USER};
	uint32_t fn =
		hs_profile_function(p, hs_profile_intern_str(p, name), 0, file ? hs_profile_intern_str(p, file) : 0, 0);
	struct hs_line l = {fn, file ? line : 0};

	return hs_profile_location(p, hs_profile_mapping(p, &m), 0x1000 + (uint64_t)line, HS_KIND_USER, &l, 1);
}

/* Adds v samples of the stack "root;...;leaf", each frame "name@line" in file (or "name"). */
static void add(struct hs_profile *p, const char *file, const char *stack, int64_t v)
{
	uint32_t locs[16], n = 0;
	char *copy = strdup(stack), *save = NULL;

	for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		char *at = strchr(f, '@');
		if (at)
			*at++ = 0;
		locs[n++] = location(p, f, at ? file : NULL, at ? atoi(at) : 0);
	}
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	hs_profile_add_sample(p, hs_profile_stack(p, locs, n), hs_profile_intern_str(p, "app"), 100, 100, 0, &v);
	free(copy);
}

/* prog.c: line N reads "line N", but for the loop of spin (11-12) and the call (5). */
static int setup(void **state)
{
	struct hs_strbuf sb = {0};

	(void)state;
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "annotate"), 0);
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	for (int l = 1; l <= 300; l++) {
		if (l == 5)
			hs_strbuf_adds(&sb, "\tspin(n);\n");
		else if (l == 11)
			hs_strbuf_adds(&sb, "\tfor (i = 0; i < n; i++)\n");
		else if (l == 12)
			hs_strbuf_adds(&sb, "\t\tsink += i; \x1b[31m\n");
		else
			hs_strbuf_addf(&sb, "line %d\n", l);
	}
	hs_test_write_file(src, sb.buf, sb.len);
	hs_strbuf_release(&sb);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hs_test_rmtree(dir);
	return 0;
}

static struct hs_profile *profile(const char *file)
{
	struct hs_profile *p = hs_profile_new();

	hs_profile_add_type(p, "samples", "count");
	add(p, file, "main@5;spin@12", 90);
	add(p, file, "main@5;spin@11", 8);
	add(p, file, "main@5;spinner@250", 2);
	add(p, file, "main@5;spinner@20", 1);
	return p;
}

static void test_lines_and_source(void **state)
{
	struct hs_profile *p = profile(src);
	struct hs_output_opts o = {.annotate = "spin"};
	char *out;

	(void)state;
	out = hs_test_write_format(p, "txt", &o);
	/* the exact name wins over the regular expression (spinner) */
	assert_null(strstr(out, "spinner"));
	assert_null(strstr(out, "names 2 functions"));
	assert_non_null(strstr(out, "spin  [/usr/bin/app]  "));
	assert_non_null(strstr(out, "  self 98 (97.03%), total 98 (97.03%) of 101 samples\n"));
	/* the hottest line marked, with its text: tabs expanded, control bytes made '?' */
	assert_non_null(
		strstr(out,
		       "=>  89.11%           90   89.11%           90      12                  sink += i; ?[31m\n"));
	assert_non_null(
		strstr(out,
		       "     7.92%            8    7.92%            8      11          for (i = 0; i < n; i++)\n"));
	/* three lines of context on each side, no more */
	assert_non_null(strstr(out, "       8  line 8\n"));
	assert_non_null(strstr(out, "      15  line 15\n"));
	assert_null(strstr(out, "line 7\n"));
	assert_null(strstr(out, "line 16\n"));
	free(out);

	/* a call site: total but no self, the hottest by total */
	o.annotate = "main";
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "=>   0.00%            0  100.00%          101       5          spin(n);\n"));
	free(out);
	/* a stray sample of main's own on another line does not take the mark from the call */
	add(p, src, "main@7", 1);
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "=>   0.00%            0   99.02%          101       5          spin(n);\n"));
	assert_non_null(strstr(out, "\n     0.98%            1    0.98%            1       7  line 7\n"));
	free(out);
	hs_profile_free(p);
}

static void test_regex_and_long_span(void **state)
{
	struct hs_profile *p = profile(src);
	struct hs_output_opts o = {.annotate = "^spin.*r$|^spi$|pin$"};
	char *out, *a, *b;

	(void)state;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "# '^spin.*r$|^spi$|pin$' names 2 functions: each in turn, hottest first\n"));
	a = strstr(out, "\nspin  [");
	b = strstr(out, "\nspinner  [");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b); /* hottest first */
	/* lines 20 and 250 are far apart: windows around each, "..." between */
	assert_non_null(strstr(b, "      23  line 23\n"));
	assert_non_null(strstr(b, "     ...\n"));
	assert_non_null(strstr(b, "     247  line 247\n"));
	assert_null(strstr(b, "line 24\n"));
	assert_null(strstr(b, "line 246\n"));
	free(out);
	/* --top 1: only the hottest */
	o.top = 1;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "names 2 functions: the 1 hottest in turn"));
	assert_null(strstr(out, "\nspinner  ["));
	free(out);
	hs_profile_free(p);
}

static void test_unreadable_source(void **state)
{
	char missing[PATH_MAX + 32];
	struct hs_profile *p;
	struct hs_output_opts o = {.annotate = "spin|main"};
	char *out, *note;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/gone.c", dir);
	p = profile(missing);
	out = hs_test_write_format(p, "txt", &o);
	/* said once for the file, the sampled lines shown without text */
	note = strstr(out, "(no source text: cannot read '");
	assert_non_null(note);
	assert_non_null(strstr(note, "gone.c': No such file or directory)\n"));
	assert_null(strstr(note + 1, "(no source text"));
	assert_non_null(strstr(out, "=>  89.11%           90   89.11%           90      12  \n"));
	free(out);
	hs_profile_free(p);
	/* a directory is no source file, and is not read */
	p = profile(dir);
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "(no source text: cannot read '"));
	free(out);
	hs_profile_free(p);
}

static void test_closest(void **state)
{
	struct hs_profile *p = profile(src);
	struct hs_output_opts o = {.annotate = "spin"};
	struct hs_strbuf sb = {0};

	(void)state;
	assert_int_equal(hs_annotate_check(p, &o, &sb), 0);
	assert_int_equal(sb.len, 0);
	o.annotate = "^spinn";
	assert_int_equal(hs_annotate_check(p, &o, &sb), 0);
	/* names it holds (or holding it) first, then by edit distance */
	o.annotate = "spinnr";
	assert_int_equal(hs_annotate_check(p, &o, &sb), -ENOENT);
	assert_string_equal(hs_strbuf_str(&sb), " (closest: spin, spinner, main)");
	hs_strbuf_reset(&sb);
	o.annotate = "mian";
	assert_int_equal(hs_annotate_check(p, &o, &sb), -ENOENT);
	assert_true(!strncmp(hs_strbuf_str(&sb), " (closest: main, ", 17));
	hs_strbuf_reset(&sb);
	o.annotate = "(unbalanced";
	assert_int_equal(hs_annotate_check(p, &o, &sb), -ENOENT);
	hs_strbuf_release(&sb);
	hs_profile_free(p);
	/* an empty profile has no names to offer */
	p = hs_profile_new();
	hs_profile_add_type(p, "samples", "count");
	o.annotate = "x";
	assert_int_equal(hs_annotate_check(p, &o, &sb), -ENOENT);
	assert_int_equal(sb.len, 0);
	hs_profile_free(p);
}

/* Lines no source file has (past its end, or out of range) are shown without text. */
static void test_hostile_lines(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_output_opts o = {.annotate = "f"};
	char *out;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	add(p, src, "f@299", 1);
	add(p, src, "f@100000", 1);
	add(p, src, "f@9000000000", 1);
	add(p, src, "f@-4", 1);
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "has 300 lines, fewer than the samples name"));
	assert_non_null(strstr(out, "     299  line 299\n"));
	assert_non_null(strstr(out, "     300  line 300\n"));
	assert_null(strstr(out, "     301  "));
	assert_non_null(strstr(out, "  100000  \n"));
	assert_non_null(strstr(out, "       ?  [no line information]\n"));
	free(out);
	hs_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_source),  cmocka_unit_test(test_regex_and_long_span),
		cmocka_unit_test(test_unreadable_source), cmocka_unit_test(test_closest),
		cmocka_unit_test(test_hostile_lines),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
