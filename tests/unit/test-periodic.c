/* Unit tests for the files a recording writes while it runs (src/output/periodic.c) and the
 * copies of what was added since a mark they are made of (hs_filter.since): --switch-output's
 * values, each period's file names, when a period or a checkpoint is due, which files
 * --switch-max-files removes (only this recording's), and each copy holding only its period's
 * samples. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "output/periodic.h"
#include "profile/filter.h"

#define S 1000000000ULL

static void test_switch_output_values(void **state)
{
	static const struct {
		const char *arg;
		uint64_t secs; /* 0: signal */
	} good[] = {{"signal", 0}, {"10s", 10}, {"10", 10}, {"5m", 300}, {"1h", 3600}, {"2d", 172800}, {"1s", 1}, {"2min", 120}};
	static const char *const bad[] = {"", "0", "0s", "10x", "s", "-1", "10ss", "0.5s", "99999999999",
					  "400d", "sig", " 10s"};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(good); i++) {
		struct hs_periodic_opts o = {0};
		assert_int_equal(hs_switch_output_parse(good[i].arg, &o), 0);
		assert_true(o.by_signal == !good[i].secs);
		assert_true(o.period_ns == good[i].secs * S);
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		struct hs_periodic_opts o = {.period_ns = 7};
		assert_int_equal(hs_switch_output_parse(bad[i], &o), -EINVAL);
		assert_true(o.period_ns == 7 && !o.by_signal); /* untouched */
	}
}

/* 2026-11-23 19:10:23 UTC, in ns since the epoch (and a fraction of a second more) */
static int64_t when(void)
{
	struct tm tm = {.tm_year = 126, .tm_mon = 10, .tm_mday = 23, .tm_hour = 19, .tm_min = 10, .tm_sec = 23};
	return (int64_t)timegm(&tm) * (int64_t)S + 123456789;
}

static void test_period_names(void **state)
{
	static const struct {
		const char *path, *want;
		unsigned seq;
	} cases[] = {
		{"prof.pb.gz", "prof.20261123191023.pb.gz", 0},
		{"prof.pprof", "prof.20261123191023.pprof", 0},
		{"out/p.speedscope.json", "out/p.20261123191023.speedscope.json", 0},
		{"a.b/flame.svg", "a.b/flame.20261123191023.svg", 0},
		{"x.folded", "x.20261123191023_2.folded", 2},
		{"report.txt", "report.20261123191023.txt", 0},
		{"noext", "noext.20261123191023", 0},
		{"dir.d/noext", "dir.d/noext.20261123191023", 0},
	};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		char *got = hs_period_path(cases[i].path, when(), cases[i].seq);
		assert_string_equal(got, cases[i].want);
		free(got);
	}
}

static void test_due(void **state)
{
	struct hs_periodic_opts o = {.period_ns = 20 * S, .checkpoints = true};
	static const char *const paths[] = {"p.pb.gz"};
	struct hs_periodic pe;
	uint64_t t0 = 1000 * S;
	(void)state;

	hs_periodic_init(&pe, &o, paths, 1, t0, when());
	assert_true(hs_periodic_switching(&pe));
	assert_string_equal(hs_periodic_names(&pe)[0], "p.20261123191023.pb.gz");
	assert_int_equal(hs_periodic_due(&pe, t0 + 1 * S, false), HS_DUE_NONE);
	assert_int_equal(hs_periodic_due(&pe, t0 + 1 * S, true), HS_DUE_NONE); /* SIGUSR2 not asked for */
	assert_true(hs_periodic_next(&pe, t0 + 1 * S) == HS_CHECKPOINT_NS - 1 * S); /* the checkpoint first */
	assert_int_equal(hs_periodic_due(&pe, t0 + HS_CHECKPOINT_NS, false), HS_DUE_CHECKPOINT);
	/* a checkpoint that took 2 s: the next one no sooner than 20 s after it */
	hs_periodic_written(&pe, t0 + HS_CHECKPOINT_NS, when() + 8 * (int64_t)S, t0 + HS_CHECKPOINT_NS + 2 * S, false);
	assert_int_equal(hs_periodic_due(&pe, t0 + HS_CHECKPOINT_NS + 2 * S + HS_CHECKPOINT_NS, false), HS_DUE_NONE);
	assert_int_equal(hs_periodic_due(&pe, t0 + 20 * S, false), HS_DUE_PERIOD);
	/* the next period: named by its own start, due a period later; it begins where the last
	 * one ended (its write began), not after the write: periods tile time */
	hs_periodic_written(&pe, t0 + 20 * S, when() + 20 * (int64_t)S, t0 + 21 * S, true);
	assert_string_equal(hs_periodic_names(&pe)[0], "p.20261123191043.pb.gz");
	assert_true(pe.start == t0 + 20 * S);
	assert_true(pe.start_wall == when() + 20 * (int64_t)S);
	assert_int_equal(hs_periodic_due(&pe, t0 + 39 * S, false), HS_DUE_NONE);
	assert_true(hs_periodic_next(&pe, t0 + 39 * S) == 1 * S);
	assert_true(hs_periodic_next(&pe, t0 + 41 * S) == 0); /* overdue */
	assert_int_equal(hs_periodic_due(&pe, t0 + 40 * S, false), HS_DUE_PERIOD);
	/* a second period begun in the same second has files of its own */
	hs_periodic_written(&pe, t0 + 40 * S, when() + 20 * (int64_t)S + 5, t0 + 40 * S, true);
	assert_string_equal(hs_periodic_names(&pe)[0], "p.20261123191043_1.pb.gz");
	hs_periodic_release(&pe);

	/* by signal only: SIGUSR2 ends the period, time never does; no checkpoints asked for */
	o = (struct hs_periodic_opts){.by_signal = true};
	hs_periodic_init(&pe, &o, paths, 1, t0, when());
	assert_int_equal(hs_periodic_due(&pe, t0 + 1000 * S, false), HS_DUE_NONE);
	assert_int_equal(hs_periodic_due(&pe, t0 + 1 * S, true), HS_DUE_PERIOD);
	assert_true(hs_periodic_next(&pe, t0) == UINT64_MAX); /* nothing due by time */
	hs_periodic_release(&pe);

	/* no periods: the outputs keep their names */
	o = (struct hs_periodic_opts){.checkpoints = true};
	hs_periodic_init(&pe, &o, paths, 1, t0, when());
	assert_false(hs_periodic_switching(&pe));
	assert_string_equal(hs_periodic_names(&pe)[0], "p.pb.gz");
	assert_int_equal(hs_periodic_due(&pe, t0 + 1000 * S, true), HS_DUE_CHECKPOINT);
	hs_periodic_release(&pe);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void touch(const char *path)
{
	hs_test_write_file(path, "x", 1);
}

static void test_max_files(void **state)
{
	char dir[4096], a[4200], b[4200], other[4200];
	const char *paths[2] = {a, b};
	char *names[5][2];
	struct hs_periodic_opts o = {.period_ns = 10 * S, .max_files = 2};
	struct hs_periodic pe;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-periodic"), 0);
	snprintf(a, sizeof(a), "%s/p.pb.gz", dir);
	snprintf(b, sizeof(b), "%s/p.svg", dir);
	/* a file of an earlier recording, named as a period's: never removed */
	snprintf(other, sizeof(other), "%s/p.20200101000000.pb.gz", dir);
	touch(other);
	hs_periodic_init(&pe, &o, paths, 2, 1000 * S, when());
	for (int k = 0; k < 5; k++) {
		for (int i = 0; i < 2; i++) {
			names[k][i] = hs_xstrdup(hs_periodic_names(&pe)[i]);
			touch(names[k][i]);
		}
		/* a checkpoint, then the period's end: each file counted once */
		hs_periodic_written(&pe, 0, 0, 0, false);
		assert_int_equal(hs_periodic_written(&pe, 0, when() + (k + 1) * 10 * (int64_t)S, 0, true), 0);
	}
	for (int k = 0; k < 5; k++)
		for (int i = 0; i < 2; i++) {
			assert_true(exists(names[k][i]) == (k >= 3));
			free(names[k][i]);
		}
	assert_true(exists(other));
	hs_periodic_release(&pe);
	hs_test_rmtree(dir);
}

/* The copy of what was added since a mark: values less the mark's, untouched samples left out,
 * new samples whole; the stacks and names they need copied with them. */
static void test_filter_since(void **state)
{
	struct hs_profile *p = hs_profile_new(), *q;
	struct hs_filter f = {0};
	uint32_t fn, loc[3], st[3], comm;
	int64_t one[2] = {1, 10}, *mark;
	size_t nmark;
	(void)state;

	hs_profile_add_type(p, "samples", "count");
	hs_profile_add_type(p, "cpu", "nanoseconds");
	comm = hs_profile_intern_str(p, "w");
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		fn = hs_profile_function(p, hs_profile_intern_str(p, name), 0, 0, 0);
		loc[i] = hs_profile_location(p, 0, 0x1000 + (uint64_t)i, HS_KIND_USER,
					     &(struct hs_line){fn, 0}, 1);
		st[i] = hs_profile_stack(p, &loc[i], 1);
	}
	hs_profile_add_sample(p, st[0], comm, 1, 1, 0, one);
	hs_profile_add_sample(p, st[1], comm, 1, 1, 0, one);
	hs_profile_add_sample(p, st[1], comm, 1, 1, 0, one);
	nmark = p->values.n;
	mark = hs_xcalloc(nmark, sizeof(*mark));
	memcpy(mark, p->values.v, nmark * sizeof(*mark));
	/* since the mark: f1 once more, f2 new; f0 nothing */
	hs_profile_add_sample(p, st[1], comm, 1, 1, 0, one);
	hs_profile_add_sample(p, st[2], comm, 1, 1, 0, one);
	hs_profile_add_sample(p, st[2], comm, 1, 1, 0, one);
	f.since = mark;
	f.nsince = nmark;
	assert_true(hs_filter_active(&f));
	assert_int_equal(hs_profile_filter(p, &f, &q), 0);
	assert_int_equal(q->samples.n, 2);
	assert_int_equal(hs_profile_total(q, 0), 3);
	assert_int_equal(hs_profile_total(q, 1), 30);
	for (size_t i = 0; i < q->samples.n; i++) {
		const char *name = hs_profile_location_name(q, hs_profile_stack_locs(q, q->samples.v[i].stack)[0]);
		assert_int_equal(hs_profile_sample_values(q, (uint32_t)i)[0], !strcmp(name, "f1") ? 1 : 2);
		assert_true(!strcmp(name, "f1") || !strcmp(name, "f2"));
	}
	hs_profile_free(q);
	/* an empty mark: everything */
	f.since = mark;
	f.nsince = 0;
	assert_int_equal(hs_profile_filter(p, &f, &q), 0);
	assert_int_equal(hs_profile_total(q, 0), 6);
	hs_profile_free(q);
	free(mark);
	hs_profile_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch_output_values),
		cmocka_unit_test(test_period_names),
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_max_files),
		cmocka_unit_test(test_filter_since),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 1;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
