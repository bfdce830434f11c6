/* Off-CPU time and tracepoint stacks in the builder, from synthetic records: switch-out
 * samples held until the switch-in (PERF_RECORD_SWITCH and SWITCH_CPU_WIDE), preempted
 * switch-outs as wall time only, on-CPU wall time as the switch records measured it,
 * --off-cpu-min, threads still blocked at the end, exited threads, lost switch-ins, and the
 * tracing machinery's frames left out at the top of kernel chains. Kernel names come from a kallsyms file written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/builder.h"

static char kallsyms[64];

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
	int fd;

	(void)state;
	snprintf(kallsyms, sizeof(kallsyms), "/tmp/hs-test-off-cpu.XXXXXX");
	fd = mkstemp(kallsyms);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1))
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(kallsyms);
	return 0;
}

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
	assert_int_equal(f.b.stats.off_cpu_samples, 1);
	assert_int_equal(f.b.stats.off_cpu_ns, 4000);
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
	assert_int_equal(f.b.stats.off_cpu_preempted, 1);
	assert_int_equal(f.b.stats.off_cpu_preempted_ns, 1000);
	assert_int_equal(f.b.stats.off_cpu_samples, 0);
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
	assert_int_equal(f.b.stats.off_cpu_short, 1);
	assert_int_equal(f.b.stats.off_cpu_short_ns, 3999);
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
	assert_int_equal(f.b.stats.off_cpu_unmatched, 2);
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
