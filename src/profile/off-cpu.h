/* Off-CPU time (record --off-cpu): the stack a thread was switched out with, held until the
 * thread runs again and then added to the profile weighted by the nanoseconds it was off the
 * CPU; and each thread's time on the CPU as the switch records measure it, the wall value of
 * its on-CPU samples. The builder (profile/builder.c) feeds it the switch-out samples, the
 * switch records, forks, exits and lost records, in time order. Not thread-safe. */
#ifndef HS_OFF_CPU_H
#define HS_OFF_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/perf-event.h"
#include "profile/profile.h"
#include "util/hashmap.h"
#include "util/util.h"

struct hs_off_cpu_stats {
	uint64_t samples;       /* blocked periods added to the profile */
	uint64_t ns;            /* ... their total */
	uint64_t preempted;     /* switch-outs of runnable threads (preemption, yield): wall time only */
	uint64_t preempted_ns;
	uint64_t short_periods; /* blocked periods under the minimum: not added */
	uint64_t short_ns;      /* ... their total */
	uint64_t unmatched;     /* switch-outs with no switch-in seen before the thread's next
	                         * switch-out (dropped) or on-CPU sample (ended there): lost records */
};

/* A thread switched out with its stack, waiting for its switch-in (off-CPU time). */
struct hs_off_cpu_pending {
	int32_t pid, tid;
	uint32_t comm;     /* string id of the thread's name at the switch-out */
	uint64_t out_time; /* the switch-out */
	bool active;
	bool preempted;    /* switched out runnable: waiting for a CPU, not blocked */
	bool exited;       /* its last switch-outs (system-wide events see them) block nothing */
	uint64_t exit_time;
	/* its time on the CPU since its last on-CPU sample (the wall value of the next one):
	 * ran_ns in closed intervals, and since ran_since while running (switch records) */
	bool running, out_at_sample;
	uint64_t ran_since, ran_ns;
	HS_VEC(uint32_t) locs; /* the stack's locations, leaf first */
};

struct hs_off_cpu {
	struct hs_profile *p;      /* borrowed: where periods are added */
	uint32_t off_ix, wall_ix;  /* value indexes of "off-cpu" and "wall" (0: no wall value) */
	uint64_t min_ns;           /* shorter periods are counted, not added */
	bool keep_time;            /* periods keep their switch-out time as their sample's time */
	struct hs_u64map by_tid;   /* tid -> index in threads */
	HS_VEC(struct hs_off_cpu_pending) threads;
	size_t exited;             /* of them, exited */
	HS_VEC(int64_t) values;    /* one sample's values, reused */
	struct hs_off_cpu_stats stats;
};

/* What the off-CPU values are, for a profile's comments. */
#define HS_OFF_CPU_NOTE                                                                                         \
	"off-CPU: a stack at every switch-out of a blocked thread, weighted by the time until it was switched " \
	"in again; the time preempted threads waited for a CPU counts as wall time only"

/* Whether the value type named type is one only off-CPU bookkeeping adds ("off-cpu", "wall"):
 * a view of it needs off-CPU time recorded. */
bool hs_off_cpu_value(const char *type);
/* The shortest blocked period kept (record --off-cpu-min TIME): "500us", "2ms", "1.5s",
 * "100ns", a bare number in milliseconds, up to 1e18 ns, into *ret. Returns 0, or -EINVAL
 * (ret untouched). */
int hs_off_cpu_min_parse(const char *arg, uint64_t *ret);

/* Periods become samples of p (borrowed: it must outlive every call but hs_off_cpu_release())
 * with value off_ix, and with wall_ix when not 0, both of type nanoseconds; every other value
 * 0. Periods under min_ns are left out. */
void hs_off_cpu_init(struct hs_off_cpu *oc, struct hs_profile *p, uint32_t off_ix, uint32_t wall_ix, uint64_t min_ns,
		     bool keep_time);
/* Frees the threads' stacks; accepts a zeroed struct. */
void hs_off_cpu_release(struct hs_off_cpu *oc);

/* Thread tid of process pid is switched out at time t with the stack locs[0 .. n) (leaf first,
 * copied), named comm (interned into the profile): held until it runs again. Ignored for a
 * thread that exited. */
void hs_off_cpu_out(struct hs_off_cpu *oc, int32_t pid, int32_t tid, uint64_t t, const char *comm,
		    const uint32_t *locs, size_t n);

/* An on-CPU sample of thread tid at time t, whose period is period: the thread runs, so a
 * period still held for it ends here (its switch-in was lost). Returns the wall value of the
 * sample when cpu (a sample of the CPU-time event, with a wall value): the time the thread ran
 * since its previous sample, as the switch records measured it; else, and where that time is
 * not known, period. */
uint64_t hs_off_cpu_running(struct hs_off_cpu *oc, int32_t tid, uint64_t t, uint64_t period, bool cpu);

/* PERF_RECORD_SWITCH or PERF_RECORD_SWITCH_CPU_WIDE: the thread of ev's sample_id is switched
 * out (PERF_RECORD_MISC_SWITCH_OUT) or in; a switch-in ends the period held for it. */
void hs_off_cpu_switch(struct hs_off_cpu *oc, const struct hs_perf_event *ev);

/* Thread tid exited at time t: its last switch-outs block nothing. A fork with its id uses it
 * again. What is kept of threads that exited is bounded: many short-lived threads. */
void hs_off_cpu_exit(struct hs_off_cpu *oc, int32_t tid, uint64_t t);
void hs_off_cpu_fork(struct hs_off_cpu *oc, int32_t tid);

/* Records were lost: no thread's time on the CPU since its last sample is known. */
void hs_off_cpu_lost(struct hs_off_cpu *oc);

/* The end of the recording at end_time: threads still switched out are added with the time up
 * to then. */
void hs_off_cpu_end(struct hs_off_cpu *oc, uint64_t end_time);

#endif
