/* Off-CPU time, per thread: a state machine over switch-out samples and switch records. A
 * switch-out sample comes just before its switch record; the record's time ends the thread's
 * time running, and the switch-in record the time it was off the CPU. */
#include "off-cpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool hs_off_cpu_value(const char *type)
{
	/* the types hs_builder_add_off_cpu() adds */
	return !strcmp(type, "off-cpu") || !strcmp(type, "wall");
}

int hs_off_cpu_min_parse(const char *arg, uint64_t *ret)
{
	double s;

	if (hs_duration_parse(arg, 1e-3, &s) || s * 1e9 > 1e18)
		return -EINVAL;
	*ret = (uint64_t)(s * 1e9 + 0.5);
	return 0;
}

void hs_off_cpu_init(struct hs_off_cpu *oc, struct hs_profile *p, uint32_t off_ix, uint32_t wall_ix, uint64_t min_ns,
		     bool keep_time)
{
	memset(oc, 0, sizeof(*oc));
	oc->p = p;
	oc->off_ix = off_ix;
	oc->wall_ix = wall_ix;
	oc->min_ns = min_ns;
	oc->keep_time = keep_time;
}

void hs_off_cpu_release(struct hs_off_cpu *oc)
{
	if (!oc)
		return;
	for (size_t i = 0; i < oc->threads.n; i++)
		hs_vec_free(&oc->threads.v[i].locs);
	hs_vec_free(&oc->threads);
	hs_u64map_release(&oc->by_tid);
	hs_vec_free(&oc->values);
}

/* Exited threads are kept (their last switch-outs block nothing) until there are more than
 * this many, and more than live ones; then those that exited a while ago go. */
#define OFF_CPU_EXITED_KEPT 4096
#define OFF_CPU_EXIT_KEPT_NS 1000000000ULL

static struct hs_off_cpu_pending *thread_of(struct hs_off_cpu *oc, int32_t tid, bool create)
{
	uint64_t ix;

	if (hs_u64map_get(&oc->by_tid, (uint32_t)tid, &ix))
		return &oc->threads.v[ix];
	if (!create)
		return NULL;
	{
		struct hs_off_cpu_pending e = {0};
		e.tid = tid;
		hs_u64map_put(&oc->by_tid, (uint32_t)tid, oc->threads.n);
		hs_vec_push(&oc->threads, e);
	}
	return &oc->threads.v[oc->threads.n - 1];
}

/* The thread stopped running at time t (switched out). */
static void ran_until(struct hs_off_cpu_pending *e, uint64_t t)
{
	if (e->running && t > e->ran_since)
		e->ran_ns += t - e->ran_since;
	e->running = false;
}

/* The wall value of an on-CPU sample of thread e at time t: the time the thread ran since its
 * previous sample, across switches, as the switch records measured it — a timer interrupt
 * that came late (a virtual CPU held up by its host) covers more than its period, and the
 * thread's wall time still adds up. Where that is not known (the thread's first sample, after
 * lost records), its period. */
static uint64_t wall_of_sample(struct hs_off_cpu_pending *e, uint64_t t, uint64_t period)
{
	uint64_t ns = period;

	if (e->running && t >= e->ran_since)
		ns = e->ran_ns + (t - e->ran_since);
	e->running = true;
	e->ran_since = t;
	e->ran_ns = 0;
	return ns;
}

void hs_off_cpu_out(struct hs_off_cpu *oc, int32_t pid, int32_t tid, uint64_t t, const char *comm,
		    const uint32_t *locs, size_t n)
{
	struct hs_off_cpu_pending *e = thread_of(oc, tid, true);

	if (e->exited)
		return;
	e->out_at_sample = e->running; /* the switch record that follows ends its time running */
	ran_until(e, t);
	if (e->active)
		oc->stats.unmatched++;
	e->active = true;
	e->preempted = false;
	e->pid = pid;
	e->comm = hs_profile_intern_str(oc->p, comm);
	e->out_time = t;
	e->locs.n = 0;
	hs_vec_reserve(&e->locs, n);
	memcpy(e->locs.v, locs, n * sizeof(*locs));
	e->locs.n = n;
}

/* The thread runs again at in_time: its time off the CPU is added, as off-CPU and wall time
 * when it was blocked, as wall time only when it was runnable (preempted). A sample value is
 * held at INT64_MAX rather than turned negative: a time span in a file can be any u64. */
static void add_period(struct hs_off_cpu *oc, struct hs_off_cpu_pending *e, uint64_t in_time)
{
	uint64_t ns = in_time > e->out_time ? in_time - e->out_time : 0;
	int64_t value = (int64_t)HS_MIN(ns, (uint64_t)INT64_MAX);
	uint32_t stack;

	e->active = false;
	if (e->preempted) {
		oc->stats.preempted++;
		oc->stats.preempted_ns += ns;
		if (!oc->wall_ix || !ns || ns < oc->min_ns)
			return;
	} else if (ns < oc->min_ns || !ns) {
		oc->stats.short_periods++;
		oc->stats.short_ns += ns;
		return;
	}
	stack = hs_profile_stack(oc->p, e->locs.v, (uint32_t)e->locs.n);
	hs_vec_reserve(&oc->values, oc->p->types.n);
	memset(oc->values.v, 0, oc->p->types.n * sizeof(*oc->values.v));
	if (!e->preempted)
		oc->values.v[oc->off_ix] = value;
	if (oc->wall_ix)
		oc->values.v[oc->wall_ix] = value;
	hs_profile_add_sample(oc->p, stack, e->comm, e->pid, e->tid, oc->keep_time ? e->out_time : 0, oc->values.v);
	if (!e->preempted) {
		oc->stats.samples++;
		oc->stats.ns += ns;
	}
}

uint64_t hs_off_cpu_running(struct hs_off_cpu *oc, int32_t tid, uint64_t t, uint64_t period, bool cpu)
{
	/* with a wall value, every thread's time on the CPU is followed */
	struct hs_off_cpu_pending *e = thread_of(oc, tid, oc->wall_ix != 0 && cpu);

	if (e && e->active && t > e->out_time) {
		/* running, so switched in: that record was lost, and the period ends here */
		oc->stats.unmatched++;
		add_period(oc, e, t);
		e->running = false; /* since when is not known */
	}
	if (!oc->wall_ix || !cpu || !e || e->exited)
		return period;
	return wall_of_sample(e, t, period);
}

void hs_off_cpu_switch(struct hs_off_cpu *oc, const struct hs_perf_event *ev)
{
	struct hs_off_cpu_pending *e;

	if (!ev->sid.has_time || ev->sid.tid == UINT32_MAX || !ev->sid.tid)
		return;
	/* with a wall value, every thread's time on the CPU is followed */
	e = thread_of(oc, (int32_t)ev->sid.tid, oc->wall_ix != 0);
	if (!e || e->exited)
		return;
	if (ev->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		if (e->out_at_sample && ev->sid.time > e->out_time)
			e->ran_ns += ev->sid.time - e->out_time; /* from the switch-out sample to here */
		e->out_at_sample = false;
		ran_until(e, ev->sid.time);
		if (!e->active)
			return;
		/* still runnable (preempted, yielded): waiting for a CPU is not blocked time */
		e->preempted = !!(ev->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		e->out_time = ev->sid.time; /* the switch itself, just after the sample */
		return;
	}
	e->out_at_sample = false;
	if (!e->running) {
		e->running = true;
		e->ran_since = ev->sid.time;
	}
	if (e->active)
		add_period(oc, e, ev->sid.time);
}

/* The threads that exited over a second before t: their last switch-outs, which come right
 * after their exits, are past. */
static void forget_exited(struct hs_off_cpu *oc, uint64_t t)
{
	size_t kept = 0;

	oc->exited = 0;
	hs_u64map_release(&oc->by_tid);
	for (size_t i = 0; i < oc->threads.n; i++) {
		struct hs_off_cpu_pending *e = &oc->threads.v[i];
		if (e->exited && !e->active && e->exit_time + OFF_CPU_EXIT_KEPT_NS < t) {
			hs_vec_free(&e->locs);
			continue;
		}
		oc->exited += e->exited;
		hs_u64map_put(&oc->by_tid, (uint32_t)e->tid, kept);
		oc->threads.v[kept++] = *e;
	}
	oc->threads.n = kept;
}

void hs_off_cpu_exit(struct hs_off_cpu *oc, int32_t tid, uint64_t t)
{
	struct hs_off_cpu_pending *e = thread_of(oc, tid, true);

	e->active = false;
	oc->exited += !e->exited;
	e->exited = true;
	e->exit_time = t;
	e->running = false;
	hs_vec_free(&e->locs); /* many short-lived threads: keep only the entry, for a while */
	if (oc->exited > OFF_CPU_EXITED_KEPT && oc->exited > oc->threads.n / 2)
		forget_exited(oc, t);
}

void hs_off_cpu_fork(struct hs_off_cpu *oc, int32_t tid)
{
	struct hs_off_cpu_pending *e = thread_of(oc, tid, false);

	if (e && e->exited) {
		e->exited = false; /* the id is used again */
		oc->exited--;
	}
}

void hs_off_cpu_lost(struct hs_off_cpu *oc)
{
	for (size_t i = 0; i < oc->threads.n; i++) {
		oc->threads.v[i].running = false;
		oc->threads.v[i].ran_ns = 0;
	}
}

void hs_off_cpu_end(struct hs_off_cpu *oc, uint64_t end_time)
{
	for (size_t i = 0; i < oc->threads.n; i++)
		if (oc->threads.v[i].active)
			add_period(oc, &oc->threads.v[i], end_time);
}
