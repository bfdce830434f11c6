/* The events hotstack can sample on, by the names perf uses, and perf_event_open itself. */
#ifndef HS_EVENTS_H
#define HS_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

struct hs_event_desc {
	const char *name;   /* canonical name */
	uint32_t type;      /* PERF_TYPE_* */
	uint64_t config;
	bool hardware;      /* needs a hardware PMU */
	bool time_based;    /* its period counts nanoseconds */
	bool tracepoint;    /* PERF_TYPE_TRACEPOINT: every hit is a sample (period 1) */
};

/* Looks an event up by name or alias; NULL when unknown. */
const struct hs_event_desc *hs_event_find(const char *name);
/* Iterates the table: returns NULL past the end. */
const struct hs_event_desc *hs_event_at(size_t i);

/* The value of one sample of e taken every period events (0: at freq per second), in the
 * event's unit: nanoseconds for a time-based event, else a count. */
int64_t hs_event_sample_period(const struct hs_event_desc *e, uint32_t freq, uint64_t period);
struct hs_strbuf;
/* How e is sampled, for a person: "event cpu-clock at 999 Hz". Appended to sb. */
void hs_event_describe(const struct hs_event_desc *e, uint32_t freq, uint64_t period, struct hs_strbuf *sb);
/* Whether e's samples are taken in the kernel's own code paths (a tracepoint, a software event
 * that is not a clock) rather than by an interrupt: their kernel stacks start in the tracing
 * machinery. */
bool hs_event_in_kernel_paths(const struct hs_event_desc *e);
/* Whether off-CPU time can be added to e's samples: only time-based events, so that on- and
 * off-CPU time add up to wall-clock time. */
bool hs_event_off_cpu_ok(const struct hs_event_desc *e);
/* Why a tracepoint was not found, for the CLI to word with its advice; the detail says only
 * what was found. */
enum hs_tracepoint_failure {
	HS_TP_BAD_NAME = 0,   /* not CATEGORY:NAME */
	HS_TP_TRACEFS_DENIED, /* tracefs is there, and this user may not read it */
	HS_TP_NO_TRACEFS,     /* none is mounted */
	HS_TP_NO_CATEGORY,    /* no such category */
	HS_TP_NO_TRACEPOINT,  /* no such tracepoint in its category */
	HS_TP_ID_DENIED,      /* its id: permission refused */
	HS_TP_ID_UNREADABLE,  /* its id: another error */
};

/* A tracepoint "CATEGORY:NAME" (as under /sys/kernel/tracing/events): its id read from tracefs
 * (or debugfs's tracing directory). name is borrowed into ret and must outlive it. Returns 0;
 * -EINVAL when name is not CATEGORY:NAME, -ENODEV when no tracefs is mounted, -ENOENT when
 * there is no such tracepoint, -EACCES when tracefs or its id cannot be read; err says which. */
int hs_tracepoint_find(const char *name, struct hs_event_desc *ret, struct hs_error *err);
/* -e NAME: an event of the table, or (a name with a ':') a tracepoint described in tp, which
 * must outlive its use; into *ret. Returns 0; -ESRCH for a name without a ':' that is no event;
 * else hs_tracepoint_find()'s error, with err filled in. */
int hs_event_lookup(const char *name, struct hs_event_desc *tp, const struct hs_event_desc **ret, struct hs_error *err);
/* The tracing directory holding events/ (mounted tracefs), or NULL when none is readable; then
 * err (may be NULL) is -EACCES when one is there but this user may not read it (tracefs is
 * root's by default), -ENODEV when none is mounted. As root, mounts tracefs (at most one try a
 * process) when none is. */
const char *hs_tracefs_dir(int *err);

/* Names, each owned (hs_names_free() frees them and the array). */
struct hs_names {
	char **v;
	size_t n, cap;
};
void hs_names_free(struct hs_names *names);
struct hs_strbuf;
/* names laid out for a list in out: one a line after two spaces, or filled into lines of at
 * most 78 columns (a longer name alone on its line), each line ending in a newline. */
void hs_names_layout(const struct hs_names *names, bool one_a_line, struct hs_strbuf *out);
/* What can be sampled under tracefs directory tdir (hs_tracefs_dir()): its categories when
 * category is NULL, else the tracepoints of one, sorted by name, into ret. Returns 0, or
 * -ENOENT when there is no such category. */
int hs_tracefs_list(const char *tdir, const char *category, struct hs_names *ret);

/* Whether the machine has a CPU PMU at all (virtual machines often have none). */
bool hs_have_cpu_pmu(void);

/* perf_event_open(2); returns the fd or -errno. */
int hs_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

#endif
