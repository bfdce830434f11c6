/* Live views of a recording: see view.h.
 *
 * The window is a ring of per-step profiles (each a copy of the samples of one step, made with
 * a mark that moves every step), merged anew at each step. Everything so far is a copy from a
 * mark set at the start (or at hs_view_zero()), made only when a reader asks and at most once
 * a step, with the periods ended before it (hs_view_rebase()) merged in. The next N seconds
 * are a copy from a mark set when the main thread first sees the reader's request. Readers wait on one condition variable; the main thread only signals it. */
#include "live/view.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "profile/merge.h"
#include "util/util.h"

#define DEFAULT_STEP_NS 1000000000ULL
/* Distinct stacks of the ended periods kept for everything so far; the rest go to one
 * "[too many stacks]" stack, so that a recording of months holds bounded memory for it */
#define CARRY_MAX_STACKS 65536
/* how long a reader waits for the main thread to make a snapshot of everything so far */
#define GET_WAIT_NS (10 * 1000000000ULL)

/* A reader's request for the next seconds: on its stack while it waits. Until done, only the
 * main thread touches mark, due and start_wall. */
struct waiter {
	unsigned seconds;
	uint64_t due;       /* 0 until the main thread marked its start */
	int64_t start_wall;
	struct hs_builder_mark mark;
	struct hs_profile *carry; /* its samples of the periods before (hs_view_rebase()) */
	struct hs_snapshot *result;
	bool done;
	bool gone; /* the reader is gone: answered at once, with nothing */
	struct waiter *next;
};

struct hs_view {
	struct hs_view_opts o;
	/* the main thread's alone */
	struct hs_builder_mark step_mark, zero_mark;
	struct hs_profile *step_carry; /* the step's samples of the period before */
	struct hs_profile *all_carry;  /* everything so far of the periods that ended */
	uint64_t next_step;
	int64_t step_wall, zero_wall;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* under lock */
	struct hs_snapshot **ring; /* o.window per-step snapshots, oldest at head when full */
	unsigned nring, head;
	struct hs_snapshot *window, *all;
	uint64_t window_steps; /* the steps when window was merged */
	uint64_t all_made; /* CLOCK_MONOTONIC ns */
	bool want_all, ended;
	struct waiter *waiting;
	unsigned nwaiting;
	uint64_t seq, steps;
};

struct hs_snapshot *hs_snapshot_get(struct hs_snapshot *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

void hs_snapshot_put(struct hs_snapshot *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL))
		return;
	hs_profile_free(s->p);
	free(s);
}

struct hs_view *hs_view_new(const struct hs_view_opts *o)
{
	struct hs_view *v = hs_xcalloc(1, sizeof(*v));
	pthread_condattr_t ca;

	v->o = *o;
	v->o.window = HS_MIN(v->o.window, HS_VIEW_MAX_STEPS);
	if (!v->o.step_ns)
		v->o.step_ns = DEFAULT_STEP_NS;
	if (v->o.window) {
		v->ring = hs_xcalloc(v->o.window, sizeof(*v->ring));
	}
	pthread_mutex_init(&v->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&v->cond, &ca);
	pthread_condattr_destroy(&ca);
	return v;
}

void hs_view_free(struct hs_view *v)
{
	if (!v)
		return;
	for (unsigned i = 0; i < v->nring; i++)
		hs_snapshot_put(v->ring[i]);
	free(v->ring);
	hs_builder_mark_release(&v->step_mark);
	hs_builder_mark_release(&v->zero_mark);
	hs_profile_free(v->step_carry);
	hs_profile_free(v->all_carry);
	hs_snapshot_put(v->window);
	hs_snapshot_put(v->all);
	pthread_cond_destroy(&v->cond);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

/* Under lock: a new snapshot of p (NULL when p is) */
static struct hs_snapshot *snapshot(struct hs_view *v, struct hs_profile *p, int64_t start, int64_t end)
{
	struct hs_snapshot *s;

	if (!p)
		return NULL;
	s = hs_xcalloc(1, sizeof(*s));
	s->p = p;
	s->start_wall = start;
	s->end_wall = end;
	s->seq = ++v->seq;
	s->refs = 1;
	p->time_nanos = start;
	p->duration_nanos = end > start ? end - start : 0;
	return s;
}

static void publish(struct hs_snapshot **slot, struct hs_snapshot *s)
{
	hs_snapshot_put(*slot);
	*slot = s;
}

/* Under lock: the ring emptied */
static void clear_ring(struct hs_view *v)
{
	for (unsigned i = 0; i < v->nring; i++)
		hs_snapshot_put(v->ring[(v->head + i) % v->o.window]);
	v->nring = v->head = 0;
}

/* Under lock: s the ring's newest, the oldest out when it is full */
static void push_ring(struct hs_view *v, struct hs_snapshot *s)
{
	if (v->nring < v->o.window) {
		v->ring[(v->head + v->nring++) % v->o.window] = s;
	} else {
		hs_snapshot_put(v->ring[v->head]);
		v->ring[v->head] = s;
		v->head = (v->head + 1) % v->o.window;
	}
}

/* One step: the samples since the last go into the window's ring, the oldest out. Merging
 * them is the readers' (window_now()): a long window costs the recording nothing. */
static void step(struct hs_view *v, struct hs_builder *b, int64_t wall)
{
	struct hs_profile *delta = NULL;

	if (v->o.window && (delta = hs_builder_copy(b, &v->step_mark, true)) && v->step_carry) {
		hs_profile_merge(delta, v->step_carry, NULL);
		hs_profile_free(v->step_carry);
		v->step_carry = NULL;
	}
	pthread_mutex_lock(&v->lock);
	if (delta)
		push_ring(v, snapshot(v, delta, v->step_wall, wall));
	v->step_wall = wall;
	v->steps++;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

/* The window now: the ring's steps merged, by the thread that asks, once a step (NULL before
 * the first step). */
static struct hs_snapshot *window_now(struct hs_view *v)
{
	struct hs_snapshot *parts[HS_VIEW_MAX_STEPS], *s;
	struct hs_profile *p;
	unsigned n;
	uint64_t steps;

	pthread_mutex_lock(&v->lock);
	if ((v->window && v->window_steps == v->steps) || !v->nring) {
		s = hs_snapshot_get(v->nring ? v->window : NULL);
		pthread_mutex_unlock(&v->lock);
		return s;
	}
	n = v->nring;
	for (unsigned i = 0; i < n; i++)
		parts[i] = hs_snapshot_get(v->ring[(v->head + i) % v->o.window]);
	steps = v->steps;
	pthread_mutex_unlock(&v->lock);
	p = hs_profile_new();
	for (unsigned i = 0; i < n; i++)
		hs_profile_merge(p, parts[i]->p, NULL);
	pthread_mutex_lock(&v->lock);
	s = snapshot(v, p, parts[0]->start_wall, parts[n - 1]->end_wall);
	if (v->steps == steps && (!v->window || v->window_steps != steps)) {
		publish(&v->window, hs_snapshot_get(s));
		v->window_steps = steps;
	}
	pthread_mutex_unlock(&v->lock);
	for (unsigned i = 0; i < n; i++)
		hs_snapshot_put(parts[i]);
	return s;
}

/* Everything so far, when a reader asked: the period's samples and the ended periods' */
static void make_all(struct hs_view *v, struct hs_builder *b, uint64_t now, int64_t wall)
{
	struct hs_profile *p = hs_builder_copy(b, &v->zero_mark, false);

	if (p && v->all_carry)
		hs_profile_merge(p, v->all_carry, NULL);

	pthread_mutex_lock(&v->lock);
	if (p) {
		publish(&v->all, snapshot(v, p, v->zero_wall, wall));
		v->all_made = now;
	}
	v->want_all = false;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

/* The waiting readers: new ones marked, those whose seconds are over answered. Returns the
 * earliest time one is due, or UINT64_MAX. */
static uint64_t serve_waiters(struct hs_view *v, struct hs_builder *b, uint64_t now, int64_t wall, bool all_due)
{
	struct waiter *due[HS_VIEW_MAX_WAITING];
	bool let_go = false;
	unsigned n = 0;
	uint64_t next = UINT64_MAX;

	pthread_mutex_lock(&v->lock);
	for (struct waiter *w = v->waiting; w; w = w->next) {
		if (w->done)
			continue;
		if (w->gone) {
			hs_builder_mark_release(&w->mark);
			hs_profile_free(w->carry);
			w->carry = NULL;
			w->done = let_go = true;
			continue;
		}
		if (!w->due) {
			hs_builder_mark_now(b, &w->mark);
			w->due = now + w->seconds * 1000000000ULL;
			w->start_wall = wall;
		}
		if (all_due || w->due <= now)
			due[n++] = w;
		else
			next = HS_MIN(next, w->due);
	}
	if (let_go)
		pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	/* the copies outside the lock: the readers of other snapshots go on meanwhile */
	for (unsigned i = 0; i < n; i++) {
		struct waiter *w = due[i];
		struct hs_profile *p = hs_builder_copy(b, &w->mark, false);
		/* what came before a period's end (hs_view_rebase()) */
		if (w->carry && p)
			hs_profile_merge(p, w->carry, NULL);
		hs_profile_free(w->carry);
		w->carry = NULL;
		/* w is the reader's: gone as soon as it sees done */
		hs_builder_mark_release(&w->mark);
		pthread_mutex_lock(&v->lock);
		w->result = snapshot(v, p, w->start_wall, wall);
		w->done = true;
		pthread_mutex_unlock(&v->lock);
	}
	if (n) {
		pthread_mutex_lock(&v->lock);
		pthread_cond_broadcast(&v->cond);
		pthread_mutex_unlock(&v->lock);
	}
	return next;
}

uint64_t hs_view_tick(struct hs_view *v, struct hs_builder *b, uint64_t now)
{
	int64_t wall = hs_wall_ns();
	uint64_t next;
	bool want_all;

	if (!v->next_step) { /* the first tick: the recording's start */
		v->next_step = now + v->o.step_ns;
		v->step_wall = v->zero_wall = wall;
	} else if (now >= v->next_step) {
		step(v, b, wall);
		/* a late tick does not bring the next step nearer */
		v->next_step = HS_MAX(v->next_step + v->o.step_ns, now + v->o.step_ns / 2);
	}
	pthread_mutex_lock(&v->lock);
	want_all = v->want_all;
	pthread_mutex_unlock(&v->lock);
	if (want_all)
		make_all(v, b, now, wall);
	next = HS_MIN(v->next_step, serve_waiters(v, b, now, wall, false));
	return next > now ? next - now : 0;
}

void hs_view_zero(struct hs_view *v, struct hs_builder *b)
{
	int64_t wall = hs_wall_ns();
	struct hs_profile *empty;

	hs_builder_mark_now(b, &v->step_mark);
	hs_builder_mark_now(b, &v->zero_mark);
	hs_profile_free(v->step_carry);
	hs_profile_free(v->all_carry);
	v->step_carry = v->all_carry = NULL;
	v->step_wall = v->zero_wall = wall;
	/* an empty step in the ring: the window is empty now, not at the next step */
	empty = v->o.window ? hs_builder_copy(b, &v->zero_mark, false) : NULL;
	pthread_mutex_lock(&v->lock);
	if (v->o.window) {
		clear_ring(v);
		if (empty)
			push_ring(v, snapshot(v, empty, wall, wall));
	}
	publish(&v->all, NULL);
	v->steps++;
	pthread_mutex_unlock(&v->lock);
}

void hs_view_rebase(struct hs_view *v, struct hs_builder *b)
{
	/* What the marks hold back is about to go: the samples of the step, of everything so far
	 * and of each reader's seconds so far are kept aside, and the marks start at the new
	 * profile's start. */
	struct hs_profile *all = hs_builder_copy(b, &v->zero_mark, false);

	if (all) {
		/* by command name only: the processes and threads that came and went, and the
		 * samples' times, would make it grow with the recording's length */
		for (size_t i = 0; i < all->samples.n; i++) {
			all->samples.v[i].pid = all->samples.v[i].tid = -1;
			all->samples.v[i].time = 0;
		}
		if (!v->all_carry) {
			v->all_carry = hs_profile_new();
			v->all_carry->max_stacks = CARRY_MAX_STACKS;
		}
		hs_profile_merge(v->all_carry, all, NULL);
		hs_profile_free(all);
	}
	if (v->o.window) {
		struct hs_profile *p = hs_builder_copy(b, &v->step_mark, false);
		if (p && v->step_carry)
			hs_profile_merge(p, v->step_carry, NULL);
		hs_profile_free(v->step_carry);
		v->step_carry = p;
	}
	v->step_mark.values.n = 0;
	v->zero_mark.values.n = 0;
	pthread_mutex_lock(&v->lock);
	for (struct waiter *w = v->waiting; w; w = w->next) {
		if (w->done || !w->due)
			continue;
		struct hs_profile *p = hs_builder_copy(b, &w->mark, false);
		if (p && w->carry)
			hs_profile_merge(p, w->carry, NULL);
		hs_profile_free(w->carry);
		w->carry = p;
		w->mark.values.n = 0;
	}
	/* the next copy of everything so far merges the ended periods in */
	publish(&v->all, NULL);
	pthread_mutex_unlock(&v->lock);
}

void hs_view_end(struct hs_view *v, struct hs_builder *b)
{
	uint64_t now = hs_now_ns();
	int64_t wall = hs_wall_ns();

	if (b) {
		step(v, b, wall);
		make_all(v, b, now, wall);
	}
	/* no reader joins the waiting from now on: every one there is answered below */
	pthread_mutex_lock(&v->lock);
	v->ended = true;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	if (b) {
		serve_waiters(v, b, now, wall, true);
		return;
	}
	pthread_mutex_lock(&v->lock);
	for (struct waiter *w = v->waiting; w; w = w->next) {
		hs_builder_mark_release(&w->mark);
		hs_profile_free(w->carry);
		w->carry = NULL;
		w->done = true;
	}
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

struct hs_snapshot *hs_view_window(struct hs_view *v)
{
	struct hs_snapshot *s;

	if (v->o.window)
		return window_now(v);
	pthread_mutex_lock(&v->lock);
	s = hs_snapshot_get(v->all);
	pthread_mutex_unlock(&v->lock);
	return s;
}

uint64_t hs_view_steps(struct hs_view *v)
{
	uint64_t n;

	pthread_mutex_lock(&v->lock);
	n = v->steps;
	pthread_mutex_unlock(&v->lock);
	return n;
}

unsigned hs_view_waiting(struct hs_view *v)
{
	unsigned n;

	pthread_mutex_lock(&v->lock);
	n = v->nwaiting;
	pthread_mutex_unlock(&v->lock);
	return n;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

static void deadline_of(struct timespec *ts, uint64_t ns)
{
	uint64_t at = hs_now_ns() + ns;

	ts->tv_sec = (time_t)(at / 1000000000ULL);
	ts->tv_nsec = (long)(at % 1000000000ULL);
}

struct hs_snapshot *hs_view_get(struct hs_view *v, enum hs_view_kind kind)
{
	struct hs_snapshot *s = NULL;
	struct timespec until;
	int rc = 0;

	deadline_of(&until, GET_WAIT_NS);
	pthread_mutex_lock(&v->lock);
	if (kind == HS_VIEW_WINDOW && v->o.window) {
		while (!v->nring && !v->ended && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&v->cond, &v->lock, &until);
		pthread_mutex_unlock(&v->lock);
		return window_now(v);
	}
	/* one at most a step old, else a new one asked for and waited for (a new one: not the
	 * NULL of a zero or a period's end meanwhile) */
	uint64_t seq = v->all ? v->all->seq : 0;
	if (!v->ended && (!v->all || hs_now_ns() - v->all_made >= v->o.step_ns)) {
		v->want_all = true;
		while (!v->ended && (!v->all || v->all->seq == seq) && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&v->cond, &v->lock, &until);
	}
	s = hs_snapshot_get(v->all);
	pthread_mutex_unlock(&v->lock);
	return s;
}

struct hs_snapshot *hs_view_next(struct hs_view *v, unsigned seconds, const char **why, bool (*gone)(void *ctx),
				 void *ctx)
{
	struct timespec until;
	struct waiter w = {.seconds = seconds};
	struct waiter **pp;

	if (seconds < 1 || seconds > HS_VIEW_MAX_SECONDS) {
		*why = "range";
		return NULL;
	}
	pthread_mutex_lock(&v->lock);
	if (v->ended || v->nwaiting >= HS_VIEW_MAX_WAITING) {
		*why = v->ended ? "ended" : "busy";
		pthread_mutex_unlock(&v->lock);
		return NULL;
	}
	w.next = v->waiting;
	v->waiting = &w;
	v->nwaiting++;
	deadline_of(&until, 1000000000ULL);
	while (!w.done) {
		/* woken by others' answers as much as by the second passing: the clock decides */
		if (pthread_cond_timedwait(&v->cond, &v->lock, &until) != ETIMEDOUT && hs_now_ns() < ts_ns(&until))
			continue;
		if (!w.gone && gone && gone(ctx))
			w.gone = true; /* the main thread answers it at its next tick */
		deadline_of(&until, 1000000000ULL);
	}
	for (pp = &v->waiting; *pp != &w; pp = &(*pp)->next)
		;
	*pp = w.next;
	v->nwaiting--;
	pthread_mutex_unlock(&v->lock);
	if (!w.result)
		*why = w.gone ? "gone" : "ended";
	return w.result;
}
