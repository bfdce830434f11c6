/* The events hotstack can sample on, by the names perf uses, and perf_event_open itself. */
#ifndef HS_EVENTS_H
#define HS_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct hs_event_desc {
	const char *name;   /* canonical name */
	uint32_t type;      /* PERF_TYPE_* */
	uint64_t config;
	bool hardware;      /* needs a hardware PMU */
	bool time_based;    /* its period counts nanoseconds */
};

/* Looks an event up by name or alias; NULL when unknown. */
const struct hs_event_desc *hs_event_find(const char *name);
/* Iterates the table: returns NULL past the end. */
const struct hs_event_desc *hs_event_at(size_t i);
/* Whether the machine has a CPU PMU at all (virtual machines often have none). */
bool hs_have_cpu_pmu(void);

/* perf_event_open(2); returns the fd or -errno. */
int hs_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

#endif
