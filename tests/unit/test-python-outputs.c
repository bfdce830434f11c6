/* Python frames (HS_KIND_PYTHON) in every output: a profile built by hand with native, kernel
 * and Python locations, as the builder makes them, written in each format; the frames' names,
 * files, lines and kind checked in each, and the pprof and speedscope round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "output/writers.h"
#include "profile/pprof-read.h"
#include "profile/profile.h"
#include "profile/speedscope-read.h"

/* prog.py as the profile's Python functions name it: Parser.parse starts at line 5 and its
 * line 7 calls zlib's deflate; main at line 10, <module> at line 1. */
static const char prog_py[] = "import zlib\n"                         /* 1 */
			      "\n"                                    /* 2 */
			      "\n"                                    /* 3 */
			      "class Parser:\n"                       /* 4 */
			      "    def parse(self, data):\n"          /* 5 */
			      "        out = bytes(reversed(data))\n" /* 6 */
			      "        return zlib.compress(out)\n"   /* 7 */
			      "\n"                                    /* 8 */
			      "\n"                                    /* 9 */
			      "def main():\n"                         /* 10 */
			      "    for _ in range(1000):\n"           /* 11 */
			      "        Parser().parse(b'x' * 4096)\n" /* 12 */
			      "\n"                                    /* 13 */
			      "\n"                                    /* 14 */
			      "main()\n";                             /* 15 */

static char dir[64], prog[128];

static int setup(void **state)
{
	(void)state;
	if (hs_test_mkdtemp(dir, sizeof(dir), "hs-test-py") < 0)
		return -1;
	snprintf(prog, sizeof(prog), "%s/prog.py", dir);
	hs_test_write_file(prog, prog_py, sizeof(prog_py) - 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return hs_test_rmtree(dir);
}

static uint32_t S(struct hs_profile *p, const char *s)
{
	return hs_profile_intern_str(p, s);
}

/* A Python location as the builder makes one: per (code object, line), no mapping, no address. */
static uint32_t py_loc(struct hs_profile *p, const char *qualname, const char *file, int64_t first, int64_t line)
{
	struct hs_line ln = {hs_profile_function(p, S(p, qualname), S(p, qualname), S(p, file), first), line};

	return hs_profile_location(p, 0, 0, HS_KIND_PYTHON, &ln, 1);
}

static uint32_t native_loc(struct hs_profile *p, uint32_t m, uint64_t addr, const char *name)
{
	struct hs_line ln = {hs_profile_function(p, S(p, name), S(p, name), 0, 0), 0};

	return hs_profile_location(p, m, addr, p->mappings.v[m].kind, &ln, 1);
}

static uint32_t mapping(struct hs_profile *p, uint64_t start, uint64_t limit, const char *file)
{
	struct hs_mapping m = {start, limit, 0, S(p, file), 0, 0, 0};

	m.kind = (uint8_t)hs_kind_guess(file, start, NULL);
	return hs_profile_mapping(p, &m);
}

/* _start (python3.11) → <module> → main → Parser.parse → deflate (libz) or schedule (kernel),
 * and Parser.parse itself at the leaf; and a frozen importlib frame under <module>. */
static struct hs_profile *py_profile(void)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t m_py = mapping(p, 0x555555554000, 0x555555800000, "/usr/bin/python3.11");
	uint32_t m_z = mapping(p, 0x7ffff7f00000, 0x7ffff7f20000, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13");
	uint32_t m_k = mapping(p, 0xffffffff81000000, 0xffffffff83000000, "[kernel.kallsyms]");
	uint32_t start = native_loc(p, m_py, 0x555555561234, "_start");
	uint32_t deflate = native_loc(p, m_z, 0x7ffff7f01234, "deflate");
	uint32_t sched = native_loc(p, m_k, 0xffffffff81a01234, "schedule");
	uint32_t mod = py_loc(p, "<module>", prog, 1, 15);
	uint32_t mn = py_loc(p, "main", prog, 10, 12);
	uint32_t parse7 = py_loc(p, "Parser.parse", prog, 5, 7);
	uint32_t parse6 = py_loc(p, "Parser.parse", prog, 5, 6);
	uint32_t frozen = py_loc(p, "_find_and_load", "<frozen importlib._bootstrap>", 1165, 1176);
	const uint32_t s1[] = {deflate, parse7, mn, mod, start}, s2[] = {sched, parse7, mn, mod, start};
	const uint32_t s3[] = {parse6, mn, mod, start}, s4[] = {frozen, mod, start};
	int64_t v[2];

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	for (int i = 0; i < 10; i++) {
		const uint32_t *s = i < 5 ? s1 : i < 8 ? s2 : i < 9 ? s3 : s4;
		uint32_t n = i < 5 ? 5 : i < 8 ? 5 : i < 9 ? 4 : 3;

		v[0] = 1;
		v[1] = 1001001;
		hs_profile_add_sample(p, hs_profile_stack(p, s, n), S(p, "python3"), 4242, 4242,
				      1000000000ull + (uint64_t)i * 1001001, v);
	}
	return p;
}

static char *write_fmt(const struct hs_profile *p, const char *format, const struct hs_output_opts *o)
{
	return hs_test_write_format(p, format, o);
}

static void assert_contains(const char *text, const char *want)
{
	if (!text || !strstr(text, want))
		fail_msg("missing \"%s\" in:\n%s", want, text ? text : "(no output)");
}

static void assert_lacks(const char *text, const char *unwanted)
{
	if (text && strstr(text, unwanted))
		fail_msg("unexpected \"%s\" in:\n%s", unwanted, text);
}

/* ---- the model ---- */

static void test_locations(void **state)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t a = py_loc(p, "Parser.parse", "/app/prog.py", 5, 6),
		 b = py_loc(p, "Parser.parse", "/app/prog.py", 5, 7);

	(void)state;
	/* no mapping and no address: the line tells them apart, the same line is the same one */
	assert_int_not_equal(a, b);
	assert_int_equal(py_loc(p, "Parser.parse", "/app/prog.py", 5, 7), b);
	assert_int_not_equal(py_loc(p, "Parser.parse", "/app/other.py", 5, 7), b);
	assert_int_equal(hs_profile_location_module(p, &p->locations.v[a]), S(p, "/app/prog.py"));
	assert_string_equal(hs_profile_location_name(p, a), "Parser.parse");

	assert_true(hs_python_file("/app/prog.py"));
	assert_true(hs_python_file("C:\\app\\gui.pyw"));
	assert_true(hs_python_file("<frozen importlib._bootstrap>"));
	assert_true(hs_python_file("<string>"));
	assert_true(hs_python_file("<stdin>"));
	assert_false(hs_python_file(".py"));
	assert_false(hs_python_file("/src/app.c"));
	assert_false(hs_python_file("/usr/lib/libpython3.11.so.1.0"));
	assert_false(hs_python_file("<built-in>"));
	assert_false(hs_python_file(""));
	assert_false(hs_python_file(NULL));
	hs_profile_free(p);
}

/* ---- text outputs ---- */

static void test_folded(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	char *t = write_fmt(p, "folded", &o), want[1024];

	(void)state;
	/* the qualified name alone, no annotation; the kernel's keeps its own */
	assert_contains(t, "python3;_start;<module>;main;Parser.parse;deflate 5\n");
	assert_contains(t, "python3;_start;<module>;main;Parser.parse;schedule_[k] 3\n");
	assert_contains(t, "python3;_start;<module>;main;Parser.parse 1\n");
	assert_contains(t, "python3;_start;<module>;_find_and_load 1\n");
	free(t);

	/* --lines: the file and line, as native frames get them */
	o.lines = true;
	t = write_fmt(p, "folded", &o);
	snprintf(want, sizeof(want), "python3;_start;<module>:%s:15;main:%s:12;Parser.parse:%s:7;deflate 5\n", prog,
		 prog, prog);
	assert_contains(t, want);
	snprintf(want, sizeof(want), ";Parser.parse:%s:6 1\n", prog);
	assert_contains(t, want);
	assert_contains(t, ";_find_and_load:<frozen importlib._bootstrap>:1176 1\n");
	free(t);
	hs_profile_free(p);
}

static void test_report(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	char *t = write_fmt(p, "txt", &o), want[1024];

	(void)state;
	/* the module column: the source file's base name, as a library's */
	assert_contains(t, "Parser.parse  [prog.py]\n");
	assert_contains(t, "<module>  [prog.py]\n");
	assert_contains(t, "_find_and_load  [<frozen importlib._bootstrap>]\n");
	assert_contains(t, "deflate  [libz.so.1.2.13]\n");
	free(t);

	/* the tree: a Python caller's file named where it changes */
	o.tree = HS_TREE_CALLER;
	o.stats = true;
	o.tree_min = -1;
	t = write_fmt(p, "txt", &o);
	assert_contains(t, "`-- <module>  [prog.py]\n");
	assert_contains(t, "-- main\n");
	assert_contains(t, "-- deflate  [libz.so.1.2.13]\n");
	/* --stats: the kind and the module where samples land */
	assert_contains(t, "20.00%            2  Python\n");
	snprintf(want, sizeof(want), "10.00%%            1  %s\n", prog);
	assert_contains(t, want);
	assert_contains(t, "10.00%            1  <frozen importlib._bootstrap>\n");
	free(t);

	/* --sort dso: the .py file is the module */
	memset(&o, 0, sizeof(o));
	assert_int_equal(hs_sort_parse("dso,sym", o.sort), 0);
	t = write_fmt(p, "txt", &o);
	assert_contains(t, "prog.py ");
	assert_contains(t, "Parser.parse\n");
	free(t);
	hs_profile_free(p);
}

static void test_json(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	char *t = write_fmt(p, "json", &o), want[1024];

	(void)state;
	snprintf(want, sizeof(want), "{\"name\":\"Parser.parse\",\"module\":\"%s\",", prog);
	assert_contains(t, want);
	assert_contains(t, "{\"name\":\"_find_and_load\",\"module\":\"\\u003cfrozen importlib._bootstrap>\",");
	free(t);
	o.lines = true;
	t = write_fmt(p, "json", &o);
	snprintf(want, sizeof(want), "{\"name\":\"Parser.parse\",\"module\":\"%s\",\"file\":\"%s\",\"line\":7,", prog,
		 prog);
	assert_contains(t, want);
	free(t);
	hs_profile_free(p);
}

static void test_script(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	char *t = write_fmt(p, "script", &o), want[1024];

	(void)state;
	/* address 0 and the source file as the module, as perf script prints a frame */
	snprintf(want, sizeof(want),
		 "\t    7ffff7f01234 deflate (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13)\n"
		 "\t               0 Parser.parse (%s)\n"
		 "\t               0 main (%s)\n"
		 "\t               0 <module> (%s)\n"
		 "\t    555555561234 _start (/usr/bin/python3.11)\n",
		 prog, prog, prog);
	assert_contains(t, want);
	assert_contains(t, "\t               0 _find_and_load (<frozen importlib._bootstrap>)\n");
	free(t);
	hs_profile_free(p);
}

static void test_annotate(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	char *t, want[1024];

	(void)state;
	/* the .py source with counts, as for C; the hottest line marked */
	o.annotate = "Parser.parse";
	t = write_fmt(p, "txt", &o);
	snprintf(want, sizeof(want), "Parser.parse  %s\n", prog);
	assert_contains(t, want);
	assert_contains(t, "        return zlib.compress(out)\n");
	assert_contains(t, "    def parse(self, data):\n");
	assert_true(strstr(t, "=>") && strstr(strstr(t, "=>"), "      7          return zlib.compress(out)"));
	free(t);

	/* frozen modules have no file to read: one line says so */
	o.annotate = "_find_and_load";
	t = write_fmt(p, "txt", &o);
	assert_contains(t, "(no source text: <frozen importlib._bootstrap> is the interpreter's, not a file)\n");
	free(t);
	hs_profile_free(p);
}

static void test_diff(void **state)
{
	struct hs_profile *a = py_profile(), *b = py_profile();
	struct hs_output_opts o = {0};
	char *path = hs_test_temp_file("hs-test-pydiff"), *t;
	struct hs_outfile out;
	int64_t v[2] = {1, 1001001};

	(void)state;
	/* B spends 5 more samples in Parser.parse itself (the stack of sample 8) */
	for (int i = 0; i < 5; i++)
		hs_profile_add_sample(b, b->samples.v[8].stack, S(b, "python3"), 4242, 4242,
				      2000000000ull + (uint64_t)i, v);
	assert_int_equal(hs_outfile_open(&out, path), 0);
	assert_int_equal(hs_write_report_diff(a, b, &o, &out), 0);
	assert_int_equal(hs_outfile_commit(&out), 0);
	t = hs_test_read_file(path, NULL);
	assert_contains(t, "Parser.parse  [prog.py]");
	free(t);

	assert_int_equal(hs_outfile_open(&out, path), 0);
	assert_int_equal(hs_write_folded_diff(a, b, &o, &out), 0);
	assert_int_equal(hs_outfile_commit(&out), 0);
	t = hs_test_read_file(path, NULL);
	assert_contains(t, "python3;_start;<module>;main;Parser.parse;deflate 5 5\n");
	assert_contains(t, "python3;_start;<module>;main;Parser.parse 1 6\n");
	free(t);
	unlink(path);
	free(path);
	hs_profile_free(a);
	hs_profile_free(b);
}

/* ---- flame graphs ---- */

static void test_svg(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	struct hs_rgb py = hs_flame_color(HS_PALETTE_KIND, "Parser.parse", HS_KIND_PYTHON, false);
	struct hs_rgb user = hs_flame_color(HS_PALETTE_KIND, "Parser.parse", HS_KIND_USER, false);
	char *t = write_fmt(p, "svg", &o), want[1024];

	(void)state;
	/* a class and a colour of their own, the file in the hover, the name alone on the box */
	assert_contains(t, "<g class=\"frame py\"><title>Parser.parse (prog.py) (9 samples, 90.00%)</title>");
	assert_contains(t, "<title>&lt;module&gt; (prog.py) (10 samples, 100.00%)</title>");
	assert_contains(t, "<title>_find_and_load (&lt;frozen importlib._bootstrap&gt;) (1 samples, 10.00%)</title>");
	assert_contains(t, ">Parser.parse</text>");
	assert_contains(t, "<g class=\"frame user\"><title>deflate (5 samples, 50.00%)</title>");
	assert_contains(t, ">Python</text>");
	assert_true(py.r != user.r || py.g != user.g || py.b != user.b);
	snprintf(want, sizeof(want), "fill=\"rgb(%d,%d,%d)\"/><text", py.r, py.g, py.b);
	assert_contains(t, want);
	free(t);

	/* --lines: the name says where, as a native frame's */
	o.lines = true;
	t = write_fmt(p, "svg", &o);
	snprintf(want, sizeof(want), "<g class=\"frame py\"><title>Parser.parse:%s:7 (8 samples, 80.00%%)</title>",
		 prog);
	assert_contains(t, want);
	free(t);

	/* another palette keeps working: Python is its own family there too */
	o.lines = false;
	o.palette = HS_PALETTE_JAVA;
	t = write_fmt(p, "svg", &o);
	assert_contains(t, "<g class=\"frame py\"><title>Parser.parse (prog.py)");
	assert_lacks(t, "id=\"legend\"");
	free(t);
	hs_profile_free(p);
}

/* A graph without Python frames has no "Python" in its legend: native profiles draw as before. */
static void test_legend_native_only(void **state)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t m = mapping(p, 0x400000, 0x500000, "/usr/bin/app");
	uint32_t loc = native_loc(p, m, 0x401000, "main");
	struct hs_output_opts o = {0};
	int64_t v = 1;
	char *t;

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_sample(p, hs_profile_stack(p, &loc, 1), S(p, "app"), 1, 1, 0, &v);
	t = write_fmt(p, "svg", &o);
	assert_contains(t, ">JIT</text>");
	assert_lacks(t, ">Python</text>");
	free(t);
	t = write_fmt(p, "html", &o);
	assert_contains(t, "[\"JIT\",");
	assert_lacks(t, "[\"Python\",");
	assert_lacks(t, "\"modules\"");
	free(t);
	hs_profile_free(p);
}

static void test_html(void **state)
{
	struct hs_profile *p = py_profile();
	struct hs_output_opts o = {0};
	char *t = write_fmt(p, "html", &o), *names, *kinds, *mods;
	int idx = -1, i = 0;

	(void)state;
	assert_contains(t, "[\"Python\",");
	/* Parser.parse's entry: kind 4, module prog.py */
	names = strstr(t, "\"names\":[");
	kinds = strstr(t, "\"kinds\":[");
	mods = strstr(t, "\"modules\":[");
	assert_non_null(names);
	assert_non_null(kinds);
	assert_non_null(mods);
	for (const char *s = names + 9; *s && *s != ']'; i++) {
		if (!strncmp(s, "\"Parser.parse\"", 14))
			idx = i;
		s = strchr(s + 1, '"') + 1;
		if (*s == ',')
			s++;
	}
	assert_true(idx >= 0);
	kinds += 9;
	mods += 11;
	for (i = 0; i < idx; i++) {
		kinds = strchr(kinds, ',') + 1;
		mods = strchr(strchr(mods, '"') + 1, '"') + 2;
	}
	assert_int_equal(atoi(kinds), HS_KIND_PYTHON);
	assert_true(!strncmp(mods, "\"prog.py\"", 9));
	free(t);
	hs_profile_free(p);
}

/* ---- pprof ---- */

/* The location of q named name at line line (0: any), or 0. */
static uint32_t find_loc(const struct hs_profile *q, const char *name, int64_t line)
{
	for (uint32_t i = 1; i < q->locations.n; i++) {
		const struct hs_location *l = &q->locations.v[i];
		if (l->nlines && !strcmp(hs_profile_location_name(q, i), name) &&
		    (!line || q->lines.v[l->line0].line == line))
			return i;
	}
	return 0;
}

static void test_pprof_round_trip(void **state)
{
	struct hs_profile *p = py_profile(), *q = NULL, *q2 = NULL;
	struct hs_error err = {0};
	size_t len, len2, raw_len, raw_len2;
	uint8_t *buf = hs_test_write_pprof(p, &len), *buf2, *raw, *raw2;
	const struct hs_location *l;
	const struct hs_function *f;
	uint32_t id;

	(void)state;
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	/* Python's come back as Python, with their function as written; native as before */
	id = find_loc(q, "Parser.parse", 7);
	assert_int_not_equal(id, 0);
	l = &q->locations.v[id];
	assert_int_equal(l->kind, HS_KIND_PYTHON);
	assert_int_equal(l->mapping, 0);
	assert_int_equal(l->address, 0);
	assert_int_equal(l->nlines, 1);
	f = &q->functions.v[q->lines.v[l->line0].function];
	assert_string_equal(hs_profile_str(q, f->name), "Parser.parse");
	assert_string_equal(hs_profile_str(q, f->system_name), "Parser.parse");
	assert_string_equal(hs_profile_str(q, f->filename), prog);
	assert_int_equal(f->start_line, 5);
	assert_int_equal(q->locations.v[find_loc(q, "_find_and_load", 0)].kind, HS_KIND_PYTHON);
	assert_int_equal(q->locations.v[find_loc(q, "<module>", 0)].kind, HS_KIND_PYTHON);
	assert_int_equal(q->locations.v[find_loc(q, "deflate", 0)].kind, HS_KIND_USER);
	assert_int_equal(q->locations.v[find_loc(q, "schedule", 0)].kind, HS_KIND_KERNEL);
	assert_int_equal(q->locations.n, p->locations.n);

	/* read back, it writes the very same bytes */
	buf2 = hs_test_write_pprof(q, &len2);
	raw = hs_test_gunzip(buf, len, &raw_len);
	raw2 = hs_test_gunzip(buf2, len2, &raw_len2);
	assert_int_equal(raw_len, raw_len2);
	assert_memory_equal(raw, raw2, raw_len);
	assert_int_equal(hs_pprof_read(buf2, len2, &q2, &err), 0);
	assert_int_equal(q2->locations.v[find_loc(q2, "Parser.parse", 6)].kind, HS_KIND_PYTHON);
	free(buf);
	free(buf2);
	free(raw);
	free(raw2);
	hs_profile_free(p);
	hs_profile_free(q);
	hs_profile_free(q2);
}

/* `go tool pprof` reads the file: -top, -traces, -raw and -list of the Python function. */
static void test_go_pprof(void **state)
{
	struct hs_profile *p = py_profile();
	char path[192], cmd[640], *t;
	size_t len;
	uint8_t *buf;

	(void)state;
	if (system("command -v go >/dev/null 2>&1 && go tool -n pprof >/dev/null 2>&1"))
		hs_test_skip("no go tool pprof to read the file with");
	buf = hs_test_write_pprof(p, &len);
	snprintf(path, sizeof(path), "%s/py.pb.gz", dir);
	hs_test_write_file(path, buf, len);
	free(buf);
#define GO_PPROF(mode, out)                                                                                         \
	snprintf(cmd, sizeof(cmd), "cd %s && HOME=%s go tool pprof %s -symbolize=none py.pb.gz >%s 2>&1", dir, dir, \
		 mode, out);                                                                                        \
	assert_int_equal(system(cmd), 0)
	GO_PPROF("-top", "top.txt");
	snprintf(path, sizeof(path), "%s/top.txt", dir);
	t = hs_test_read_file(path, NULL);
	assert_contains(t, "90.00%  Parser.parse\n");
	assert_contains(t, "100%  <module>\n");
	assert_contains(t, "  _find_and_load\n");
	free(t);

	GO_PPROF("-traces", "traces.txt");
	snprintf(path, sizeof(path), "%s/traces.txt", dir);
	t = hs_test_read_file(path, NULL);
	assert_contains(t, "deflate\n             Parser.parse\n             main\n             <module>\n"
			   "             _start\n");
	free(t);

	GO_PPROF("-raw", "raw.txt");
	snprintf(path, sizeof(path), "%s/raw.txt", dir);
	t = hs_test_read_file(path, NULL);
	snprintf(cmd, sizeof(cmd), ": 0x0 Parser.parse %s:7 s=5\n", prog);
	assert_contains(t, cmd);
	free(t);

	GO_PPROF("-list Parser.parse", "list.txt");
	snprintf(path, sizeof(path), "%s/list.txt", dir);
	t = hs_test_read_file(path, NULL);
	snprintf(cmd, sizeof(cmd), "ROUTINE ======================== Parser.parse in %s\n", prog);
	assert_contains(t, cmd);
	assert_contains(t, "      7:        return zlib.compress(out)\n");
	free(t);
#undef GO_PPROF
	hs_profile_free(p);
}

/* ---- speedscope ---- */

static void test_speedscope_round_trip(void **state)
{
	struct hs_profile *p = py_profile(), *q = NULL, *q2 = NULL;
	struct hs_output_opts o = {0};
	char *a = write_fmt(p, "speedscope", &o), *b, *c, want[1024];
	uint32_t id;

	(void)state;
	snprintf(want, sizeof(want), "{\"name\":\"Parser.parse\",\"file\":\"%s\",\"line\":7}", prog);
	assert_contains(a, want);
	assert_contains(a,
			"{\"name\":\"_find_and_load\",\"file\":\"\\u003cfrozen importlib._bootstrap>\",\"line\":1176}");
	assert_contains(a, "{\"name\":\"deflate\",\"file\":\"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13\"}");

	assert_int_equal(hs_speedscope_read(a, strlen(a), strlen(a), &q, NULL), 0);
	id = find_loc(q, "Parser.parse", 7);
	assert_int_not_equal(id, 0);
	assert_int_equal(q->locations.v[id].kind, HS_KIND_PYTHON);
	assert_int_equal(q->locations.v[id].mapping, 0);
	assert_string_equal(hs_profile_str(q, hs_profile_location_module(q, &q->locations.v[id])), prog);
	assert_int_equal(q->locations.v[find_loc(q, "_find_and_load", 0)].kind, HS_KIND_PYTHON);
	assert_int_equal(q->locations.v[find_loc(q, "deflate", 0)].kind, HS_KIND_USER);
	assert_int_equal(q->locations.v[find_loc(q, "schedule", 0)].kind, HS_KIND_KERNEL);

	/* what was read writes the same file, and again */
	b = write_fmt(q, "speedscope", &o);
	assert_string_equal(a, b);
	assert_int_equal(hs_speedscope_read(b, strlen(b), strlen(b), &q2, NULL), 0);
	c = write_fmt(q2, "speedscope", &o);
	assert_string_equal(b, c);
	free(a);
	free(b);
	free(c);
	hs_profile_free(p);
	hs_profile_free(q);
	hs_profile_free(q2);
}

/* A Python frame without a line still has its file as its source, not as a mapping. */
static void test_speedscope_no_line(void **state)
{
	static const char doc[] =
		"{\"profiles\":[{\"type\":\"sampled\",\"unit\":\"none\",\"name\":\"t\",\"samples\":[[0,1]],"
		"\"weights\":[1]}],\"shared\":{\"frames\":[{\"name\":\"<module>\",\"file\":\"/app/run.py\"},"
		"{\"name\":\"helper\",\"file\":\"/usr/lib/libx.so\"}]}}";
	struct hs_profile *q = NULL;
	uint32_t id;

	(void)state;
	assert_int_equal(hs_speedscope_read(doc, sizeof(doc) - 1, sizeof(doc) - 1, &q, NULL), 0);
	id = find_loc(q, "<module>", 0);
	assert_int_equal(q->locations.v[id].kind, HS_KIND_PYTHON);
	assert_int_equal(q->locations.v[id].mapping, 0);
	assert_string_equal(hs_profile_str(q, q->functions.v[q->lines.v[q->locations.v[id].line0].function].filename),
			    "/app/run.py");
	id = find_loc(q, "helper", 0);
	assert_int_equal(q->locations.v[id].kind, HS_KIND_USER);
	assert_int_not_equal(q->locations.v[id].mapping, 0);
	hs_profile_free(q);
}

/* Ruby, PHP and Perl frames as the builder makes them (no mapping, no address, a source file):
 * each a kind, a class and a colour of its own, in the legend, and read back as such from pprof
 * and speedscope files. */
static void test_script_kinds(void **state)
{
	static const struct {
		const char *name, *file, *cls, *legend;
		uint8_t kind;
	} langs[] = {
		{"Tree#leaf", "/app/tree.rb", "rb", ">Ruby</text>", HS_KIND_RUBY},
		{"Runner::run", "/srv/www/index.php", "php", ">PHP</text>", HS_KIND_PHP},
		{"Worker::run", "/opt/bin/work.pl", "pl", ">Perl</text>", HS_KIND_PERL},
	};
	struct hs_profile *p = hs_profile_new(), *q = NULL;
	uint32_t m_x = mapping(p, 0x555555554000, 0x555555800000, "/usr/bin/interp");
	uint32_t start = native_loc(p, m_x, 0x555555561234, "_start");
	struct hs_output_opts o = {0};
	struct hs_error err = {0};
	struct hs_rgb rgb[4];
	int64_t v[2] = {1, 1000000};
	uint8_t *buf;
	size_t len;
	char *t, want[256];

	(void)state;
	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	for (size_t i = 0; i < HS_ARRAY_SIZE(langs); i++) {
		struct hs_line ln = {hs_profile_function(p, S(p, langs[i].name), S(p, langs[i].name),
							 S(p, langs[i].file), 3),
				     7};
		uint32_t s[2] = {hs_profile_location(p, 0, 0, langs[i].kind, &ln, 1), start};
		hs_profile_add_sample(p, hs_profile_stack(p, s, 2), S(p, "interp"), 7, 7, 1000000000ull + i, v);
		assert_int_equal(hs_script_kind(langs[i].file), langs[i].kind);
		rgb[i] = hs_flame_color(HS_PALETTE_KIND, langs[i].name, langs[i].kind, false);
	}
	rgb[3] = hs_flame_color(HS_PALETTE_KIND, "Tree#leaf", HS_KIND_USER, false);
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			assert_true(rgb[i].r != rgb[j].r || rgb[i].g != rgb[j].g || rgb[i].b != rgb[j].b);
	assert_int_equal(hs_script_kind("/usr/lib/libruby.so"), HS_KIND_USER);
	t = write_fmt(p, "svg", &o);
	for (size_t i = 0; i < HS_ARRAY_SIZE(langs); i++) {
		snprintf(want, sizeof(want), "<g class=\"frame %s\"><title>%s (%s)", langs[i].cls, langs[i].name,
			 strrchr(langs[i].file, '/') + 1);
		assert_contains(t, want);
		assert_contains(t, langs[i].legend);
	}
	assert_lacks(t, ">Python</text>");
	free(t);
	buf = hs_test_write_pprof(p, &len);
	assert_int_equal(hs_pprof_read(buf, len, &q, &err), 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(langs); i++)
		assert_int_equal(q->locations.v[find_loc(q, langs[i].name, 7)].kind, langs[i].kind);
	hs_profile_free(q);
	q = NULL;
	free(buf);
	t = write_fmt(p, "speedscope", &o);
	assert_int_equal(hs_speedscope_read(t, strlen(t), strlen(t), &q, NULL), 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(langs); i++)
		assert_int_equal(q->locations.v[find_loc(q, langs[i].name, 7)].kind, langs[i].kind);
	free(t);
	hs_profile_free(q);
	hs_profile_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locations),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_annotate),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_legend_native_only),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_go_pprof),
		cmocka_unit_test(test_speedscope_round_trip),
		cmocka_unit_test(test_speedscope_no_line),
		cmocka_unit_test(test_script_kinds),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 2;
	return hs_test_status(cmocka_run_group_tests(tests, setup, teardown));
}
