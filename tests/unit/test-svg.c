/* Unit tests of the SVG flame graph writer: profiles built in memory, written through an
 * hs_outfile, and the document checked for frames, counts, merging, colours, escaping, the
 * narrow-frame merging that bounds its size, and well-formedness (with xmllint when present). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

#include "output/writers.h"
#include "util/strbuf.h"

static char tmpdir[256];

static int setup_dir(void **state)
{
	return hs_test_mkdtemp(tmpdir, sizeof(tmpdir), "test-svg");
}

static int remove_dir(void **state)
{
	return hs_test_rmtree(tmpdir);
}

static struct hs_profile *new_profile(void)
{
	struct hs_profile *p = hs_profile_new();

	hs_profile_add_type(p, "samples", "count");
	return p;
}

/* A location for one function; a name ending in "_[k]" or "_[j]" is kernel or JIT code, and
 * "outer>inner" is inner inlined into outer. */
static uint32_t location(struct hs_profile *p, const char *spec, uint64_t address)
{
	char name[256];
	struct hs_line lines[2];
	uint32_t nlines = 0;
	uint8_t kind = HS_KIND_USER;
	size_t n;
	char *gt;

	snprintf(name, sizeof(name), "%s", spec);
	n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, "_[k]"))
		kind = HS_KIND_KERNEL, name[n - 4] = 0;
	else if (n > 4 && !strcmp(name + n - 4, "_[j]"))
		kind = HS_KIND_JIT, name[n - 4] = 0;
	gt = strchr(name, '>');
	if (gt) {
		*gt = 0;
		lines[nlines++] = (struct hs_line){
			hs_profile_function(p, hs_profile_intern_str(p, gt + 1), 0, 0, 0), 0};
	}
	lines[nlines++] = (struct hs_line){hs_profile_function(p, hs_profile_intern_str(p, name), 0, 0, 0), 0};
	return hs_profile_location(p, 0, address, kind, lines, nlines);
}

/* Adds value samples of "comm" with the stack "root;...;leaf" (separated by ';'); address_salt
 * makes different locations of the same functions. */
static void add(struct hs_profile *p, const char *comm, int32_t pid, const char *stack, int64_t value,
		uint64_t address_salt)
{
	uint32_t locs[64];
	size_t n = 0;
	char *copy = strdup(stack), *save = NULL;

	for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		assert_true(n < 64);
		locs[n] = location(p, f, 0x1000 + 0x10 * n + address_salt);
		n++;
	}
	/* Stacks are stored leaf first. */
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	hs_profile_add_sample(p, hs_profile_stack(p, locs, (uint32_t)n), hs_profile_intern_str(p, comm), pid, pid, 0,
			      &value);
	free(copy);
}

/* Writes p as SVG and returns the document (caller frees), its path in path. */
static char *write_svg(const struct hs_profile *p, const struct hs_output_opts *o, const char *file, char *path,
		       size_t pathsz)
{
	struct hs_outfile out;

	snprintf(path, pathsz, "%s/%s", tmpdir, file);
	assert_int_equal(hs_outfile_open(&out, path), 0);
	assert_int_equal(hs_write_svg(p, o, &out), 0);
	assert_int_equal(hs_outfile_commit(&out), 0);
	return hs_test_read_file(path, NULL);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

/* The <g> of the first frame whose title begins with "NAME (" (or with name, when it holds
 * " ("), as a string the caller frees. */
static char *frame_of(const char *svg, const char *name)
{
	char want[300];
	const char *t, *g, *end;

	snprintf(want, sizeof(want), "<title>%s%s", name, strstr(name, " (") ? "" : " (");
	t = strstr(svg, want);
	if (!t)
		return NULL;
	for (g = t; g > svg && strncmp(g, "<g ", 3); g--)
		;
	end = strstr(t, "</g>");
	assert_non_null(end);
	return strndup(g, (size_t)(end - g));
}

/* A numeric attribute of the frame's rect. */
static double frame_attr(const char *svg, const char *name, const char *attr)
{
	char *g = frame_of(svg, name), want[64];
	const char *r, *a;
	double v;

	assert_non_null(g);
	snprintf(want, sizeof(want), " %s=\"", attr);
	r = strstr(g, "<rect");
	assert_non_null(r);
	a = strstr(r, want);
	assert_non_null(a);
	v = strtod(a + strlen(want), NULL);
	free(g);
	return v;
}

static void frame_fill(const char *svg, const char *name, char *ret, size_t sz)
{
	char *g = frame_of(svg, name);
	const char *a;

	assert_non_null(g);
	a = strstr(g, " fill=\"");
	assert_non_null(a);
	a += 7;
	snprintf(ret, sz, "%.*s", (int)(strchr(a, '"') - a), a);
	free(g);
}

static void assert_well_formed(const char *path)
{
	char cmd[600];

	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		fprintf(stderr, "# xmllint not installed (libxml2-utils): well-formedness not checked\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
	assert_int_equal(system(cmd), 0);
}

static struct hs_profile *small_profile(void)
{
	struct hs_profile *p = new_profile();

	add(p, "app", 1, "main;parse;lex", 30, 0);
	add(p, "app", 1, "main;parse;read", 6, 0);
	/* Another location of the same functions, and another process with the same command. */
	add(p, "app", 2, "main;parse;read", 4, 0x100);
	add(p, "app", 1, "main;render;draw", 40, 0);
	add(p, "worker", 3, "thread_start;work;parse", 20, 0);
	return p;
}

static void test_counts_and_merging(void **state)
{
	struct hs_profile *p = small_profile();
	struct hs_output_opts o = {0};
	char path[512], fill_a[64], fill_b[64];
	char *svg = write_svg(p, &o, "small.svg", path, sizeof(path));

	assert_non_null(strstr(svg, "<title>all (100 samples, 100.00%)</title>"));
	assert_non_null(strstr(svg, "<title>app (80 samples, 80.00%)</title>"));
	assert_non_null(strstr(svg, "<title>main (80 samples, 80.00%)</title>"));
	assert_non_null(strstr(svg, "<title>render (40 samples, 40.00%)</title>"));
	assert_non_null(strstr(svg, "<title>lex (30 samples, 30.00%)</title>"));
	assert_non_null(strstr(svg, "<title>worker (20 samples, 20.00%)</title>"));
	/* Two locations and two pids, one frame each. */
	assert_non_null(strstr(svg, "<title>read (10 samples, 10.00%)</title>"));
	assert_int_equal(count(svg, "<title>app ("), 1);
	assert_int_equal(count(svg, "<title>main ("), 1);
	assert_int_equal(count(svg, "<title>read ("), 1);
	/* parse under app and under worker are different frames, of the same colour. */
	assert_int_equal(count(svg, "<title>parse ("), 2);
	assert_non_null(strstr(svg, "<title>parse (40 samples, 40.00%)</title>"));
	assert_non_null(strstr(svg, "<title>parse (20 samples, 20.00%)</title>"));
	frame_fill(svg, "parse (40", fill_a, sizeof(fill_a));
	frame_fill(svg, "parse (20", fill_b, sizeof(fill_b));
	assert_string_equal(fill_a, fill_b);
	assert_int_equal(count(svg, "<g class=\"frame "), 12);

	/* Full width for the root, proportional widths, siblings in alphabetical order. */
	assert_true(frame_attr(svg, "all", "width") == 1180.0);
	assert_true(frame_attr(svg, "all", "x") == 10.0);
	assert_true(frame_attr(svg, "render", "width") == 472.0);
	assert_true(frame_attr(svg, "lex", "x") < frame_attr(svg, "read", "x"));
	assert_true(frame_attr(svg, "parse (40", "x") < frame_attr(svg, "render", "x"));
	assert_true(frame_attr(svg, "app", "x") < frame_attr(svg, "worker", "x"));
	/* Root at the bottom: deeper frames higher up. */
	assert_true(frame_attr(svg, "all", "y") > frame_attr(svg, "main", "y"));

	/* The controls the page script needs. */
	assert_non_null(strstr(svg, "id=\"frames\""));
	assert_non_null(strstr(svg, "id=\"search\""));
	assert_non_null(strstr(svg, "id=\"resetsearch\""));
	assert_non_null(strstr(svg, "id=\"unzoom\""));
	assert_non_null(strstr(svg, "id=\"matched\""));
	assert_non_null(strstr(svg, "id=\"details\""));
	assert_non_null(strstr(svg, ">Flame Graph</text>"));
	assert_non_null(strstr(svg, "<script"));
	assert_non_null(strstr(svg, "addEventListener"));
	assert_null(strstr(svg, "http://www.w3.org/2000/svg\" xlink")); /* no external references */
	assert_well_formed(path);
	free(svg);
	hs_profile_free(p);
}

static void test_kinds(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char path[512], user[64], kern[64];
	char *svg, *g;

	add(p, "app", 1, "main;read;sys_read_[k];vfs_read_[k]", 10, 0);
	add(p, "app", 1, "main;Interpreter_[j];compiled_[j]", 10, 0);
	add(p, "app", 1, "main;outer>inlined_helper", 10, 0);
	svg = write_svg(p, &o, "kinds.svg", path, sizeof(path));

	g = frame_of(svg, "sys_read");
	assert_non_null(g);
	assert_non_null(strstr(g, "<g class=\"frame kernel\">"));
	free(g);
	g = frame_of(svg, "compiled");
	assert_non_null(strstr(g, "<g class=\"frame jit\">"));
	free(g);
	g = frame_of(svg, "main");
	assert_non_null(strstr(g, "<g class=\"frame user\">"));
	free(g);
	/* Inline chains expand root first: outer, then what was inlined into it. */
	g = frame_of(svg, "inlined_helper");
	assert_non_null(strstr(g, "<g class=\"frame user inline\">"));
	free(g);
	assert_true(frame_attr(svg, "outer", "y") > frame_attr(svg, "inlined_helper", "y"));
	/* Each kind has its own colour family. */
	frame_fill(svg, "main", user, sizeof(user));
	frame_fill(svg, "sys_read", kern, sizeof(kern));
	assert_string_not_equal(user, kern);
	/* A legend names the kinds. */
	assert_non_null(strstr(svg, ">kernel</text>"));
	assert_non_null(strstr(svg, ">JIT</text>"));
	assert_non_null(strstr(svg, ">inlined</text>"));
	assert_well_formed(path);
	free(svg);
	hs_profile_free(p);
}

static void test_escaping(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {.title = "A <b>&\"title\"", .subtitle = "x' & y"};
	char path[512];
	char *svg;

	add(p, "a&b <c>", 1, "operator<<(std::ostream&, \"x\");f'g;bad\xff\xfe byte;ctl\x01x", 10, 0);
	svg = write_svg(p, &o, "escape.svg", path, sizeof(path));

	assert_non_null(strstr(svg, "<title>operator&lt;&lt;(std::ostream&amp;, &quot;x&quot;) (10 samples"));
	assert_null(strstr(svg, "operator<<"));
	assert_null(strstr(svg, "std::ostream&,"));
	assert_non_null(strstr(svg, "<title>a&amp;b_&lt;c&gt; (10 samples"));
	assert_non_null(strstr(svg, "<title>f&apos;g (10 samples"));
	/* Bytes that are not UTF-8, and control characters, cannot go into XML as they are. */
	assert_non_null(strstr(svg, "<title>bad\xef\xbf\xbd\xef\xbf\xbd byte (10 samples"));
	assert_non_null(strstr(svg, "<title>ctl\xef\xbf\xbdx (10 samples"));
	assert_null(strstr(svg, "\xff"));
	assert_null(strstr(svg, "\x01"));
	assert_non_null(strstr(svg, "A &lt;b&gt;&amp;&quot;title&quot;</text>"));
	assert_non_null(strstr(svg, "x&apos; &amp; y</text>"));
	assert_well_formed(path);
	free(svg);
	hs_profile_free(p);
}

static void test_narrow_frames_merged(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char path[512], stack[128];
	char *svg;
	double all_w, big_w, merged_w;
	enum { TINY = 20000 };

	add(p, "app", 1, "main;big;work", 1000000, 0);
	/* Each of these is 1/1020000 of the width, about 0.001 pixels. */
	for (int i = 0; i < TINY; i++) {
		snprintf(stack, sizeof(stack), "main;tiny%05d;child%05d", i, i);
		add(p, "app", 1, stack, 1, 0);
	}
	svg = write_svg(p, &o, "narrow.svg", path, sizeof(path));

	assert_non_null(strstr(svg, "<title>[20000 small frames] (20000 samples, 1.96%)</title>"));
	assert_null(strstr(svg, "<title>tiny"));
	assert_null(strstr(svg, "<title>child"));
	assert_true(count(svg, "<g class=\"frame ") <= 8);
	assert_true(strlen(svg) < 64 * 1024);
	/* The merged frame is a pseudo frame, right of the wide one, and the widths add up. */
	assert_non_null(strstr(svg, "<g class=\"frame pseudo\"><title>[20000 small frames]"));
	all_w = frame_attr(svg, "all", "width");
	big_w = frame_attr(svg, "big", "width");
	merged_w = frame_attr(svg, "[20000 small frames]", "width");
	assert_true(big_w + merged_w > all_w - 0.02 && big_w + merged_w < all_w + 0.02);
	assert_true(frame_attr(svg, "[20000 small frames]", "x") > frame_attr(svg, "big", "x"));
	assert_well_formed(path);
	free(svg);

	/* A narrow frame without narrow siblings keeps its name; nothing is drawn above it. */
	add(p, "app", 1, "main;big;lonely;above", 1, 0);
	svg = write_svg(p, &o, "lonely.svg", path, sizeof(path));
	assert_non_null(strstr(svg, "<title>lonely (1 samples"));
	assert_null(strstr(svg, "<title>above"));
	free(svg);

	/* With a minimum of 0.0001 pixels (the graph is 1180 wide) every frame is drawn. */
	o.min_width = 0.0001;
	svg = write_svg(p, &o, "all.svg", path, sizeof(path));
	assert_null(strstr(svg, "small frames"));
	assert_non_null(strstr(svg, "<title>child19999 (1 samples"));
	assert_int_equal(count(svg, "<g class=\"frame "), 7 + 2 * TINY);
	free(svg);
	hs_profile_free(p);
}

static void test_many_stacks_bounded(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char path[512], stack[128];
	char *svg;

	/* 100000 distinct stacks of even weight: 1000 callers of 100 callees each. */
	for (int i = 0; i < 100000; i++) {
		snprintf(stack, sizeof(stack), "main;caller%03d;callee%02d;leaf", i / 100, i % 100);
		add(p, "app", 1, stack, 1, 0);
	}
	svg = write_svg(p, &o, "many.svg", path, sizeof(path));
	/* A caller is 1.18 pixels, a callee 0.0118: callees are merged into one frame per caller. */
	assert_int_equal(count(svg, "<title>[100 small frames] (100 samples, 0.10%)"), 1000);
	assert_null(strstr(svg, "<title>callee"));
	assert_int_equal(count(svg, "<g class=\"frame "), 3 + 1000 * 2);
	assert_true(strlen(svg) < 1024 * 1024);
	assert_well_formed(path);
	free(svg);
	hs_profile_free(p);
}

static void test_options(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_output_opts o = {.inverted = true, .width = 600, .value_index = 1};
	char path[512];
	char *svg;
	int64_t v[2] = {3, 3000000};
	uint32_t locs[1];

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	locs[0] = location(p, "main", 0x1000);
	hs_profile_add_sample(p, hs_profile_stack(p, locs, 1), hs_profile_intern_str(p, "app"), 1, 1, 0, v);
	svg = write_svg(p, &o, "options.svg", path, sizeof(path));

	assert_non_null(strstr(svg, "<title>main (3.00 ms, 100.00%)</title>"));
	assert_non_null(strstr(svg, "width=\"600\""));
	assert_true(frame_attr(svg, "all", "width") == 580.0);
	/* Icicle: the root on top. */
	assert_true(frame_attr(svg, "all", "y") < frame_attr(svg, "main", "y"));
	assert_well_formed(path);
	free(svg);
	hs_profile_free(p);
}

static void test_empty(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char path[512];
	char *svg = write_svg(p, &o, "empty.svg", path, sizeof(path));

	assert_non_null(strstr(svg, "No samples"));
	assert_null(strstr(svg, "<g class=\"frame"));
	assert_well_formed(path);
	free(svg);
	hs_profile_free(p);
}

/* A deep stack holding little (3% here, Python's imports at start-up) is cut above MIN_ROWS
 * rows, with a note and a dashed frame where it is cut; a deep stack holding a good share (9%)
 * is drawn whole, and sets the height. */
static void test_cold_towers_cut(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	struct hs_strbuf deep = {0}, hot = {0};
	char path[512], *svg, *g;
	const char *h;
	int height;

	hs_strbuf_adds(&deep, "main");
	for (int i = 0; i < 60; i++)
		hs_strbuf_addf(&deep, ";imp%d", i);
	hs_strbuf_adds(&hot, "main");
	for (int i = 0; i < 45; i++)
		hs_strbuf_addf(&hot, ";d%d", i);
	add(p, "app", 1, "main;work;hot", 900, 0);
	add(p, "app", 1, hs_strbuf_str(&deep), 30, 0);
	svg = write_svg(p, &o, "cold.svg", path, sizeof(path));
	h = strstr(svg, "height=\"");
	assert_non_null(h);
	height = atoi(h + 8);
	/* 36 rows of 16 pixels, the titles and the details line; 62 rows would be over 1000 */
	assert_true(height <= 36 * 16 + 130);
	g = frame_of(svg, "imp59");
	assert_non_null(g);
	assert_non_null(strstr(g, " hide\""));
	free(g);
	assert_int_equal(count(svg, " cut\"><title>"), 1);
	assert_non_null(strstr(svg, "frames of cold stacks deeper than 36 rows are cut"));
	g = frame_of(svg, "hot");
	assert_null(strstr(g, "hide"));
	free(g);
	assert_well_formed(path);
	free(svg);

	add(p, "app", 1, hs_strbuf_str(&hot), 100, 0);
	svg = write_svg(p, &o, "cold2.svg", path, sizeof(path));
	g = frame_of(svg, "d44");
	assert_null(strstr(g, "hide"));
	free(g);
	g = frame_of(svg, "imp59");
	assert_non_null(strstr(g, " hide\""));
	free(g);
	/* the deepest hot frame is on the top row drawn */
	assert_true(frame_attr(svg, "d44", "y") < frame_attr(svg, "imp30", "y") + 1);
	free(svg);

	/* a shallow graph cuts nothing and says nothing */
	hs_profile_free(p);
	p = small_profile();
	svg = write_svg(p, &o, "shallow.svg", path, sizeof(path));
	assert_null(strstr(svg, " hide\""));
	assert_null(strstr(svg, "rows are cut"));
	free(svg);
	hs_profile_free(p);
	hs_strbuf_release(&deep);
	hs_strbuf_release(&hot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_and_merging),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_narrow_frames_merged),
		cmocka_unit_test(test_many_stacks_bounded),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_cold_towers_cut),
	};

	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
