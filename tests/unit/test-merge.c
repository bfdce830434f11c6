/* Merging profiles (profile/merge.h) and reading several inputs as one (hs_profile_load_many(),
 * profile/load.h): two profiles with stacks and value types in common and of their own, their
 * totals per stack and per type, labels, times, comments and counters once merged; files and
 * directories read together, what a directory's reading leaves out, and the errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "profile/load.h"
#include "profile/merge.h"
#include "profile/profile.h"
#include "util/strbuf.h"

/* ---- building profiles ---- */

static uint32_t fn(struct hs_profile *p, const char *name)
{
	uint32_t n = hs_profile_intern_str(p, name);

	return hs_profile_function(p, n, n, hs_profile_intern_str(p, "src.c"), 10);
}

/* A location in mapping m at addr: the function outer, with inner inlined into it (or NULL). */
static uint32_t loc(struct hs_profile *p, uint32_t m, uint64_t addr, const char *outer, const char *inner)
{
	struct hs_line lines[2] = {{fn(p, inner ? inner : outer), 7}, {fn(p, outer), 8}};

	return hs_profile_location(p, m, addr, HS_KIND_USER, inner ? lines : &lines[1], inner ? 2 : 1);
}

static uint32_t mapping(struct hs_profile *p, const char *file, uint64_t start)
{
	struct hs_mapping m = {.start = start, .limit = start + 0x10000, .kind = HS_KIND_USER};

	m.file = hs_profile_intern_str(p, file);
	m.build_id = hs_profile_intern_str(p, "abcdef");

	return hs_profile_mapping(p, &m);
}

/* Periods of 1000 ns of CPU time, from start on for duration. */
static void header(struct hs_profile *p, int64_t start, int64_t duration)
{
	p->period_type.type = hs_profile_intern_str(p, "cpu");
	p->period_type.unit = hs_profile_intern_str(p, "nanoseconds");
	p->period = 1000;
	p->time_nanos = start;
	p->duration_nanos = duration;
}

static void type(struct hs_profile *p, const char *t, const char *unit, const char *event)
{
	uint32_t i = hs_profile_add_type(p, t, unit);

	while (p->type_events.n <= i)
		hs_vec_push(&p->type_events, 0);
	p->type_events.v[i] = hs_profile_intern_str(p, event);
}

/* Profile a: samples and cpu; main -> work (with step inlined), main -> idle. */
static struct hs_profile *profile_a(void)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t m = mapping(p, "/usr/bin/app", 0x400000), main_loc, s1, s2;
	int64_t v1[] = {3, 3000}, v2[] = {2, 2000};

	type(p, "samples", "count", "");
	type(p, "cpu", "nanoseconds", "");
	header(p, 1000, 500);
	main_loc = loc(p, m, 0x401000, "main", NULL);
	s1 = hs_profile_stack(p, (uint32_t[]){loc(p, m, 0x402000, "work", "step"), main_loc}, 2);
	s2 = hs_profile_stack(p, (uint32_t[]){loc(p, m, 0x403000, "idle", NULL), main_loc}, 2);
	hs_profile_add_sample(p, s1, hs_profile_intern_str(p, "app"), 1, 1, 0, v1);
	hs_profile_add_sample(p, s2, hs_profile_intern_str(p, "app"), 1, 2, 0, v2);
	hs_vec_push(&p->comments, hs_profile_intern_str(p, "hotstack record -- app"));
	hs_profile_note_lost(p, 90, 10);
	p->values_saturated = 1;
	p->stacks_over_cap = 4;
	return p;
}

/* Profile b: cpu, samples (the other order) and wall; main -> work as in a (its own ids), and
 * main -> spin in a library, by another thread. */
static struct hs_profile *profile_b(void)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t lib, m, main_loc, s1, s3;
	int64_t v1[] = {1000, 1, 7}, v3[] = {500, 1, 9};

	hs_profile_intern_str(p, "something else first"); /* ids unlike a's */
	lib = mapping(p, "/usr/lib/libspin.so", 0x7f0000000000);
	m = mapping(p, "/usr/bin/app", 0x400000);
	type(p, "cpu", "nanoseconds", "cpu-clock");
	type(p, "samples", "count", "");
	type(p, "wall", "nanoseconds", "");
	header(p, 1200, 800);
	main_loc = loc(p, m, 0x401000, "main", NULL);
	s3 = hs_profile_stack(p, (uint32_t[]){loc(p, lib, 0x7f0000001000, "spin", NULL), main_loc}, 2);
	s1 = hs_profile_stack(p, (uint32_t[]){loc(p, m, 0x402000, "work", "step"), main_loc}, 2);
	hs_profile_add_sample(p, s3, hs_profile_intern_str(p, "worker"), 2, 3, 5, v3);
	hs_profile_add_sample(p, s1, hs_profile_intern_str(p, "app"), 1, 1, 0, v1);
	hs_vec_push(&p->comments, hs_profile_intern_str(p, "other"));
	hs_vec_push(&p->comments, hs_profile_intern_str(p, "hotstack record -- app"));
	hs_profile_note_lost(p, 40, 5);
	p->values_saturated = 2;
	p->stacks_over_cap = 5;
	p->frames_over_cap = true;
	return p;
}

/* ---- reading profiles back ---- */

/* Sample i as "comm;outermost;...;innermost" (inlined functions after those they were inlined
 * into). */
static void sample_key(const struct hs_profile *p, size_t i, struct hs_strbuf *sb)
{
	const struct hs_sample *s = &p->samples.v[i];
	const struct hs_stack *st = &p->stacks.v[s->stack];
	const uint32_t *locs = hs_profile_stack_locs(p, s->stack);

	hs_strbuf_reset(sb);
	hs_strbuf_adds(sb, hs_profile_str(p, s->comm));
	for (uint32_t k = st->nlocs; k-- > 0;) {
		const struct hs_location *l = &p->locations.v[locs[k]];
		for (uint32_t j = l->nlines; j-- > 0;) {
			const struct hs_function *f = &p->functions.v[p->lines.v[l->line0 + j].function];
			hs_strbuf_addf(sb, ";%s", hs_profile_str(p, f->name));
		}
	}
}

/* The total of value type t (by name) over the samples whose key is key. */
static int64_t stack_total(const struct hs_profile *p, const char *key, const char *t)
{
	struct hs_strbuf sb = {0};
	int vi = hs_profile_find_type(p, t);
	int64_t sum = 0;

	assert_true(vi >= 0);
	for (size_t i = 0; i < p->samples.n; i++) {
		sample_key(p, i, &sb);
		if (!strcmp(hs_strbuf_str(&sb), key))
			sum += hs_profile_sample_values(p, (uint32_t)i)[vi];
	}
	hs_strbuf_release(&sb);
	return sum;
}

static int64_t type_total(const struct hs_profile *p, const char *t)
{
	int vi = hs_profile_find_type(p, t);

	assert_true(vi >= 0);
	return hs_profile_total(p, (uint32_t)vi);
}

static size_t count_comment(const struct hs_profile *p, const char *c)
{
	size_t n = 0;

	for (size_t i = 0; i < p->comments.n; i++)
		n += !strcmp(hs_profile_str(p, p->comments.v[i]), c);
	return n;
}

/* ---- merging ---- */

static void test_merge(void **state)
{
	struct hs_profile *a = profile_a(), *b = profile_b();
	struct hs_error err = {0};
	const struct hs_sample *w = NULL;
	const struct hs_location *leaf;
	int cpu;

	(void)state;
	assert_int_equal(hs_profile_merge(a, b, &err), 0);
	/* types: a's, then the one b adds; b's values by name, not by position */
	assert_int_equal(a->types.n, 3);
	assert_string_equal(hs_profile_str(a, a->types.v[2].type), "wall");
	assert_int_equal(type_total(a, "samples"), 3 + 2 + 1 + 1);
	assert_int_equal(type_total(a, "cpu"), 3000 + 2000 + 1000 + 500);
	assert_int_equal(type_total(a, "wall"), 7 + 9);
	cpu = hs_profile_find_type(a, "cpu");
	assert_true(cpu >= 0 && (size_t)cpu < a->type_events.n);
	assert_string_equal(hs_profile_str(a, a->type_events.v[cpu]), "cpu-clock");
	/* per stack: the stack both have adds up, the others stay as they were */
	assert_int_equal(stack_total(a, "app;main;work;step", "samples"), 4);
	assert_int_equal(stack_total(a, "app;main;work;step", "cpu"), 4000);
	assert_int_equal(stack_total(a, "app;main;work;step", "wall"), 7);
	assert_int_equal(stack_total(a, "app;main;idle", "cpu"), 2000);
	assert_int_equal(stack_total(a, "app;main;idle", "wall"), 0);
	assert_int_equal(stack_total(a, "worker;main;spin", "wall"), 9);
	/* the same stack and labels are one sample; the other labels kept */
	assert_int_equal(a->samples.n, 3);
	for (size_t i = 0; i < a->samples.n; i++)
		if (!strcmp(hs_profile_str(a, a->samples.v[i].comm), "worker"))
			w = &a->samples.v[i];
	assert_non_null(w);
	assert_int_equal(w->pid, 2);
	assert_int_equal(w->tid, 3);
	assert_int_equal(w->time, 5);
	leaf = &a->locations.v[hs_profile_stack_locs(a, w->stack)[0]];
	assert_string_equal(hs_profile_str(a, a->mappings.v[leaf->mapping].file), "/usr/lib/libspin.so");
	/* from the earlier start to the later end; the same period */
	assert_int_equal(a->time_nanos, 1000);
	assert_int_equal(a->duration_nanos, 1000);
	assert_int_equal(a->period, 1000);
	assert_string_equal(hs_profile_str(a, a->period_type.type), "cpu");
	/* comments once each; the lost samples in one note, against all the samples */
	assert_int_equal(count_comment(a, "hotstack record -- app"), 1);
	assert_int_equal(count_comment(a, "other"), 1);
	assert_int_equal(a->comments.n, 3);
	assert_string_equal(hs_profile_str(a, a->comments.v[2]), "lost 15 samples (68.2%)");
	/* what either could not hold */
	assert_int_equal(a->values_saturated, 3);
	assert_int_equal(a->stacks_over_cap, 9);
	assert_true(a->frames_over_cap);
	/* b as it was */
	assert_int_equal(type_total(b, "cpu"), 1500);
	assert_int_equal(b->samples.n, 2);
	assert_int_equal(hs_profile_merge(b, b, &err), -EINVAL);
	hs_profile_free(a);
	hs_profile_free(b);
}

/* Merged into an empty profile, a profile is written as it was. */
static void test_merge_into_empty(void **state)
{
	struct hs_profile *b = profile_b(), *q = hs_profile_new();
	struct hs_output_opts o = {0};
	char *want, *got;

	(void)state;
	assert_int_equal(hs_profile_merge(q, b, NULL), 0);
	want = hs_test_write_format(b, "folded", &o);
	got = hs_test_write_format(q, "folded", &o);
	assert_string_equal(got, want);
	assert_int_equal(q->time_nanos, b->time_nanos);
	assert_int_equal(q->duration_nanos, b->duration_nanos);
	free(want);
	free(got);
	hs_profile_free(q);
	hs_profile_free(b);
}

static void test_merge_times_periods(void **state)
{
	struct hs_profile *a = profile_a(), *b = profile_b(), *c = hs_profile_new();

	(void)state;
	/* a start not known: the known one and the longer duration */
	c->duration_nanos = 5000;
	assert_int_equal(hs_profile_merge(a, c, NULL), 0);
	assert_int_equal(a->time_nanos, 1000);
	assert_int_equal(a->duration_nanos, 5000);
	/* no period type in c: the period is not the same */
	assert_int_equal(a->period, 0);
	assert_int_equal(a->period_type.type, 0);
	/* the same type, another period: the type stays */
	b->period = 2000;
	hs_profile_free(a);
	a = profile_a();
	assert_int_equal(hs_profile_merge(a, b, NULL), 0);
	assert_int_equal(a->period, 0);
	assert_string_equal(hs_profile_str(a, a->period_type.unit), "nanoseconds");
	hs_profile_free(a);
	hs_profile_free(b);
	hs_profile_free(c);
}

/* Past the cap on value types, nothing is merged. */
static void test_merge_type_cap(void **state)
{
	struct hs_profile *a = hs_profile_new(), *b = profile_b();
	struct hs_error err = {0};
	char name[32];

	(void)state;
	for (unsigned i = 0; i < HS_PROFILE_MERGE_MAX_TYPES - 2; i++) {
		snprintf(name, sizeof(name), "t%u", i);
		hs_profile_add_type(a, name, "count");
	}
	assert_int_equal(hs_profile_merge(a, b, &err), -EOVERFLOW);
	assert_string_equal(err.detail, "more than 1024 value types in all");
	assert_int_equal(a->types.n, HS_PROFILE_MERGE_MAX_TYPES - 2);
	assert_int_equal(a->samples.n, 0);
	hs_profile_free(a);
	hs_profile_free(b);
}

/* ---- several inputs ---- */

static const char folded_a[] = "app;main;work 3\napp;main;idle 2\n";
static const char folded_b[] = "app;main;work 4\nworker;main;spin 1\n";

static char dir[256];

static void put(const char *name, const void *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	hs_test_write_file(path, buf, len);
}

static int mkdir_fixtures(void **state)
{
	struct hs_profile *p = NULL;
	struct hs_error err = {0};
	uint8_t *pb;
	size_t n;
	char path[512];

	(void)state;
	if (hs_test_mkdtemp(dir, sizeof(dir), "hs-merge"))
		return -1;
	put("b.folded", folded_b, strlen(folded_b));
	/* a as pprof, read back from folded text */
	put("a.folded", folded_a, strlen(folded_a));
	snprintf(path, sizeof(path), "%s/a.folded", dir);
	if (hs_profile_load(path, &p, &err) || unlink(path))
		return -1;
	pb = hs_test_write_pprof(p, &n);
	put("a.pb.gz", pb, n);
	free(pb);
	hs_profile_free(p);
	/* left out: no profile, a file still being written, a subdirectory, a link */
	put("notes.txt", "hi\n", 3);
	put(".prof.pb.gz.tmp", folded_a, strlen(folded_a));
	snprintf(path, sizeof(path), "%s/sub", dir);
	if (mkdir(path, 0700))
		return -1;
	put("sub/c.folded", folded_a, strlen(folded_a));
	snprintf(path, sizeof(path), "%s/link.folded", dir);
	if (symlink("b.folded", path))
		return -1;
	snprintf(path, sizeof(path), "%s/empty", dir);
	return mkdir(path, 0700);
}

static int rm_fixtures(void **state)
{
	(void)state;
	return hs_test_rmtree(dir);
}

static void counted(void *ctx, const char *path, const struct hs_load_info *info, const struct hs_profile *p)
{
	struct hs_strbuf *sb = ctx;

	(void)info;
	(void)p;
	hs_strbuf_addf(sb, "%s\n", path + strlen(dir) + 1);
}

static int load(const char *const *names, size_t n, struct hs_load_many *lm, struct hs_strbuf *seen,
		struct hs_profile **ret, struct hs_error *err)
{
	static char paths[4][512]; /* lm->skipped_in points into them */
	const char *pp[4];

	assert_true(n <= 4);
	for (size_t i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s%s%s", dir, *names[i] ? "/" : "", names[i]);
		pp[i] = paths[i];
	}
	memset(lm, 0, sizeof(*lm));
	lm->loaded = counted;
	lm->ctx = seen;
	return hs_profile_load_many(pp, n, lm, ret, err);
}

static void test_load_files_and_dirs(void **state)
{
	const char *files[] = {"a.pb.gz", "b.folded"}, *whole[] = {""};
	struct hs_strbuf seen = {0}, note = {0};
	struct hs_load_many lm;
	struct hs_error err = {0};
	struct hs_profile *p = NULL;

	(void)state;
	/* pprof and folded named: both, in that order */
	assert_int_equal(load(files, 2, &lm, &seen, &p, &err), 0);
	assert_string_equal(hs_strbuf_str(&seen), "a.pb.gz\nb.folded\n");
	assert_int_equal(lm.read, 2);
	assert_int_equal(lm.skipped, 0);
	assert_int_equal(type_total(p, "samples"), 10);
	assert_int_equal(stack_total(p, "app;main;work", "samples"), 7);
	assert_int_equal(stack_total(p, "app;main;idle", "samples"), 2);
	assert_int_equal(stack_total(p, "worker;main;spin", "samples"), 1);
	hs_profile_free(p);
	hs_load_many_release(&lm);

	/* the directory: its regular files, in name order, no profile skipped and said */
	hs_strbuf_reset(&seen);
	assert_int_equal(load(whole, 1, &lm, &seen, &p, &err), 0);
	assert_string_equal(hs_strbuf_str(&seen), "a.pb.gz\nb.folded\n");
	assert_int_equal(lm.skipped, 1);
	assert_int_equal(type_total(p, "samples"), 10);
	assert_int_equal(stack_total(p, "app;main;work", "samples"), 7);
	hs_load_many_notes(&lm, &note);
	assert_true(!strncmp(hs_strbuf_str(&note), dir, strlen(dir)));
	assert_string_equal(hs_strbuf_str(&note) + strlen(dir),
			    ": skipped 1 file that is not a profile hotstack reads\n");
	assert_null(lm.failed);
	hs_profile_free(p);
	hs_load_many_release(&lm);
	hs_strbuf_release(&seen);
	hs_strbuf_release(&note);
}

static void test_load_errors(void **state)
{
	const char *named[] = {"b.folded", "notes.txt"}, *missing[] = {"b.folded", "none.pb.gz"};
	const char *empty[] = {"b.folded", "empty/"};
	struct hs_strbuf seen = {0};
	struct hs_load_many lm;
	struct hs_error err = {0};
	struct hs_profile *p = NULL;

	(void)state;
	/* a file named that is no profile stays an error, as it is read alone */
	assert_int_equal(load(named, 2, &lm, &seen, &p, &err), -EBADMSG);
	assert_null(p);
	assert_string_equal(lm.failed + strlen(dir), "/notes.txt");
	hs_load_many_release(&lm);
	memset(&err, 0, sizeof(err));
	assert_int_equal(load(missing, 2, &lm, &seen, &p, &err), -ENOENT);
	assert_string_equal(lm.failed + strlen(dir), "/none.pb.gz");
	hs_load_many_release(&lm);
	memset(&err, 0, sizeof(err));
	assert_int_equal(load(empty, 2, &lm, &seen, &p, &err), -ENOMSG);
	assert_string_equal(err.detail, "no profiles");
	assert_string_equal(lm.failed + strlen(dir), "/empty/");
	assert_null(p);
	hs_load_many_release(&lm);
	hs_strbuf_release(&seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_into_empty),
		cmocka_unit_test(test_merge_times_periods),
		cmocka_unit_test(test_merge_type_cap),
		cmocka_unit_test_setup_teardown(test_load_files_and_dirs, mkdir_fixtures, rm_fixtures),
		cmocka_unit_test_setup_teardown(test_load_errors, mkdir_fixtures, rm_fixtures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
