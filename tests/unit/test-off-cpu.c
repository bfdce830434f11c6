/* Off-CPU time. The module alone (profile/off-cpu.c), driven call by call: periods from the
 * switch-out to the switch-in under the stack held, preempted periods as wall time only,
 * on-CPU wall time as the switch records measure it, the minimum, lost switch-ins, exits,
 * forks and the end. Then through the builder, from synthetic records: switch-out samples held
 * until the switch-in (PERF_RECORD_SWITCH and SWITCH_CPU_WIDE), --off-cpu-min, threads still
 * blocked at the end, exited threads, lost switch-ins, and the tracing machinery's frames left
 * out at the top of kernel chains. Kernel names come from a kallsyms file written here. */
#include <errno.h>
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

#include "profile/builder.h"
#include "profile/off-cpu.h"

static char kallsyms[PATH_MAX];

#define K_PERF_TRACE 0xffffffff81000000ULL
#define K_TRACEITER 0xffffffff81001000ULL
#define K___SCHEDULE 0xffffffff81002000ULL
#define K_SCHEDULE 0xffffffff81003000ULL
#define K_DO_NANOSLEEP 0xffffffff81004000ULL
#define K_IRQ_EXIT 0xffffffff81005000ULL
#define K_SPIN 0xffffffff81006000ULL

static int setup(void **state)
{
	static const char text[] = "ffffffff81000000 T perf_trace_sched_switch\n"
				   "ffffffff81001000 T __traceiter_sched_switch\n"
				   "ffffffff81002000 t __schedule\n"
				   "ffffffff81003000 T schedule\n"
				   "ffffffff81004000 T do_nanosleep\n"
				   "ffffffff81005000 T irqentry_exit_to_user_mode\n"
				   "ffffffff81006000 T kernel_spin\n"
				   "ffffffff81007000 T _etext\n";

	(void)state;
	return hs_test_write_temp(kallsyms, sizeof(kallsyms), "hs-test-off-cpu", text);
}

static int teardown(void **state)
{
	(void)state;
	unlink(kallsyms);
	return 0;
}

/* ---- the module alone ---- */

/* value indexes of the profile the module adds to */
enum { V_SAMPLES, V_CPU, V_OFF, V_WALL };

struct module {
	struct hs_profile *p;
	struct hs_off_cpu oc;
	uint32_t a, b; /* two locations, named "a" and "b" */
};

static uint32_t named(struct hs_profile *p, const char *name)
{
	uint32_t nm = hs_profile_intern_str(p, name);
	struct hs_line ln = {hs_profile_function(p, nm, nm, 0, 0), 0};

	return hs_profile_location(p, 0, 0, HS_KIND_PSEUDO, &ln, 1);
}

static void module_start(struct module *m, bool wall, uint64_t min_ns, bool keep_time)
{
	m->p = hs_profile_new();
	hs_profile_add_type(m->p, "samples", "count");
	hs_profile_add_type(m->p, "cpu", "nanoseconds");
	hs_profile_add_type(m->p, "off-cpu", "nanoseconds");
	hs_profile_add_type(m->p, "wall", "nanoseconds");
	m->a = named(m->p, "a");
	m->b = named(m->p, "b");
	hs_off_cpu_init(&m->oc, m->p, V_OFF, wall ? V_WALL : 0, min_ns, keep_time);
}

static void module_end(struct module *m)
{
	hs_off_cpu_release(&m->oc);
	hs_profile_free(m->p);
}

/* A switch record of thread tid at time t (has_time false: a record without one). */
static void switch_record(struct module *m, uint32_t type, uint16_t misc, uint32_t tid, uint64_t t, bool has_time)
{
	struct hs_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.misc = misc;
	ev.sid.pid = 100;
	ev.sid.tid = tid;
	ev.sid.has_time = has_time;
	ev.sid.time = t;
	hs_off_cpu_switch(&m->oc, &ev);
}

static void m_out(struct module *m, uint32_t tid, uint64_t t, bool preempt)
{
	switch_record(m, PERF_RECORD_SWITCH,
		      PERF_RECORD_MISC_SWITCH_OUT | (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0), tid, t, true);
}

static void m_in(struct module *m, uint32_t tid, uint64_t t)
{
	switch_record(m, PERF_RECORD_SWITCH, 0, tid, t, true);
}

/* A switch-out sample of thread tid at t with the stack a, b (leaf first). */
static void m_sample_out(struct module *m, int32_t tid, uint64_t t)
{
	uint32_t locs[2] = {m->a, m->b};

	hs_off_cpu_out(&m->oc, 100, tid, t, "worker", locs, 2);
	locs[0] = locs[1] = 0; /* the module holds a copy */
}

/* Value vi of the sample of thread tid, which must be the only one (-1: no sample). */
static int64_t m_value(const struct module *m, int32_t tid, int vi)
{
	int64_t v = -1;

	for (size_t i = 0; i < m->p->samples.n; i++) {
		if (m->p->samples.v[i].tid != tid)
			continue;
		assert_int_equal(v, -1);
		v = hs_profile_sample_values(m->p, (uint32_t)i)[vi];
	}
	return v;
}

/* Blocked: from the switch record after the sample to the switch-in, as off-cpu and wall,
 * under the stack held, with the thread's name and pid; preempted: wall only. */
/* --off-cpu-min TIME: units, milliseconds by default, nothing negative or past the cap. */
static void test_min_parse(void **state)
{
	uint64_t ns = 7;

	(void)state;
	assert_int_equal(hs_off_cpu_min_parse("500us", &ns), 0);
	assert_int_equal(ns, 500000);
	assert_int_equal(hs_off_cpu_min_parse("2", &ns), 0);
	assert_int_equal(ns, 2000000);
	assert_int_equal(hs_off_cpu_min_parse("1.5s", &ns), 0);
	assert_int_equal(ns, 1500000000);
	assert_int_equal(hs_off_cpu_min_parse("100ns", &ns), 0);
	assert_int_equal(ns, 100);
	assert_int_equal(hs_off_cpu_min_parse("", &ns), -EINVAL);
	assert_int_equal(hs_off_cpu_min_parse("-1", &ns), -EINVAL);
	assert_int_equal(hs_off_cpu_min_parse("5q", &ns), -EINVAL);
	assert_int_equal(hs_off_cpu_min_parse("1e20s", &ns), -EINVAL);
	assert_int_equal(hs_off_cpu_min_parse("nan", &ns), -EINVAL);
	assert_int_equal(ns, 100);
	assert_true(hs_off_cpu_value("wall"));
	assert_true(hs_off_cpu_value("off-cpu"));
	assert_false(hs_off_cpu_value("cpu"));
	assert_false(hs_off_cpu_value("samples"));
}

static void test_module_periods(void **state)
{
	struct module m;
	const struct hs_sample *s;
	const uint32_t *locs;

	(void)state;
	module_start(&m, true, 0, true);
	m_sample_out(&m, 7, 1000);
	m_out(&m, 7, 1010, false);
	m_in(&m, 7, 5010);
	assert_int_equal(m.p->samples.n, 1);
	s = &m.p->samples.v[0];
	assert_int_equal(s->pid, 100);
	assert_int_equal(s->tid, 7);
	assert_int_equal(s->time, 1010); /* kept: the switch-out */
	assert_string_equal(hs_profile_str(m.p, s->comm), "worker");
	assert_int_equal(m.p->stacks.v[s->stack].nlocs, 2);
	locs = hs_profile_stack_locs(m.p, s->stack);
	assert_int_equal(locs[0], m.a);
	assert_int_equal(locs[1], m.b);
	assert_int_equal(m_value(&m, 7, V_OFF), 4000);
	assert_int_equal(m_value(&m, 7, V_WALL), 4000);
	assert_int_equal(m_value(&m, 7, V_SAMPLES), 0);
	assert_int_equal(m_value(&m, 7, V_CPU), 0);
	assert_int_equal(m.oc.stats.samples, 1);
	assert_int_equal(m.oc.stats.ns, 4000);

	/* a second switch-in adds nothing: the period ended */
	m_in(&m, 7, 6000);
	assert_int_equal(m.p->samples.n, 1);

	m_sample_out(&m, 8, 6000);
	m_out(&m, 8, 6005, true);
	m_in(&m, 8, 7005);
	assert_int_equal(m_value(&m, 8, V_OFF), 0);
	assert_int_equal(m_value(&m, 8, V_WALL), 1000);
	assert_int_equal(m.oc.stats.preempted, 1);
	assert_int_equal(m.oc.stats.preempted_ns, 1000);
	assert_int_equal(m.oc.stats.samples, 1);
	module_end(&m);
}

/* Without a wall value: preempted periods are not added, threads without a switch-out sample
 * are not followed; periods under the minimum are counted, not added; samples keep no time
 * unless asked. */
static void test_module_no_wall_min(void **state)
{
	struct module m;

	(void)state;
	module_start(&m, false, 500, false);
	m_in(&m, 9, 100);
	m_out(&m, 9, 200, false);
	assert_int_equal(m.oc.threads.n, 0);
	assert_int_equal(hs_off_cpu_running(&m.oc, 9, 300, 77, true), 77);
	assert_int_equal(m.oc.threads.n, 0);

	m_sample_out(&m, 7, 1000);
	m_out(&m, 7, 1000, true);
	m_in(&m, 7, 3000);
	assert_int_equal(m.p->samples.n, 0);
	assert_int_equal(m.oc.stats.preempted, 1);

	m_sample_out(&m, 7, 4000);
	m_out(&m, 7, 4000, false);
	m_in(&m, 7, 4499);
	assert_int_equal(m.p->samples.n, 0);
	assert_int_equal(m.oc.stats.short_periods, 1);
	assert_int_equal(m.oc.stats.short_ns, 499);

	m_sample_out(&m, 7, 5000);
	m_out(&m, 7, 5000, false);
	m_in(&m, 7, 5500);
	assert_int_equal(m_value(&m, 7, V_OFF), 500);
	assert_int_equal(m.p->samples.v[0].time, 0);
	module_end(&m);
}

/* The wall value of on-CPU samples: the time run since the thread's previous sample, as the
 * switch records measured it; the period where it is not known (first sample, after lost
 * records) and for samples of another event. */
static void test_module_running_wall(void **state)
{
	struct module m;

	(void)state;
	module_start(&m, true, 0, false);
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 1000, 777, true), 777);  /* first */
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 2000, 777, true), 1000);
	m_out(&m, 7, 2500, false); /* ran 500, then off the CPU without a sample */
	m_in(&m, 7, 4500);
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 5000, 777, true), 1000); /* 500 + 500 */
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 5500, 777, false), 777); /* not followed */
	hs_off_cpu_lost(&m.oc);
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 6000, 777, true), 777);
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 6100, 777, true), 100);
	/* a switch-out sample ends the time running at its switch record */
	m_sample_out(&m, 7, 6300);
	m_out(&m, 7, 6310, false);
	m_in(&m, 7, 7310);
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 7400, 777, true), 210 + 90);
	assert_int_equal(m.p->samples.n, 1); /* the blocked period only: on-CPU samples are the builder's */
	module_end(&m);
}

/* A switch-in lost: an on-CPU sample of the thread ends its period (and its time running is
 * not known), or its next switch-out replaces the one held. */
static void test_module_lost_switch_in(void **state)
{
	struct module m;

	(void)state;
	module_start(&m, true, 0, false);
	m_sample_out(&m, 7, 1000);
	assert_int_equal(hs_off_cpu_running(&m.oc, 7, 1300, 777, true), 777);
	assert_int_equal(m_value(&m, 7, V_OFF), 300);
	assert_int_equal(m.oc.stats.unmatched, 1);
	/* not at or before the switch-out: the period stays */
	m_sample_out(&m, 8, 2000);
	hs_off_cpu_running(&m.oc, 8, 2000, 777, false);
	assert_int_equal(m.oc.stats.unmatched, 1);
	m_sample_out(&m, 8, 2500);
	assert_int_equal(m.oc.stats.unmatched, 2);
	m_in(&m, 8, 2600);
	assert_int_equal(m_value(&m, 8, V_OFF), 100);
	module_end(&m);
}

/* Threads still switched out at the end count up to it; an exited thread's switch-outs block
 * nothing until a fork uses its id again. Switch records without a time or a real thread are
 * ignored. */
static void test_module_exit_fork_end(void **state)
{
	struct module m;

	(void)state;
	module_start(&m, true, 0, false);
	m_sample_out(&m, 7, 100);
	m_sample_out(&m, 9, 100);
	hs_off_cpu_exit(&m.oc, 9, 150);
	m_sample_out(&m, 9, 200);
	hs_off_cpu_fork(&m.oc, 11); /* unknown: nothing to follow */
	assert_int_equal(m.oc.threads.n, 2);
	hs_off_cpu_end(&m.oc, 1000);
	assert_int_equal(m_value(&m, 7, V_OFF), 900);
	assert_int_equal(m_value(&m, 9, V_OFF), -1);

	hs_off_cpu_fork(&m.oc, 9);
	m_sample_out(&m, 9, 2000);
	switch_record(&m, PERF_RECORD_SWITCH_CPU_WIDE, 0, 9, 2100, false); /* no time */
	switch_record(&m, PERF_RECORD_SWITCH_CPU_WIDE, 0, 0, 2100, true);  /* the idle task */
	switch_record(&m, PERF_RECORD_SWITCH_CPU_WIDE, 0, UINT32_MAX, 2100, true);
	switch_record(&m, PERF_RECORD_SWITCH_CPU_WIDE, 0, 9, 2500, true);
	assert_int_equal(m_value(&m, 9, V_OFF), 500);
	module_end(&m);
}

/* Many short-lived threads: what is kept of those that exited stays bounded, while their last
 * switch-outs right after their exits still block nothing, and a live thread's period is kept. */
static void test_module_many_exits(void **state)
{
	const uint64_t ms = 1000000;
	struct module m;

	(void)state;
	module_start(&m, true, 0, false);
	m_sample_out(&m, 7, ms);
	for (int32_t i = 0; i < 20000; i++) {
		uint64_t t = 2 * ms + (uint64_t)i * ms;
		m_sample_out(&m, 1000 + i, t);
		m_in(&m, (uint32_t)(1000 + i), t + 10);
		hs_off_cpu_exit(&m.oc, 1000 + i, t + 20);
		m_sample_out(&m, 1000 + i, t + 30); /* its last switch-out */
	}
	/* those that exited in the last second are all kept */
	assert_in_range(m.oc.threads.n, 1000, 2 * 4096 + 2);
	/* the last ones' final switch-outs, had they been forgotten, would count up to the end */
	hs_off_cpu_end(&m.oc, 30000 * ms);
	assert_int_equal(m_value(&m, 7, V_OFF), 30000 * ms - ms);
	for (size_t i = 0; i < m.p->samples.n; i++)
		if (m.p->samples.v[i].tid != 7)
			assert_true(m.p->values.v[i * m.p->types.n + V_OFF] <= 10);
	module_end(&m);
}

/* ---- through the builder ---- */

struct fixture {
	struct hs_builder b;
	uint32_t off; /* the off-CPU event */
};

static void start(struct fixture *f, uint64_t min_ns, bool strip)
{
	struct hs_builder_opts o = {0};

	o.kernel = true;
	o.user = true;
	o.kallsyms = kallsyms;
	o.strip_tracing = strip;
	hs_builder_init(&f->b, &o);
	hs_builder_add_event(&f->b, "cpu-clock", true);
	f->off = hs_builder_add_off_cpu(&f->b, min_ns);
}

/* A sample of event evidx whose kernel chain is ks (innermost first). */
static void sample(struct fixture *f, uint32_t evidx, int32_t tid, uint64_t t, uint64_t period, const uint64_t *ks,
		   size_t n)
{
	struct hs_perf_event ev;
	uint64_t chain[16];

	memset(&ev, 0, sizeof(ev));
	chain[0] = PERF_CONTEXT_KERNEL;
	memcpy(chain + 1, ks, n * 8);
	ev.type = PERF_RECORD_SAMPLE;
	ev.sid.pid = 100;
	ev.sid.tid = (uint32_t)tid;
	ev.sid.has_time = true;
	ev.sid.time = t;
	ev.sample.sid = ev.sid;
	ev.sample.ip = ks[0];
	ev.sample.period = period;
	ev.sample.callchain = chain;
	ev.sample.nr_callchain = n + 1;
	hs_builder_event_of(&f->b, &ev, evidx);
}

static void blocked(struct fixture *f, int32_t tid, uint64_t t)
{
	static const uint64_t ks[] = {K_SCHEDULE + 0x23, K_DO_NANOSLEEP + 0x5e};
	sample(f, f->off, tid, t, 1, ks, 2);
}

static void preempted(struct fixture *f, int32_t tid, uint64_t t)
{
	static const uint64_t ks[] = {K_SCHEDULE + 0x23, K_IRQ_EXIT + 0x10};
	sample(f, f->off, tid, t, 1, ks, 2);
}

static void on_cpu(struct fixture *f, int32_t tid, uint64_t t, uint64_t period)
{
	static const uint64_t ks[] = {K_SPIN + 8};
	sample(f, 0, tid, t, period, ks, 1);
}

static void side(struct fixture *f, uint32_t type, uint16_t misc, int32_t tid, uint64_t t)
{
	struct hs_perf_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.misc = misc;
	ev.sid.pid = 100;
	ev.sid.tid = (uint32_t)tid;
	ev.sid.has_time = true;
	ev.sid.time = t;
	if (type == PERF_RECORD_EXIT || type == PERF_RECORD_FORK) {
		ev.task.pid = ev.task.ppid = 100;
		ev.task.tid = (uint32_t)tid;
		ev.task.ptid = 100;
		ev.task.time = t;
	}
	hs_builder_event(&f->b, &ev);
}

static void switch_out(struct fixture *f, int32_t tid, uint64_t t, bool preempt)
{
	side(f, PERF_RECORD_SWITCH,
	     PERF_RECORD_MISC_SWITCH_OUT | (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0), tid, t);
}

static void switch_in(struct fixture *f, int32_t tid, uint64_t t)
{
	side(f, PERF_RECORD_SWITCH, 0, tid, t);
}

/* Value vi of the samples whose leaf is named leaf, added up (tid -1: any thread). */
static int64_t total_at(const struct hs_profile *p, const char *type, const char *leaf, int32_t tid)
{
	int vi = hs_profile_find_type(p, type);
	int64_t sum = 0;

	assert_true(vi >= 0);
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		if (tid >= 0 && s->tid != tid)
			continue;
		if (!leaf || !strcmp(hs_profile_location_name(p, locs[0]), leaf))
			sum += hs_profile_sample_values(p, (uint32_t)i)[vi];
	}
	return sum;
}

static void test_types(void **state)
{
	struct fixture f;
	struct hs_profile *p;

	(void)state;
	start(&f, 0, false);
	p = hs_builder_take(&f.b);
	assert_int_equal(p->types.n, 4);
	assert_int_equal(hs_profile_find_type(p, "samples"), 0);
	assert_int_equal(hs_profile_find_type(p, "cpu"), 1);
	assert_int_equal(hs_profile_find_type(p, "off-cpu"), 2);
	assert_int_equal(hs_profile_find_type(p, "wall"), 3);
	assert_string_equal(hs_profile_str(p, p->types.v[2].unit), "nanoseconds");
	assert_string_equal(hs_profile_str(p, p->types.v[3].unit), "nanoseconds");
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* A blocked period is weighed from the switch-out to the switch-in, under the stack taken at
 * the switch-out, in off-cpu and wall; on-CPU samples go to cpu and wall. */
static void test_blocked(void **state)
{
	struct fixture f;
	struct hs_profile *p;
	const uint32_t *locs;

	(void)state;
	start(&f, 0, false);
	on_cpu(&f, 7, 100, 1000000);
	blocked(&f, 7, 1000);
	switch_out(&f, 7, 1010, false);
	on_cpu(&f, 8, 2000, 1000000); /* another thread meanwhile */
	switch_in(&f, 7, 5010);
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "off-cpu", "schedule", 7), 4000);
	assert_int_equal(total_at(p, "wall", "schedule", 7), 4000);
	assert_int_equal(total_at(p, "samples", "schedule", -1), 0);
	assert_int_equal(total_at(p, "cpu", "schedule", -1), 0);
	assert_int_equal(total_at(p, "cpu", "kernel_spin", -1), 2000000);
	assert_int_equal(total_at(p, "wall", "kernel_spin", 7), 1000000);
	assert_int_equal(total_at(p, "samples", NULL, -1), 2);
	assert_int_equal(total_at(p, "off-cpu", NULL, -1), 4000);
	/* the blocking path, innermost first */
	for (size_t i = 0; i < p->samples.n; i++) {
		if (hs_profile_sample_values(p, (uint32_t)i)[2]) {
			locs = hs_profile_stack_locs(p, p->samples.v[i].stack);
			assert_int_equal(p->stacks.v[p->samples.v[i].stack].nlocs, 2);
			assert_string_equal(hs_profile_location_name(p, locs[0]), "schedule");
			assert_string_equal(hs_profile_location_name(p, locs[1]), "do_nanosleep");
			assert_int_equal(p->samples.v[i].pid, 100);
		}
	}
	assert_int_equal(f.b.stats.off_cpu.samples, 1);
	assert_int_equal(f.b.stats.off_cpu.ns, 4000);
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* An on-CPU sample's wall value is the time its thread ran since its previous sample, across
 * switches: a timer interrupt that came late covers more than its period. The cpu value stays
 * the period. Where that time is not known (the first sample, after lost records), the period. */
static void test_wall_measured(void **state)
{
	struct fixture f;
	struct hs_profile *p;

	(void)state;
	start(&f, 0, false);
	on_cpu(&f, 7, 1000, 1000);  /* first: its period */
	on_cpu(&f, 7, 2000, 1000);  /* 1000 ran */
	on_cpu(&f, 7, 5000, 1000);  /* late: 3000 ran */
	blocked(&f, 7, 5500);
	switch_out(&f, 7, 5510, false); /* 510 ran */
	switch_in(&f, 7, 9510);
	on_cpu(&f, 7, 10000, 1000); /* 510 + 490 ran */
	side(&f, PERF_RECORD_LOST, 0, 7, 10500);
	on_cpu(&f, 7, 11500, 1000); /* after a loss: its period */
	on_cpu(&f, 7, 14000, 1000); /* 2500 ran */
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "cpu", "kernel_spin", 7), 6000);
	assert_int_equal(total_at(p, "wall", "kernel_spin", 7), 1000 + 1000 + 3000 + 1000 + 1000 + 2500);
	assert_int_equal(total_at(p, "wall", "schedule", 7), 4000);
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* A preempted thread was runnable: its wait for a CPU is wall time, not off-CPU time. */
static void test_preempted(void **state)
{
	struct fixture f;
	struct hs_profile *p;

	(void)state;
	start(&f, 0, false);
	preempted(&f, 7, 6000);
	switch_out(&f, 7, 6005, true);
	switch_in(&f, 7, 7005);
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "off-cpu", NULL, -1), 0);
	assert_int_equal(total_at(p, "wall", "schedule", 7), 1000);
	assert_int_equal(f.b.stats.off_cpu.preempted, 1);
	assert_int_equal(f.b.stats.off_cpu.preempted_ns, 1000);
	assert_int_equal(f.b.stats.off_cpu.samples, 0);
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* --off-cpu-min: shorter periods are counted, not added. */
static void test_min(void **state)
{
	struct fixture f;
	struct hs_profile *p;

	(void)state;
	start(&f, 5000, false);
	blocked(&f, 7, 1000);
	switch_out(&f, 7, 1000, false);
	switch_in(&f, 7, 4999); /* 3999 ns */
	blocked(&f, 7, 10000);
	switch_out(&f, 7, 10000, false);
	switch_in(&f, 7, 15000); /* 5000 ns: kept */
	preempted(&f, 7, 20000);
	switch_out(&f, 7, 20000, true);
	switch_in(&f, 7, 20100); /* a short wait for a CPU: not in wall either */
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "off-cpu", NULL, -1), 5000);
	assert_int_equal(total_at(p, "wall", NULL, -1), 5000);
	assert_int_equal(f.b.stats.off_cpu.short_periods, 1);
	assert_int_equal(f.b.stats.off_cpu.short_ns, 3999);
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* A thread still blocked at the end counts up to the end; an exited one does not, and its
 * later switch-outs (system-wide events see the last one) are ignored until the id is reused. */
static void test_end_and_exit(void **state)
{
	struct fixture f;
	struct hs_profile *p;

	(void)state;
	start(&f, 0, false);
	blocked(&f, 7, 8000);
	switch_out(&f, 7, 8000, false);
	blocked(&f, 9, 8000);
	switch_out(&f, 9, 8000, false);
	side(&f, PERF_RECORD_EXIT, 0, 9, 8500);
	blocked(&f, 9, 8600);
	switch_out(&f, 9, 8600, false);
	hs_builder_off_cpu_end(&f.b, 10000);
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "off-cpu", NULL, 7), 2000);
	assert_int_equal(total_at(p, "off-cpu", NULL, 9), 0);
	hs_profile_free(p);
	hs_builder_release(&f.b);

	/* the id used again after a fork */
	start(&f, 0, false);
	side(&f, PERF_RECORD_EXIT, 0, 9, 100);
	side(&f, PERF_RECORD_FORK, 0, 9, 200);
	blocked(&f, 9, 300);
	switch_out(&f, 9, 300, false);
	switch_in(&f, 9, 700);
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "off-cpu", NULL, 9), 400);
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* A switch-in lost: the next switch-out replaces the held one, an on-CPU sample of the thread
 * ends its period. CPU-wide switch records work
 * as the per-thread ones. The idle task is not a thread that blocks. */
static void test_lost_cpu_wide_idle(void **state)
{
	struct fixture f;
	struct hs_profile *p;

	(void)state;
	start(&f, 0, false);
	blocked(&f, 7, 1000);
	switch_out(&f, 7, 1000, false);
	blocked(&f, 7, 3000);
	side(&f, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, 7, 3000);
	side(&f, PERF_RECORD_SWITCH_CPU_WIDE, 0, 7, 3300);
	blocked(&f, 0, 4000);
	side(&f, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, 0, 4000);
	side(&f, PERF_RECORD_SWITCH_CPU_WIDE, 0, 0, 5000);
	/* a lost switch-in, then the thread runs: the period ends at its on-CPU sample */
	blocked(&f, 7, 5500);
	switch_out(&f, 7, 5500, false);
	on_cpu(&f, 7, 5800, 1000);
	hs_builder_off_cpu_end(&f.b, 6000);
	p = hs_builder_take(&f.b);
	assert_int_equal(total_at(p, "off-cpu", NULL, -1), 600);
	assert_int_equal(f.b.stats.off_cpu.unmatched, 2);
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

/* Kernel chains of tracepoints and software events start at the traced code: frames of the
 * tracing machinery before it are left out when asked for, and only at the top. */
static void test_strip_tracing(void **state)
{
	static const uint64_t ks[] = {K_PERF_TRACE + 0x40, K_TRACEITER + 0x20, K___SCHEDULE + 0x618, K_SCHEDULE + 0x23,
				      K_PERF_TRACE + 0x10};
	struct fixture f;
	struct hs_profile *p;
	const uint32_t *locs;

	(void)state;
	for (int strip = 0; strip < 2; strip++) {
		start(&f, 0, strip);
		sample(&f, 0, 7, 100, 1, ks, 5);
		p = hs_builder_take(&f.b);
		assert_int_equal(p->samples.n, 1);
		locs = hs_profile_stack_locs(p, p->samples.v[0].stack);
		if (strip) {
			assert_int_equal(p->stacks.v[p->samples.v[0].stack].nlocs, 3);
			assert_string_equal(hs_profile_location_name(p, locs[0]), "__schedule");
			assert_string_equal(hs_profile_location_name(p, locs[1]), "schedule");
			/* not at the top: kept */
			assert_string_equal(hs_profile_location_name(p, locs[2]), "perf_trace_sched_switch");
			assert_int_equal(f.b.stats.tracing_frames, 2);
		} else {
			assert_int_equal(p->stacks.v[p->samples.v[0].stack].nlocs, 5);
			assert_string_equal(hs_profile_location_name(p, locs[0]), "perf_trace_sched_switch");
		}
		hs_profile_free(p);
		hs_builder_release(&f.b);
	}
	/* off-CPU samples always start at the traced code */
	start(&f, 0, false);
	sample(&f, f.off, 7, 100, 1, ks, 5);
	switch_in(&f, 7, 200);
	p = hs_builder_take(&f.b);
	assert_int_equal(p->samples.n, 1);
	locs = hs_profile_stack_locs(p, p->samples.v[0].stack);
	assert_string_equal(hs_profile_location_name(p, locs[0]), "__schedule");
	hs_profile_free(p);
	hs_builder_release(&f.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_min_parse),
		cmocka_unit_test(test_module_periods),
		cmocka_unit_test(test_module_no_wall_min),
		cmocka_unit_test(test_module_running_wall),
		cmocka_unit_test(test_module_lost_switch_in),
		cmocka_unit_test(test_module_exit_fork_end),
		cmocka_unit_test(test_module_many_exits),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_preempted),
		cmocka_unit_test(test_wall_measured),
		cmocka_unit_test(test_min),
		cmocka_unit_test(test_end_and_exit),
		cmocka_unit_test(test_lost_cpu_wide_idle),
		cmocka_unit_test(test_strip_tracing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
