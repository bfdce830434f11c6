/* The live views' hub (src/live/view.c) over a builder fed made-up kernel samples: the window
 * moves with its steps, everything so far and the next seconds are copied for readers on other
 * threads, z empties both, and the end answers the readers still waiting. The main thread's
 * clock is the test's: hs_view_tick() is given the time. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#include "live/view.h"
#include "output/output.h"

static char kallsyms[PATH_MAX];

#define K_ALPHA 0xffffffff81000000ULL
#define K_BETA 0xffffffff81001000ULL
#define K_GAMMA 0xffffffff81002000ULL
#define STEP 1000000000ULL
#define T0 (1000 * STEP)

static int setup(void **state)
{
	static const char text[] = "ffffffff81000000 T alpha\n"
				   "ffffffff81001000 T beta\n"
				   "ffffffff81002000 T gamma\n"
				   "ffffffff81003000 T _etext\n";

	(void)state;
	return hs_test_write_temp(kallsyms, sizeof(kallsyms), "hs-test-view", text);
}

static int teardown(void **state)
{
	(void)state;
	unlink(kallsyms);
	return 0;
}

static void start(struct hs_builder *b)
{
	struct hs_builder_opts o = {0};

	o.kernel = true;
	o.user = true;
	o.kallsyms = kallsyms;
	hs_builder_init(b, &o);
	hs_builder_add_event(b, "cpu-clock", true);
}

/* The end of a test: the view ended and freed, then the builder */
static void finish(struct hs_view *v, struct hs_builder *b)
{
	hs_view_end(v, b);
	hs_view_free(v);
	hs_profile_free(hs_builder_take(b));
	hs_builder_release(b);
}

/* n samples in the kernel function at k */
static void samples(struct hs_builder *b, uint64_t k, int n)
{
	uint64_t chain[2] = {PERF_CONTEXT_KERNEL, k + 8};
	struct hs_perf_event ev;

	for (int i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = PERF_RECORD_SAMPLE;
		ev.sid.pid = 100;
		ev.sid.tid = 100;
		ev.sample.sid = ev.sid;
		ev.sample.ip = k + 8;
		ev.sample.period = 1000000;
		ev.sample.callchain = chain;
		ev.sample.nr_callchain = 2;
		hs_builder_event_of(b, &ev, 0);
	}
}

/* The samples of s whose leaf is the function name (value 0: samples) */
static long count(const struct hs_snapshot *s, const char *name)
{
	const struct hs_profile *p = s->p;
	struct hs_frame *frames = NULL;
	size_t cap = 0;
	long n = 0;

	for (size_t i = 0; i < p->samples.n; i++) {
		size_t nf = hs_stack_frames(p, p->samples.v[i].stack, &frames, &cap);
		if (nf && !strcmp(frames[nf - 1].name, name))
			n += p->values.v[i * p->types.n];
	}
	free(frames);
	return n;
}

static void test_window_moves(void **state)
{
	struct hs_builder b;
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.step_ns = STEP, .window = 2});
	struct hs_snapshot *s;

	(void)state;
	start(&b);
	assert_null(hs_view_window(v));
	hs_view_tick(v, &b, T0);
	samples(&b, K_ALPHA, 3);
	assert_int_equal(hs_view_tick(v, &b, T0 + STEP / 2), STEP / 2);
	assert_int_equal(hs_view_steps(v), 0);
	hs_view_tick(v, &b, T0 + STEP);
	s = hs_view_window(v);
	assert_non_null(s);
	assert_int_equal(count(s, "alpha"), 3);
	hs_snapshot_put(s);
	samples(&b, K_BETA, 2);
	hs_view_tick(v, &b, T0 + 2 * STEP);
	s = hs_view_window(v);
	assert_int_equal(count(s, "alpha"), 3);
	assert_int_equal(count(s, "beta"), 2);
	hs_snapshot_put(s);
	/* the third step pushes the first out of a window of two */
	samples(&b, K_GAMMA, 4);
	hs_view_tick(v, &b, T0 + 3 * STEP);
	assert_int_equal(hs_view_steps(v), 3);
	s = hs_view_window(v);
	assert_int_equal(count(s, "alpha"), 0);
	assert_int_equal(count(s, "beta"), 2);
	assert_int_equal(count(s, "gamma"), 4);
	/* a reader's reference outlives the view's next window */
	samples(&b, K_ALPHA, 1);
	hs_view_tick(v, &b, T0 + 4 * STEP);
	assert_int_equal(count(s, "gamma"), 4);
	hs_snapshot_put(s);
	/* z: nothing counted any more */
	hs_view_zero(v, &b);
	s = hs_view_window(v);
	assert_int_equal(count(s, "gamma") + count(s, "alpha") + count(s, "beta"), 0);
	hs_snapshot_put(s);
	samples(&b, K_BETA, 5);
	hs_view_tick(v, &b, T0 + 5 * STEP);
	s = hs_view_window(v);
	assert_int_equal(count(s, "beta"), 5);
	assert_int_equal(count(s, "alpha"), 0);
	hs_snapshot_put(s);
	finish(v, &b);
}

struct reader {
	struct hs_view *v;
	unsigned seconds; /* 0: hs_view_get(HS_VIEW_ALL) */
	struct hs_snapshot *got;
	const char *why;
	volatile bool done;
	volatile bool gone; /* what it says it is when asked */
};

static bool reader_gone(void *ctx)
{
	return ((struct reader *)ctx)->gone;
}

static void *read_view(void *arg)
{
	struct reader *r = arg;

	r->got = r->seconds ? hs_view_next(r->v, r->seconds, &r->why, reader_gone, r) : hs_view_get(r->v, HS_VIEW_ALL);
	r->done = true;
	return NULL;
}

/* Ticks at now until the reader is answered, for up to 20 s */
static void tick_until_done(struct hs_view *v, struct hs_builder *b, uint64_t now, struct reader *r)
{
	for (int i = 0; i < 20000 && !r->done; i++) {
		hs_view_tick(v, b, now);
		usleep(1000);
	}
	assert_true(r->done);
}

static void wait_waiting(struct hs_view *v, unsigned n)
{
	for (int i = 0; i < 20000 && hs_view_waiting(v) != n; i++)
		usleep(1000);
	assert_int_equal(hs_view_waiting(v), n);
}

static void test_readers(void **state)
{
	struct hs_builder b;
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.step_ns = STEP});
	struct reader all = {.v = v}, next = {.v = v, .seconds = 2}, late = {.v = v, .seconds = 5};
	pthread_t t;

	(void)state;
	start(&b);
	hs_view_tick(v, &b, T0);
	samples(&b, K_ALPHA, 3);
	/* everything so far, made by the main thread for the reader */
	pthread_create(&t, NULL, read_view, &all);
	tick_until_done(v, &b, T0 + 1, &all);
	pthread_join(t, NULL);
	assert_int_equal(count(all.got, "alpha"), 3);
	/* without a window, the window is everything so far */
	struct hs_snapshot *w = hs_view_window(v);
	assert_ptr_equal(w, all.got);
	hs_snapshot_put(w);
	hs_snapshot_put(all.got);

	/* the next 2 s: only what comes after the main thread saw the request */
	pthread_create(&t, NULL, read_view, &next);
	wait_waiting(v, 1);
	assert_true(hs_view_tick(v, &b, T0 + STEP) <= 2 * STEP);
	samples(&b, K_BETA, 4);
	hs_view_tick(v, &b, T0 + 2 * STEP);
	samples(&b, K_GAMMA, 1);
	assert_false(next.done);
	tick_until_done(v, &b, T0 + 3 * STEP, &next);
	pthread_join(t, NULL);
	assert_non_null(next.got);
	assert_int_equal(count(next.got, "alpha"), 0);
	assert_int_equal(count(next.got, "beta"), 4);
	assert_int_equal(count(next.got, "gamma"), 1);
	assert_true(next.got->p->duration_nanos >= 0);
	hs_snapshot_put(next.got);

	/* out of range: at once */
	late.seconds = 0;
	assert_null(hs_view_next(v, 0, &late.why, NULL, NULL));
	assert_string_equal(late.why, "range");
	assert_null(hs_view_next(v, HS_VIEW_MAX_SECONDS + 1, &late.why, NULL, NULL));

	/* the end answers a reader still waiting with what there was */
	late.seconds = 5;
	pthread_create(&t, NULL, read_view, &late);
	wait_waiting(v, 1);
	hs_view_tick(v, &b, T0 + 4 * STEP);
	samples(&b, K_ALPHA, 2);
	hs_view_end(v, &b);
	pthread_join(t, NULL);
	assert_non_null(late.got);
	assert_int_equal(count(late.got, "alpha"), 2);
	hs_snapshot_put(late.got);
	/* after the end: no more waiting; everything so far at once */
	assert_null(hs_view_next(v, 1, &late.why, NULL, NULL));
	assert_string_equal(late.why, "ended");
	w = hs_view_get(v, HS_VIEW_ALL);
	assert_int_equal(count(w, "alpha"), 5);
	hs_snapshot_put(w);
	hs_view_free(v);
	hs_profile_free(hs_builder_take(&b));
	hs_builder_release(&b);
}

/* A recording that failed: the readers waiting get nothing rather than waiting for ever */
static void test_failed_end(void **state)
{
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){0});
	struct reader r = {.v = v, .seconds = 3};
	pthread_t t;

	(void)state;
	pthread_create(&t, NULL, read_view, &r);
	wait_waiting(v, 1);
	hs_view_end(v, NULL);
	pthread_join(t, NULL);
	assert_null(r.got);
	assert_string_equal(r.why, "ended");
	hs_view_free(v);
}

/* A period's end (--switch-output) within a reader's seconds and within a step: what came
 * before it still counts, and everything so far keeps every period's samples */
static void test_rebase(void **state)
{
	struct hs_builder b;
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.step_ns = STEP, .window = 3});
	struct reader r = {.v = v, .seconds = 2};
	struct hs_snapshot *s;
	pthread_t t;

	(void)state;
	start(&b);
	hs_view_tick(v, &b, T0);
	pthread_create(&t, NULL, read_view, &r);
	wait_waiting(v, 1);
	hs_view_tick(v, &b, T0 + 1);
	samples(&b, K_ALPHA, 3);
	hs_view_rebase(v, &b);
	assert_true(hs_builder_rebase(&b));
	samples(&b, K_BETA, 2);
	hs_view_tick(v, &b, T0 + STEP);
	s = hs_view_window(v);
	assert_int_equal(count(s, "alpha"), 3);
	assert_int_equal(count(s, "beta"), 2);
	hs_snapshot_put(s);
	/* a second period's end, and the samples after it */
	samples(&b, K_GAMMA, 1);
	hs_view_rebase(v, &b);
	assert_true(hs_builder_rebase(&b));
	samples(&b, K_GAMMA, 1);
	tick_until_done(v, &b, T0 + 3 * STEP, &r);
	pthread_join(t, NULL);
	assert_non_null(r.got);
	assert_int_equal(count(r.got, "alpha"), 3);
	assert_int_equal(count(r.got, "beta"), 2);
	assert_int_equal(count(r.got, "gamma"), 2);
	hs_snapshot_put(r.got);
	s = hs_view_window(v);
	assert_int_equal(count(s, "alpha") + count(s, "beta") + count(s, "gamma"), 7);
	hs_snapshot_put(s);
	/* everything so far is every period's, from the start, not the last period's alone */
	r = (struct reader){.v = v};
	pthread_create(&t, NULL, read_view, &r);
	tick_until_done(v, &b, T0 + 3 * STEP + 1, &r);
	pthread_join(t, NULL);
	assert_non_null(r.got);
	assert_int_equal(count(r.got, "alpha"), 3);
	assert_int_equal(count(r.got, "beta"), 2);
	assert_int_equal(count(r.got, "gamma"), 2);
	assert_true(r.got->p->duration_nanos >= 0);
	hs_snapshot_put(r.got);
	/* and z empties it, the periods before included */
	hs_view_zero(v, &b);
	samples(&b, K_BETA, 1);
	r = (struct reader){.v = v};
	pthread_create(&t, NULL, read_view, &r);
	tick_until_done(v, &b, T0 + 5 * STEP, &r);
	pthread_join(t, NULL);
	assert_int_equal(count(r.got, "alpha") + count(r.got, "gamma"), 0);
	assert_int_equal(count(r.got, "beta"), 1);
	hs_snapshot_put(r.got);
	finish(v, &b);
}

/* A reader that is gone (its client hung up) is let go within seconds, its place free again,
 * rather than waiting out the hour it asked for */
static void test_reader_gone(void **state)
{
	struct hs_builder b;
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.step_ns = STEP});
	struct reader r = {.v = v, .seconds = 3600};
	pthread_t t;

	(void)state;
	start(&b);
	hs_view_tick(v, &b, T0);
	pthread_create(&t, NULL, read_view, &r);
	wait_waiting(v, 1);
	hs_view_tick(v, &b, T0 + 1);
	samples(&b, K_ALPHA, 1);
	r.gone = true;
	tick_until_done(v, &b, T0 + 2, &r);
	pthread_join(t, NULL);
	assert_null(r.got);
	assert_string_equal(r.why, "gone");
	assert_int_equal(hs_view_waiting(v), 0);
	finish(v, &b);
}

/* The window is merged by the thread that asks, once a step: two readers of one step share it */
static void test_window_shared(void **state)
{
	struct hs_builder b;
	struct hs_view *v = hs_view_new(&(struct hs_view_opts){.step_ns = STEP, .window = 4});
	struct hs_snapshot *a, *c;

	(void)state;
	start(&b);
	hs_view_tick(v, &b, T0);
	samples(&b, K_ALPHA, 2);
	hs_view_tick(v, &b, T0 + STEP);
	a = hs_view_get(v, HS_VIEW_WINDOW);
	c = hs_view_window(v);
	assert_non_null(a);
	assert_ptr_equal(a, c);
	assert_int_equal(count(a, "alpha"), 2);
	hs_snapshot_put(c);
	samples(&b, K_BETA, 1);
	hs_view_tick(v, &b, T0 + 2 * STEP);
	c = hs_view_window(v);
	assert_ptr_not_equal(a, c);
	assert_int_equal(count(c, "alpha") + count(c, "beta"), 3);
	assert_true(c->end_wall >= c->start_wall);
	hs_snapshot_put(a);
	hs_snapshot_put(c);
	finish(v, &b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_moves),
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_failed_end),
		cmocka_unit_test(test_rebase),
		cmocka_unit_test(test_reader_gone),
		cmocka_unit_test(test_window_shared),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
