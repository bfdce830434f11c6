/* Unit tests of the views beyond the plain flame graph and report: profile filters
 * (profile/filter.c), speedscope JSON, the HTML flame graph's data, differential views
 * (folded and SVG colours), reversed graphs and flame charts, palettes, and the report's
 * call tree, --sort groups and --stats. Profiles are built in memory. */
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
#include "profile/filter.h"
#include "profile/profile.h"
#include "unwind/callchain.h"
#include "util/error.h"
#include "util/strbuf.h"

/* ---- building profiles ---- */

static struct hs_profile *new_profile(void)
{
	struct hs_profile *p = hs_profile_new();

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	return p;
}

/* A location for "name" ("name_[k]" kernel, "outer>inner" inner inlined into outer) in a
 * mapping of the given file (NULL: none). */
static uint32_t location(struct hs_profile *p, const char *spec, const char *module)
{
	char name[256];
	struct hs_line lines[2];
	uint32_t nlines = 0, mapping = 0;
	uint8_t kind = HS_KIND_USER;
	size_t n;
	char *gt;

	snprintf(name, sizeof(name), "%s", spec);
	n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, "_[k]"))
		kind = HS_KIND_KERNEL, name[n - 4] = 0;
	if (name[0] == '[')
		kind = HS_KIND_PSEUDO;
	gt = strchr(name, '>');
	if (gt) {
		*gt = 0;
		lines[nlines++] = (struct hs_line){
			hs_profile_function(p, hs_profile_intern_str(p, gt + 1), 0, 0, 0), 0};
	}
	lines[nlines++] = (struct hs_line){hs_profile_function(p, hs_profile_intern_str(p, name), 0, 0, 0), 0};
	if (module) {
		struct hs_mapping m = {0x1000, 0x2000, 0, hs_profile_intern_str(p, module), 0, kind};
		mapping = hs_profile_mapping(p, &m);
	}
	return hs_profile_location(p, mapping, 0, kind, lines, nlines);
}

/* Adds a sample of comm pid/tid at time with the stack "root;...;leaf" and value v (cpu 1000 v). */
static void add(struct hs_profile *p, const char *comm, int32_t pid, int32_t tid, uint64_t time, const char *stack,
		int64_t v)
{
	uint32_t locs[64];
	size_t n = 0;
	char *copy = strdup(stack), *save = NULL;
	int64_t vals[2] = {v, 1000 * v};

	for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		const char *module = f[0] == '[' ? NULL : strstr(f, "_[k]") ? "[kernel.kallsyms]"
						       : strncmp(f, "lib", 3) ? "/usr/bin/app" : "/usr/lib/libc.so.6";
		assert_true(n < 64);
		locs[n++] = location(p, f, module);
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	hs_profile_add_sample(p, hs_profile_stack(p, locs, (uint32_t)n), hs_profile_intern_str(p, comm), pid, tid, time,
			      vals);
	free(copy);
}

static char *diff_to_string(const struct hs_profile *a, const struct hs_profile *b, const char *format,
			    const struct hs_output_opts *o)
{
	const struct hs_format *f = hs_format_from_name(format);
	char *path = hs_test_temp_file("hs-views"), *buf;
	struct hs_outfile out;

	assert_non_null(f);
	assert_non_null(f->write_diff);
	assert_int_equal(hs_outfile_open(&out, path), 0);
	assert_int_equal(f->write_diff(a, b, o, &out), 0);
	assert_int_equal(hs_outfile_commit(&out), 0);
	buf = hs_test_read_file(path, NULL);
	unlink(path);
	free(path);
	return buf;
}

static char *folded(const struct hs_profile *p)
{
	struct hs_output_opts o = {0};
	return hs_test_write_format(p, "folded", &o);
}

/* Two processes, three threads, timestamps 1 s apart from 10 s. */
static struct hs_profile *threads_profile(void)
{
	struct hs_profile *p = new_profile();
	const uint64_t s = 1000000000ULL;

	add(p, "app", 100, 100, 10 * s, "main;parse;lex", 4);
	add(p, "app", 100, 100, 11 * s, "main;parse;libc_read", 2);
	add(p, "app", 100, 101, 12 * s, "thread_start;work;compress", 3);
	add(p, "app", 100, 101, 13 * s, "thread_start;work;sys_write_[k]", 1);
	add(p, "db", 200, 200, 14 * s, "main;query;libc_memcpy", 5);
	add(p, "db", 200, 200, 15 * s, "main;query;lex", 5);
	return p;
}

/* ---- filters ---- */

static struct hs_profile *filtered(const struct hs_profile *p, const struct hs_filter *f)
{
	struct hs_profile *q = NULL;

	assert_int_equal(hs_profile_filter(p, f, &q), 0);
	assert_non_null(q);
	return q;
}

static void test_filter_ids_and_names(void **state)
{
	struct hs_profile *p = threads_profile(), *q;
	struct hs_filter f = {0};
	char *out;

	(void)state;
	/* nothing asked: a copy */
	assert_false(hs_filter_active(&f));
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "app;main;parse;lex 4\napp;main;parse;libc_read 2\napp;thread_start;work;compress 3\n"
				 "app;thread_start;work;sys_write_[k] 1\ndb;main;query;lex 5\ndb;main;query;libc_memcpy 5\n");
	free(out);
	hs_profile_free(q);

	hs_vec_push(&f.pids, 200);
	assert_true(hs_filter_active(&f));
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "db;main;query;lex 5\ndb;main;query;libc_memcpy 5\n");
	free(out);
	/* only what the kept samples refer to is copied */
	assert_int_equal(q->samples.n, 2);
	assert_int_equal(q->functions.n, 1 + 4);
	assert_int_equal(q->mappings.n, 1 + 2);
	assert_int_equal(q->types.n, 2);
	assert_int_equal(q->samples.v[0].time, 14000000000ULL);
	assert_int_equal(hs_profile_sample_values(q, 1)[1], 5000);
	hs_profile_free(q);
	hs_filter_release(&f);

	memset(&f, 0, sizeof(f));
	hs_vec_push(&f.tids, 101);
	hs_vec_push(&f.tids, 200);
	hs_vec_push(&f.pids, 100);
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "app;thread_start;work;compress 3\napp;thread_start;work;sys_write_[k] 1\n");
	free(out);
	hs_profile_free(q);
	hs_filter_release(&f);

	/* --comm, --include, --exclude: regular expressions, anywhere in the name */
	memset(&f, 0, sizeof(f));
	assert_int_equal(hs_filter_add_regex(&f, HS_FILTER_COMM, "^d", NULL), 0);
	assert_int_equal(hs_filter_add_regex(&f, HS_FILTER_EXCLUDE, "memcpy", NULL), 0);
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "db;main;query;lex 5\n");
	free(out);
	hs_profile_free(q);
	hs_filter_release(&f);

	memset(&f, 0, sizeof(f));
	assert_int_equal(hs_filter_add_regex(&f, HS_FILTER_INCLUDE, "^lex$", NULL), 0);
	assert_int_equal(hs_filter_add_regex(&f, HS_FILTER_INCLUDE, "sys_", NULL), 0);
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "app;main;parse;lex 4\napp;thread_start;work;sys_write_[k] 1\ndb;main;query;lex 5\n");
	free(out);
	hs_profile_free(q);
	hs_filter_release(&f);

	/* an inlined function is a frame too */
	{
		struct hs_profile *r = new_profile();
		struct hs_error err = {0};

		add(r, "x", 1, 1, 0, "main;outer>inner", 1);
		add(r, "x", 1, 1, 0, "main;other", 1);
		memset(&f, 0, sizeof(f));
		assert_int_equal(hs_filter_add_regex(&f, HS_FILTER_INCLUDE, "inner", NULL), 0);
		assert_int_equal(hs_filter_add_regex(&f, HS_FILTER_EXCLUDE, "(", &err), -EINVAL);
		assert_int_equal(err.code, -EINVAL);
		assert_true(err.detail[0]);
		q = filtered(r, &f);
		assert_int_equal(q->samples.n, 1);
		assert_int_equal(q->locations.v[hs_profile_stack_locs(q, q->samples.v[0].stack)[0]].nlines, 2);
		hs_profile_free(q);
		hs_filter_release(&f);
		hs_profile_free(r);
	}
	hs_profile_free(p);
}

static void test_filter_time(void **state)
{
	struct hs_profile *p = threads_profile(), *q;
	struct hs_filter f = {0};
	char *out;

	(void)state;
	/* seconds from the first sample (10 s): [1, 3) holds the samples at 11 and 12 */
	f.time = true;
	f.time_start = 1;
	f.time_end = 3;
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "app;main;parse;libc_read 2\napp;thread_start;work;compress 3\n");
	free(out);
	hs_profile_free(q);
	/* open end */
	f.time_start = 4.5;
	f.time_end = -1;
	q = filtered(p, &f);
	assert_int_equal(q->samples.n, 1);
	assert_int_equal(q->samples.v[0].time, 15000000000ULL);
	hs_profile_free(q);
	hs_profile_free(p);

	/* no timestamps: an error, not an empty profile */
	p = new_profile();
	add(p, "x", 1, 1, 0, "main", 1);
	q = NULL;
	assert_int_equal(hs_profile_filter(p, &f, &q), -ENODATA);
	assert_null(q);
	hs_profile_free(p);
}

/* The filter options' values: id lists, time windows, percentages; f untouched by a bad one. */
static void test_filter_values(void **state)
{
	struct hs_filter f = {0};

	(void)state;
	assert_int_equal(hs_filter_add_ids(&f, false, "1,0,2147483647"), 0);
	assert_int_equal(f.pids.n, 3);
	assert_int_equal(f.pids.v[2], INT32_MAX);
	assert_int_equal(hs_filter_add_ids(&f, false, "4,x"), -EINVAL);
	assert_int_equal(hs_filter_add_ids(&f, false, "4,-1"), -EINVAL);
	assert_int_equal(hs_filter_add_ids(&f, false, "2147483648"), -EINVAL);
	assert_int_equal(hs_filter_add_ids(&f, false, "4,,5"), -EINVAL);
	assert_int_equal(f.pids.n, 3);
	assert_int_equal(hs_filter_add_ids(&f, true, "7,"), 0);
	assert_int_equal(f.tids.n, 1);
	assert_int_equal(f.tids.v[0], 7);
	assert_false(f.time);
	assert_int_equal(hs_filter_set_time(&f, "2,1"), -EINVAL);
	assert_int_equal(hs_filter_set_time(&f, "1"), -EINVAL);
	assert_int_equal(hs_filter_set_time(&f, "x,1"), -EINVAL);
	assert_int_equal(hs_filter_set_time(&f, "1,1e10"), -EINVAL);
	assert_false(f.time);
	assert_int_equal(hs_filter_set_time(&f, "0.5,1.5"), 0);
	assert_true(f.time);
	assert_true(f.time_start == 0.5 && f.time_end == 1.5);
	assert_int_equal(hs_filter_set_time(&f, ",3"), 0);
	assert_true(f.time_start == 0 && f.time_end == 3);
	assert_int_equal(hs_filter_set_time(&f, "2,"), 0);
	assert_true(f.time_start == 2 && f.time_end < 0);
	assert_int_equal(hs_filter_set_min_percent(&f, "101"), -EINVAL);
	assert_int_equal(hs_filter_set_min_percent(&f, "nan"), -EINVAL);
	assert_int_equal(hs_filter_set_min_percent(&f, "1x"), -EINVAL);
	assert_true(f.min_percent == 0);
	assert_int_equal(hs_filter_set_min_percent(&f, "2.5"), 0);
	assert_true(f.min_percent == 2.5);
	hs_filter_release(&f);
}

static void test_filter_min_percent(void **state)
{
	struct hs_profile *p = new_profile(), *q;
	struct hs_filter f = {0};
	char *out;

	(void)state;
	add(p, "a", 1, 1, 0, "main;big;leaf", 80);
	add(p, "a", 1, 1, 0, "main;big;small1", 4);
	add(p, "a", 1, 1, 0, "main;big;small2", 4);
	add(p, "b", 2, 2, 0, "main;tiny;deep", 2);
	add(p, "a", 1, 1, 0, "main;outer>inlined_small", 5);
	add(p, "a", 1, 1, 0, "main;outer2;x", 5);
	/* threads are merged: main holds 100 of 100 */
	f.min_percent = 5;
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "a;main;big;[frames under 5%] 8\n"
				 "a;main;big;leaf 80\n"
				 "a;main;outer2;x 5\n"
				 "a;main;outer;inlined_small 5\n"
				 "b;main;[frames under 5%] 2\n");
	free(out);
	hs_profile_free(q);

	/* a cut inside an inline chain keeps the outer function */
	f.min_percent = 5.5;
	q = filtered(p, &f);
	out = folded(q);
	assert_string_equal(out, "a;main;[frames under 5.5%] 10\n"
				 "a;main;big;[frames under 5.5%] 8\n"
				 "a;main;big;leaf 80\n"
				 "b;main;[frames under 5.5%] 2\n");
	free(out);
	hs_profile_free(q);
	p->types.n = 2;
	{
		/* the share is of the value asked for: cpu is 1000 times samples, the same shares */
		f.value_index = 1;
		f.min_percent = 50;
		q = filtered(p, &f);
		out = folded(q);
		assert_string_equal(out, "a;main;[frames under 50%] 10\na;main;big;[frames under 50%] 8\n"
					 "a;main;big;leaf 80\nb;main;[frames under 50%] 2\n");
		free(out);
		hs_profile_free(q);
	}
	hs_profile_free(p);
}

/* ---- speedscope ---- */

static void test_speedscope(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	char *out;
	const char *a, *b, *c;

	(void)state;
	/* out of order in the profile: the writer sorts each thread's samples by time */
	add(p, "app", 100, 100, 3000, "main;b", 2);
	add(p, "app", 100, 100, 1000, "main;a", 1);
	add(p, "worker \"w\"", 100, 101, 500, "thread_start;work", 7);
	add(p, "app", 100, 100, 2000, "main;a", 1);
	out = hs_test_write_format(p, "speedscope", &o);
	assert_non_null(strstr(out, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	/* threads in the order of their first sample; names escaped; weighed in time (the cpu
	 * value, in nanoseconds) where the samples have it, though samples come first */
	a = strstr(out, "{\"type\":\"sampled\",\"name\":\"worker \\\"w\\\" (100/101)\",\"unit\":\"nanoseconds\","
			"\"startValue\":0,\"endValue\":7000,\"samples\":[[0,1]],\"weights\":[7000]}");
	b = strstr(out, "{\"type\":\"sampled\",\"name\":\"app (100/100)\",\"unit\":\"nanoseconds\",\"startValue\":0,"
			"\"endValue\":4000,\"samples\":[[2,3],[2,3],[2,4]],\"weights\":[1000,1000,2000]}");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	c = strstr(out, "\"shared\":{\"frames\":[\n{\"name\":\"thread_start\",\"file\":\"/usr/bin/app\"},\n"
			"{\"name\":\"work\",\"file\":\"/usr/bin/app\"},\n{\"name\":\"main\",\"file\":\"/usr/bin/app\"},\n"
			"{\"name\":\"a\",\"file\":\"/usr/bin/app\"},\n{\"name\":\"b\",\"file\":\"/usr/bin/app\"}]}");
	assert_non_null(c);
	/* the heaviest thread is the one shown first; no command known: a name of its own */
	assert_non_null(strstr(out, "\"activeProfileIndex\":0,"));
	assert_non_null(strstr(out, "\"name\":\"hotstack profile\""));
	free(out);

	/* --value cpu: the same; the profile named after the command record ran */
	o.value_index = 1;
	hs_vec_push(&p->comments, hs_profile_intern_str(p, "hotstack record -F 99 -o x.speedscope.json -- python3 app.py"));
	out = hs_test_write_format(p, "speedscope", &o);
	assert_non_null(strstr(out, "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":4000,"));
	assert_non_null(strstr(out, "\"weights\":[1000,1000,2000]"));
	assert_non_null(strstr(out, "\"name\":\"python3 app.py\""));
	free(out);
	hs_profile_free(p);
}

/* ---- flame trees: reversed, flame charts, HTML data ---- */

static void test_reverse_and_flamechart(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o = {0};
	struct hs_flame_tree t;
	struct hs_flame_boxes boxes = {0};
	uint32_t max_depth;
	char line[512];
	size_t at = 0;

	(void)state;
	add(p, "app", 1, 1, 1, "main;a;leaf", 1);
	add(p, "app", 1, 1, 2, "main;a;leaf", 1);
	add(p, "app", 1, 1, 3, "main;b;leaf", 1);
	add(p, "app", 1, 1, 4, "main;a;leaf", 1);

	/* reversed: merged from the leaves, the thread last */
	o.reverse = true;
	hs_flame_tree_init(&t);
	hs_flame_tree_add(&t, p, &o, 0, false);
	hs_flame_tree_finish(&t);
	hs_flame_layout(&t, 0, &boxes, &max_depth);
	for (size_t i = 0; i < boxes.n; i++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%u:%s:%lld ", boxes.v[i].depth,
				       t.nodes.v[boxes.v[i].node].name, (long long)boxes.v[i].value);
	assert_string_equal(line, "0:all:4 1:leaf:4 2:a:3 3:main:3 4:app:3 2:b:1 3:main:1 4:app:1 ");
	hs_flame_tree_release(&t);

	/* flame chart: time order, a node continues only while the path is the same */
	o.reverse = false;
	o.flamechart = true;
	boxes.n = 0;
	at = 0;
	hs_flame_tree_init(&t);
	hs_flame_tree_add(&t, p, &o, 0, false);
	hs_flame_tree_finish(&t);
	hs_flame_layout(&t, 0, &boxes, &max_depth);
	for (size_t i = 0; i < boxes.n; i++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%u:%s:%lld@%lld ", boxes.v[i].depth,
				       t.nodes.v[boxes.v[i].node].name, (long long)boxes.v[i].value, (long long)boxes.v[i].off);
	assert_string_equal(line, "0:all:4@0 1:app-1/1:4@0 2:main:4@0 3:a:2@0 4:leaf:2@0 3:b:1@2 4:leaf:1@2 3:a:1@3 "
				  "4:leaf:1@3 ");
	hs_flame_tree_release(&t);

	/* two threads of one name, their samples alternating: a lane each, not stripes */
	add(p, "app", 1, 2, 2, "main;w;leaf", 1);
	add(p, "app", 1, 2, 4, "main;w;leaf", 1);
	boxes.n = 0;
	at = 0;
	hs_flame_tree_init(&t);
	hs_flame_tree_add(&t, p, &o, 0, false);
	hs_flame_tree_finish(&t);
	hs_flame_layout(&t, 0, &boxes, &max_depth);
	for (size_t i = 0; i < boxes.n; i++)
		if (boxes.v[i].depth <= 1)
			at += (size_t)snprintf(line + at, sizeof(line) - at, "%s:%lld@%lld ",
					       t.nodes.v[boxes.v[i].node].name, (long long)boxes.v[i].value,
					       (long long)boxes.v[i].off);
	assert_string_equal(line, "all:6@0 app-1/1:4@0 app-1/2:2@4 ");
	hs_flame_tree_release(&t);
	free(boxes.v);
	hs_profile_free(p);
}

static void test_html(void **state)
{
	struct hs_profile *p = threads_profile();
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	o.title = "t</script><x>";
	out = hs_test_write_format(p, "html", &o);
	assert_non_null(strstr(out, "<!DOCTYPE html>"));
	assert_non_null(strstr(out, "<title>t&lt;/script&gt;&lt;x&gt;</title>"));
	assert_non_null(strstr(out, "window.hotstackFlame"));
	/* every frame, depth first, root first, siblings by name */
	assert_non_null(strstr(out, "\"names\":[\"all\",\"app\",\"main\",\"parse\",\"lex\",\"libc_read\",\"thread_start\","
				    "\"work\",\"compress\",\"sys_write\",\"db\",\"query\",\"libc_memcpy\"],\n"
				    "\"kinds\":[3,3,0,0,0,0,0,0,0,1,3,0,0]"));
	assert_non_null(strstr(out, "\"depth\":[0,1,2,3,4,4,2,3,4,4,1,2,3,4,4],\n"
				    "\"name\":[0,1,2,3,4,5,6,7,8,9,10,2,11,4,12],\n"
				    "\"value\":[20,10,6,6,4,2,4,4,3,1,10,10,10,5,5]"));
	free(out);
	hs_profile_free(p);
}

/* ---- differential views ---- */

static void parse_fill(const char *svg, const char *title_prefix, int rgb[3])
{
	const char *t = strstr(svg, title_prefix), *f;

	assert_non_null(t);
	f = strstr(t, "fill=\"rgb(");
	assert_non_null(f);
	assert_int_equal(sscanf(f, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

static void test_diff(void **state)
{
	struct hs_profile *a = new_profile(), *b = new_profile();
	struct hs_output_opts o = {0};
	char *out;
	int c[3];

	(void)state;
	/* b: hot doubled; the rest as before */
	add(a, "w", 1, 1, 0, "main;hot", 10);
	add(a, "w", 1, 1, 0, "main;f1", 30);
	add(a, "w", 1, 1, 0, "main;f2", 30);
	add(a, "w", 1, 1, 0, "main;f3", 30);
	add(a, "w", 1, 1, 0, "main;gone", 1);
	add(b, "w", 1, 1, 0, "main;hot", 20);
	add(b, "w", 1, 1, 0, "main;f1", 30);
	add(b, "w", 1, 1, 0, "main;f2", 30);
	add(b, "w", 1, 1, 0, "main;f3", 30);
	add(b, "w", 1, 1, 0, "main;new", 1);

	out = diff_to_string(a, b, "folded", &o);
	assert_string_equal(out, "w;main;f1 30 30\nw;main;f2 30 30\nw;main;f3 30 30\nw;main;gone 1 0\n"
				 "w;main;hot 10 20\nw;main;new 0 1\n");
	free(out);
	/* difffolded.pl -n: a's counts scaled to b's total (111 / 101), rounded down */
	o.normalize = true;
	out = diff_to_string(a, b, "folded", &o);
	assert_string_equal(out, "w;main;f1 32 30\nw;main;f2 32 30\nw;main;f3 32 30\nw;main;gone 1 0\n"
				 "w;main;hot 10 20\nw;main;new 0 1\n");
	free(out);
	o.normalize = false;

	out = diff_to_string(a, b, "svg", &o);
	assert_non_null(strstr(out, "Differential Flame Graph"));
	/* hot grew most: the deepest red */
	parse_fill(out, "<title>hot (20 samples, was 9.90%, 18.02%)", c);
	assert_int_equal(c[0], 255);
	assert_true(c[1] < 40 && c[2] < 40);
	/* the others changed a third as much (their shares fell from 29.7% to 27.0%): near grey,
	 * a little blue */
	parse_fill(out, "<title>f1 (30 samples, was 29.70%, 27.03%)", c);
	assert_true(c[2] > c[0] && c[0] == c[1] && c[0] >= 195);
	/* main and the thread did not change */
	parse_fill(out, "<title>main (111 samples, was 100.00%, 100.00%)", c);
	assert_true(c[0] == 220 && c[1] == 220 && c[2] == 220);
	/* widths are b's: what is gone is not drawn */
	assert_null(strstr(out, "<title>gone"));
	assert_non_null(strstr(out, "<title>new (1 samples, was 0.00%, 0.90%)"));
	free(out);

	out = diff_to_string(a, b, "html", &o);
	assert_non_null(strstr(out, "\"diff\":true"));
	assert_non_null(strstr(out, "\"baseTotal\":101"));
	free(out);
	hs_profile_free(a);
	hs_profile_free(b);
}

static void test_palettes(void **state)
{
	struct hs_rgb c;

	(void)state;
	for (int i = 0; i < 50; i++) {
		char name[16];
		snprintf(name, sizeof(name), "fn%d", i);
		c = hs_flame_color(HS_PALETTE_HOT, name, HS_KIND_USER, false);
		assert_true(c.r >= 205 && c.g <= 230 && c.b <= 55);
		c = hs_flame_color(HS_PALETTE_MEM, name, HS_KIND_USER, false);
		assert_true(c.r == 0 && c.g >= 190);
		c = hs_flame_color(HS_PALETTE_IO, name, HS_KIND_USER, false);
		assert_true(c.b >= 190 && c.r == c.g);
	}
	/* java: JIT and Java classes green, C++ yellow, kernel orange, inlined aqua, the rest red */
	c = hs_flame_color(HS_PALETTE_JAVA, "Ljava/lang/String;::hashCode", HS_KIND_USER, false);
	assert_true(c.g >= 200 && c.r <= 110);
	c = hs_flame_color(HS_PALETTE_JAVA, "Interpreter", HS_KIND_JIT, false);
	assert_true(c.g >= 200 && c.r <= 110);
	c = hs_flame_color(HS_PALETTE_JAVA, "JavaThread::run", HS_KIND_USER, false);
	assert_true(c.r >= 175 && c.r == c.g && c.b <= 70);
	c = hs_flame_color(HS_PALETTE_JAVA, "do_syscall_64", HS_KIND_KERNEL, false);
	assert_true(c.r >= 190 && c.b == 0);
	c = hs_flame_color(HS_PALETTE_JAVA, "main", HS_KIND_USER, false);
	assert_true(c.r >= 200 && c.g < c.r);
	/* js: JIT code with a source path green, without one aqua */
	c = hs_flame_color(HS_PALETTE_JS, "LazyCompile:~f /app/x.js:3", HS_KIND_JIT, false);
	assert_true(c.g >= 200 && c.b <= 110);
	c = hs_flame_color(HS_PALETTE_JS, "Builtin:ArgumentsAdaptor", HS_KIND_JIT, false);
	assert_true(c.g >= 165 && c.b >= 165 && c.r <= 110);
	/* diff colours: neutral, full red, full blue */
	c = hs_flame_diff_color(0);
	assert_true(c.r == 220 && c.g == 220 && c.b == 220);
	c = hs_flame_diff_color(1);
	assert_true(c.r == 255 && c.g == 30 && c.b == 30);
	c = hs_flame_diff_color(-0.5);
	assert_true(c.b > c.r && c.r == c.g && c.r == 220 - 48);
}

/* The option words the writers own: palette names and --sort keys. */
static void test_option_words(void **state)
{
	enum hs_palette pal = HS_PALETTE_KIND;
	uint8_t sort[HS_SORT_MAX] = {HS_SORT_PID};

	(void)state;
	assert_int_equal(hs_palette_from_name("js", &pal), 0);
	assert_int_equal(pal, HS_PALETTE_JS);
	assert_int_equal(hs_palette_from_name("JS", &pal), -EINVAL);
	assert_int_equal(hs_palette_from_name("", &pal), -EINVAL);
	assert_int_equal(pal, HS_PALETTE_JS);
	assert_int_equal(hs_sort_parse("sym,comm", sort), 0);
	assert_int_equal(sort[0], HS_SORT_SYM);
	assert_int_equal(sort[1], HS_SORT_COMM);
	assert_int_equal(sort[2], 0);
	assert_int_equal(hs_sort_parse("comm,pid,tid,dso,sym", sort), 0);
	assert_int_equal(sort[4], HS_SORT_SYM);
	/* perf's names: symbol for sym, dso,symbol as perf report -s takes it */
	assert_int_equal(hs_sort_parse("dso,symbol", sort), 0);
	assert_true(sort[0] == HS_SORT_DSO && sort[1] == HS_SORT_SYM && !sort[2]);
	assert_int_equal(hs_sort_parse("sym,symbol", sort), -EINVAL);
	/* unknown, repeated, a prefix: refused, and the keys kept */
	assert_int_equal(hs_sort_parse("comm,bogus", sort), -EINVAL);
	assert_int_equal(hs_sort_parse("sym,sym", sort), -EINVAL);
	assert_int_equal(hs_sort_parse("co", sort), -EINVAL);
	assert_int_equal(hs_sort_parse("", sort), -ENODATA);
	assert_int_equal(hs_sort_parse(",", sort), -EINVAL);
	assert_int_equal(sort[0], HS_SORT_DSO);
}

/* --tree and --root words. */
static void test_option_tree_root(void **state)
{
	struct hs_output_opts o = {0};
	enum hs_tree t = HS_TREE_NONE;

	(void)state;
	assert_int_equal(hs_tree_from_name("caller", &t), 0);
	assert_int_equal(t, HS_TREE_CALLER);
	assert_int_equal(hs_tree_from_name("callee", &t), 0);
	assert_int_equal(t, HS_TREE_CALLEE);
	assert_int_equal(hs_tree_from_name("", &t), -EINVAL);
	assert_int_equal(t, HS_TREE_CALLEE);
	/* perf report's -g: type, threshold and order, each optional */
	assert_int_equal(hs_report_callgraph_set(&o, NULL), 0);
	assert_true(o.tree == HS_TREE_CALLER && o.tree_min == 0);
	assert_int_equal(hs_report_callgraph_set(&o, "callee"), 0);
	assert_int_equal(o.tree, HS_TREE_CALLEE);
	assert_int_equal(hs_report_callgraph_set(&o, "graph,2.5,caller"), 0);
	assert_true(o.tree == HS_TREE_CALLER && o.tree_min == 2.5);
	assert_int_equal(hs_report_callgraph_set(&o, "0,callee"), 0);
	assert_true(o.tree == HS_TREE_CALLEE && o.tree_min < 0); /* 0: every line */
	assert_int_equal(hs_report_callgraph_set(&o, "none"), 0);
	assert_int_equal(o.tree, HS_TREE_OFF);
	/* perf's other types and keys are refused, o untouched */
	o.tree = HS_TREE_CALLER;
	assert_int_equal(hs_report_callgraph_set(&o, "flat"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "graph,0.5,caller,address"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "graph,,caller"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "200"), -EINVAL);
	assert_true(o.tree == HS_TREE_CALLER && o.tree_min < 0);
	/* perf's fourth field: the function key is what the tree has; other keys, types, a print
	 * limit (a second number) and a field given twice are refused, o untouched */
	assert_int_equal(hs_report_callgraph_set(&o, "graph,0.5,callee,function"), 0);
	assert_true(o.tree == HS_TREE_CALLEE && o.tree_min == 0.5);
	o.tree = HS_TREE_CALLER;
	assert_int_equal(hs_report_callgraph_set(&o, "caller,0.5,callee"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "graph,0.5,1,caller"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "graph,none"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "function,function"), -EINVAL);
	assert_int_equal(hs_report_callgraph_set(&o, "fractal,0.5,caller,function,branch"), -EINVAL);
	assert_true(o.tree == HS_TREE_CALLER && o.tree_min == 0.5);
	/* a -g value, not a file: a comma, a word -g takes, or one of perf's -g words */
	assert_true(hs_report_callgraph_like("graph,0.5,caller,address"));
	assert_true(hs_report_callgraph_like("caller"));
	assert_true(hs_report_callgraph_like("0.5"));
	assert_true(hs_report_callgraph_like("folded"));
	assert_true(hs_report_callgraph_like("a,b"));
	assert_false(hs_report_callgraph_like("perf.data"));
	assert_false(hs_report_callgraph_like("hotstack.pb.gz"));
	assert_false(hs_report_callgraph_like("callers"));
	assert_int_equal(hs_root_set(&o, "tid"), 0);
	assert_true(o.root_tid && !o.root_pid);
	assert_int_equal(hs_root_set(&o, "process"), -EINVAL);
	assert_true(o.root_tid && !o.root_pid);
	assert_int_equal(hs_root_set(&o, "pid"), 0);
	assert_true(!o.root_tid && o.root_pid);
	assert_int_equal(hs_root_set(&o, "comm"), 0);
	assert_true(!o.root_tid && !o.root_pid);
}

/* Which writer option applies to which format, and the options set by name. */
static void test_option_table(void **state)
{
	static const char *const diff_takes[] = {"width", "root", "top", "lines", "title", "inverted"},
				 *const diff_refuses[] = {"sort", "stats", "children", "no-children", "tree", "call-graph",
							  "palette", "flamechart"};
	const struct hs_format *svg = hs_format_from_name("svg"), *txt = hs_format_from_name("txt"),
			       *folded = hs_format_from_name("folded"), *script = hs_format_from_name("script");
	struct hs_output_opts o = {0};
	struct hs_error err = {0};
	struct hs_strbuf sb = {0};

	(void)state;
	assert_true(hs_output_option_applies(hs_output_option_find("width"), svg));
	assert_false(hs_output_option_applies(hs_output_option_find("width"), txt));
	assert_false(hs_output_option_applies(hs_output_option_find("palette"), txt));
	assert_true(hs_output_option_applies(hs_output_option_find("top"), txt));
	assert_false(hs_output_option_applies(hs_output_option_find("top"), svg));
	assert_false(hs_output_option_applies(hs_output_option_find("stats"), svg));
	assert_false(hs_output_option_applies(hs_output_option_find("title"), script));
	assert_true(hs_output_option_applies(hs_output_option_find("root"), folded));
	assert_false(hs_output_option_applies(hs_output_option_find("root"), txt));
	assert_true(hs_output_option_applies(hs_output_option_find("lines"), script));
	assert_true(hs_output_option_applies(hs_output_option_find("value"), svg));
	assert_string_equal(hs_format_noun(txt), "a text report");
	/* every option has its help, and what it sets when it is not for every format */
	for (size_t i = 0; i < hs_noutput_options; i++) {
		const struct hs_output_option *h = &hs_output_options[i];
		assert_non_null(strstr(h->help, h->name));
		assert_true(!h->formats || h->sets);
		/* each word a format's name, or annotate's or diff's */
		for (const char *w = h->formats; w && *w; w += strcspn(w, " "), w += *w == ' ') {
			char name[32];
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(w, " "), w);
			assert_true(hs_format_from_name(name) || !strcmp(name, hs_annotate_format.name) ||
				    !strcmp(name, hs_diff_format.name));
		}
	}
	/* annotate takes --top, and no option of the report's tables or tree */
	assert_true(hs_output_option_applies(hs_output_option_find("top"), &hs_annotate_format));
	assert_false(hs_output_option_applies(hs_output_option_find("tree"), &hs_annotate_format));
	assert_false(hs_output_option_applies(hs_output_option_find("sort"), &hs_annotate_format));
	/* diff's writers take the flame graph's and folded stacks' shape, and --top; not the report's
	 * tables, tree or statistics, nor a palette (their colours are the change) */
	for (size_t i = 0; i < HS_ARRAY_SIZE(diff_takes); i++)
		assert_true(hs_output_option_applies(hs_output_option_find(diff_takes[i]), &hs_diff_format));
	for (size_t i = 0; i < HS_ARRAY_SIZE(diff_refuses); i++)
		assert_false(hs_output_option_applies(hs_output_option_find(diff_refuses[i]), &hs_diff_format));
	assert_string_equal(hs_format_noun(&hs_diff_format), "a differential view");
	{
		const char *outs[] = {"d.svg", "d.folded", "d.pb.gz"};
		struct hs_error e = {0};

		assert_int_equal(hs_diff_outputs_check(outs, 2, NULL, true, &e), 0);
		assert_int_equal(hs_diff_outputs_check(outs, 1, NULL, false, &e), 0);
		/* --normalize changes .folded only; a format without a diff writer is refused */
		assert_int_equal(hs_diff_outputs_check(outs, 1, NULL, true, &e), -EINVAL);
		assert_non_null(strstr(e.detail, "--normalize does not apply to a flame graph"));
		memset(&e, 0, sizeof(e));
		assert_int_equal(hs_diff_outputs_check(outs, 3, NULL, false, &e), -EINVAL);
		assert_non_null(strstr(e.detail, ", not 'd.pb.gz'"));
	}
	hs_output_options_help(&sb, false);
	assert_non_null(strstr(hs_strbuf_str(&sb), "--width PIXELS"));
	assert_null(strstr(hs_strbuf_str(&sb), "--children"));
	hs_strbuf_reset(&sb);
	hs_output_options_help(&sb, true);
	assert_non_null(strstr(hs_strbuf_str(&sb), "--no-children"));
	hs_strbuf_release(&sb);

	assert_int_equal(hs_output_option_set(&o, "width", "800", &err), 0);
	assert_int_equal(o.width, 800);
	assert_int_equal(hs_output_option_set(&o, "width", "99", &err), -EINVAL);
	assert_string_equal(err.detail, "invalid width '99' (expected a number from 100 to 100000)");
	assert_int_equal(o.width, 800);
	assert_int_equal(hs_output_option_set(&o, "tree", NULL, &err), 0);
	assert_int_equal(o.tree, HS_TREE_CALLER);
	assert_int_equal(hs_output_option_set(&o, "children", NULL, &err), 0);
	assert_int_equal(o.children, HS_CHILDREN_ON);
	assert_int_equal(hs_output_option_set(&o, "stats", NULL, &err), 0);
	assert_true(o.stats);
	assert_int_equal(hs_output_option_set(&o, "value", "cpu", &err), -ENOENT);
}

/* ---- the report ---- */

static void test_report_views(void **state)
{
	struct hs_profile *p = threads_profile();
	struct hs_output_opts o = {0};
	char *out;

	(void)state;
	o.tree = HS_TREE_CALLER; /* perf's caller order: from the callers down */
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "Call tree, callees under their callers (lines under 0.5% of the total left out):\n"
				    "  total%    self%  function\n"
				    "  80.00%    0.00%  main  [app]\n"
				    "  50.00%    0.00%  |-- query\n"
				    "  25.00%   25.00%  |   |-- libc_memcpy  [libc.so.6]\n"
				    "  25.00%   25.00%  |   `-- lex\n"
				    "  30.00%    0.00%  `-- parse\n"
				    "  20.00%   20.00%      |-- lex\n"
				    "  10.00%   10.00%      `-- libc_read  [libc.so.6]\n"
				    "  20.00%    0.00%  thread_start  [app]\n"
				    "  20.00%    0.00%  `-- work\n"
				    "  15.00%   15.00%      |-- compress\n"
				    "   5.00%    5.00%      `-- sys_write  [kernel.kallsyms]\n"));
	free(out);

	o.tree = HS_TREE_CALLEE; /* perf's callee order: from the leaves up */
	o.tree_min = 20;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "Call tree, callers under the functions they called (lines under 20% of the total "
				    "left out):\n"
				    "  total%    self%  function\n"
				    "  45.00%   45.00%  lex  [app]\n"
				    "  25.00%           |-- query\n"
				    "  25.00%           |   `-- main\n"
				    "  20.00%           `-- parse\n"
				    "  20.00%               `-- main\n"
				    "  25.00%   25.00%  libc_memcpy  [libc.so.6]\n"
				    "  25.00%           `-- query  [app]\n"
				    "  25.00%               `-- main\n"));
	free(out);

	/* --no-children: self only, by self; --children: the table by total only */
	memset(&o, 0, sizeof(o));
	o.children = HS_CHILDREN_OFF;
	out = hs_test_write_format(p, "txt", &o);
	assert_null(strstr(out, "total"));
	assert_non_null(strstr(out, "Top functions by self:\n   self%         self  function\n"));
	free(out);
	o.children = HS_CHILDREN_ON;
	out = hs_test_write_format(p, "txt", &o);
	assert_null(strstr(out, "Top functions by self"));
	assert_non_null(strstr(out, "Top functions by total (self and callees):\n"
				    "   self%         self   total%        total  function\n"
				    "   0.00%            0   80.00%           16  main  [app]\n"));
	free(out);

	memset(&o, 0, sizeof(o));
	o.sort[0] = HS_SORT_COMM;
	o.sort[1] = HS_SORT_DSO;
	o.sort[2] = HS_SORT_SYM;
	out = hs_test_write_format(p, "txt", &o);
	assert_null(strstr(out, "Top functions"));
	assert_non_null(strstr(out, "Grouped by command,shared object,symbol (self: samples whose innermost frame it is; "
				    "total: samples it is in):\n"
				    "   self%         self   total%        total  command  shared object      symbol\n"
				    "  25.00%            5   25.00%            5  db       libc.so.6          libc_memcpy\n"
				    "  25.00%            5   25.00%            5  db       app                lex\n"
				    "  20.00%            4   20.00%            4  app      app                lex\n"
				    "  15.00%            3   15.00%            3  app      app                compress\n"
				    "  10.00%            2   10.00%            2  app      libc.so.6          libc_read\n"
				    "   5.00%            1    5.00%            1  app      [kernel.kallsyms]  sys_write\n"
				    "   0.00%            0   50.00%           10  db       app                query\n"
				    "   0.00%            0   50.00%           10  db       app                main\n"));
	free(out);

	o.sort[0] = HS_SORT_PID;
	o.sort[1] = 0;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "   self%         self   total%        total  pid\n"
				    "  50.00%           10   50.00%           10  100\n"
				    "  50.00%           10   50.00%           10  200\n"));
	free(out);

	memset(&o, 0, sizeof(o));
	o.stats = true;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "Where samples land (the innermost frame), by kind of code:\n"
				    "   share      samples  kind\n"
				    "  95.00%           19  user\n"
				    "   5.00%            1  kernel\n"));
	assert_non_null(strstr(out, "by module:\n   share      samples  module\n"
				    "  60.00%           12  /usr/bin/app\n"
				    "  35.00%            7  /usr/lib/libc.so.6\n"));
	free(out);
	hs_profile_free(p);
}

/* --stats counts the stacks that end in each of the unwinder's stop reasons, by the name of the
 * pseudo-frame that ends them (src/unwind/callchain.c), apart from complete ones. */
static void test_report_stop_reasons(void **state)
{
	struct hs_profile *p = new_profile();
	struct hs_output_opts o;
	char *out, line[128];

	(void)state;
	add(p, "app", 1, 1, 0, "main;work", 100);
	for (int s = HS_STOP_END + 1; s < HS_STOP_COUNT; s++) {
		snprintf(line, sizeof(line), "%s;main;work", hs_stop_name((enum hs_stop)s));
		add(p, "app", 1, 1, 0, line, s);
	}
	memset(&o, 0, sizeof(o));
	o.stats = true;
	out = hs_test_write_format(p, "txt", &o);
	assert_non_null(strstr(out, "How stacks end:\n"));
	for (int s = HS_STOP_END + 1; s < HS_STOP_COUNT; s++) {
		snprintf(line, sizeof(line), " %12d  %s\n", s, hs_stop_name((enum hs_stop)s));
		if (!strstr(out, line))
			fail_msg("--stats does not count '%s':\n%s", hs_stop_name((enum hs_stop)s), out);
	}
	assert_non_null(strstr(out, "          100  complete"));
	free(out);
	hs_profile_free(p);
}

/* Every row of the table is found again by its name, its aliases and its extensions, and no
 * name or extension of one row is taken by another. */
static void test_format_table(void **state)
{
	char path[64];

	(void)state;
	assert_true(hs_nformats > 0);
	for (size_t i = 0; i < hs_nformats; i++) {
		const struct hs_format *f = &hs_formats[i];

		assert_non_null(f->name);
		assert_non_null(f->write);
		assert_ptr_equal(hs_format_from_name(f->name), f);
		for (size_t j = 0; j < HS_FORMAT_MAX_NAMES && f->aliases[j]; j++)
			assert_ptr_equal(hs_format_from_name(f->aliases[j]), f);
		for (size_t j = 0; j < HS_FORMAT_MAX_NAMES && f->exts[j]; j++) {
			assert_int_equal(f->exts[j][0], '.');
			snprintf(path, sizeof(path), "dir.d/out%s", f->exts[j]);
			assert_ptr_equal(hs_format_from_path(path), f);
			/* an extension alone is no name of a file */
			assert_null(hs_format_from_path(f->exts[j]));
		}
		/* diff lists what it writes by extension, under what the row says it writes */
		if (f->write_diff) {
			assert_non_null(f->exts[0]);
			assert_non_null(f->diff_help);
		}
	}
	assert_null(hs_format_from_name("bogus"));
	assert_null(hs_format_from_name(""));
	assert_null(hs_format_from_path("out.bogus"));
	assert_null(hs_format_from_path("out"));
	assert_null(hs_format_from_path("-"));
	/* what the commands decide from the rows: speedscope orders samples by time, pprof labels
	 * them with it, the others merge them */
	assert_int_equal(hs_format_from_name("speedscope")->times, HS_TIMES_ORDER);
	assert_int_equal(hs_format_from_name("pprof")->times, HS_TIMES_IF_KEPT);
	assert_int_equal(hs_format_from_path("out.svg")->times, HS_TIMES_UNUSED);
	assert_ptr_equal(hs_format_from_name("report"), hs_format_from_path("out.txt"));
	assert_ptr_equal(hs_format_from_name("pb.gz"), hs_format_from_path("out.pb.gz"));
}

/* The default output name of input in, with the base "hotstack". */
static void output_name_is(const char *in, const char *ext, const char *want)
{
	char *name = hs_output_name(in, "hotstack", ext);

	assert_string_equal(name, want);
	free(name);
}

/* What the commands ask the table: the format of an output, the lists help and messages show,
 * default names, whether an output can be written. */
static void test_format_outputs(void **state)
{
	struct hs_strbuf sb = {0};
	char dir[256], path[300];

	(void)state;
	assert_ptr_equal(hs_format_for_output("a.svg", NULL), hs_format_from_name("svg"));
	assert_ptr_equal(hs_format_for_output("a.svg", "folded"), hs_format_from_name("svg"));
	assert_ptr_equal(hs_format_for_output("a.out", "folded"), hs_format_from_name("folded"));
	assert_ptr_equal(hs_format_for_output("-", "txt"), hs_format_from_name("txt"));
	assert_null(hs_format_for_output("-", NULL));
	assert_null(hs_format_for_output("a.out", NULL));
	assert_null(hs_format_for_output("a.out", "bogus"));
	hs_formats_list(&sb, false, false, "", ", ");
	assert_string_equal(hs_strbuf_str(&sb), "svg, html, folded, pprof, otlp, speedscope, firefox, chrome, txt, json");
	/* the longest extension that ends a name is its format's: .otlp.pb is not pprof's .pb */
	assert_ptr_equal(hs_format_for_output("a.otlp.pb", NULL), hs_format_from_name("otlp"));
	assert_ptr_equal(hs_format_for_output("a.pb", NULL), hs_format_from_name("pprof"));
	assert_ptr_equal(hs_format_for_output("a.speedscope.json", NULL), hs_format_from_name("speedscope"));
	hs_strbuf_reset(&sb);
	hs_formats_list(&sb, true, true, "OUT", "|");
	assert_string_equal(hs_strbuf_str(&sb), "OUT.svg|OUT.html|OUT.folded|OUT.txt");
	hs_strbuf_reset(&sb);
	hs_formats_diff_help(&sb);
	assert_string_equal(hs_strbuf_str(&sb), "flame graphs (.svg, .html), two-column folded stacks (.folded) and a "
						"text report of the changes (.txt)");
	hs_strbuf_release(&sb);
	output_name_is("dir.d/a.pb.gz", ".svg", "dir.d/a.svg");
	output_name_is("perf.data.old", ".svg", "perf.data.old.svg");
	output_name_is("-", ".html", "hotstack.html");
	/* directories: their name; ".", "..": the base */
	output_name_is("prof/periods//", ".svg", "prof/periods.svg");
	output_name_is("./", ".svg", "hotstack.svg");
	output_name_is("a/..", ".svg", "hotstack.svg");
	output_name_is("a/.x", ".svg", "a/.x.svg");
	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-outputs"), 0);
	snprintf(path, sizeof(path), "%s/none/out.svg", dir);
	assert_int_equal(hs_output_probe(path), -ENOENT);
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	assert_int_equal(hs_output_probe(path), 0);
	/* found out without leaving a file behind */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(hs_test_rmtree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_ids_and_names),
		cmocka_unit_test(test_filter_time),
		cmocka_unit_test(test_filter_min_percent),
		cmocka_unit_test(test_filter_values),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_reverse_and_flamechart),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_palettes),
		cmocka_unit_test(test_option_words),
		cmocka_unit_test(test_option_tree_root),
		cmocka_unit_test(test_report_views),
		cmocka_unit_test(test_report_stop_reasons),
		cmocka_unit_test(test_format_table),
		cmocka_unit_test(test_option_table),
		cmocka_unit_test(test_format_outputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
