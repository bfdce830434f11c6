/* Event names and perf_event_open. */
#include "events.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/util.h"

static const struct {
	struct hs_event_desc d;
	const char *alias;
} events[] = {
	{{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false, true}, NULL},
	{{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false, true}, NULL},
	{{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false, false}, "faults"},
	{{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false, false}, NULL},
	{{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false, false}, NULL},
	{{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false, false}, "cs"},
	{{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false, false}, "migrations"},
	{{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, false}, "cpu-cycles"},
	{{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true, false}, NULL},
	{{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true, false}, NULL},
	{{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true, false}, NULL},
	{{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true, false}, "branch-instructions"},
	{{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true, false}, NULL},
	{{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, true, false}, NULL},
	{{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, true, false}, NULL},
	{{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, true, false}, NULL},
	{{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true, false}, NULL},
};

const struct hs_event_desc *hs_event_find(const char *name)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(name, events[i].d.name) || (events[i].alias && !strcmp(name, events[i].alias)))
			return &events[i].d;
	return NULL;
}

int hs_event_lookup(const char *name, struct hs_event_desc *tp, const struct hs_event_desc **ret, struct hs_error *err)
{
	const struct hs_event_desc *e = hs_event_find(name);
	int rc;

	if (!e && !strchr(name, ':'))
		return -ESRCH;
	if (!e && (rc = hs_tracepoint_find(name, tp, err)))
		return rc;
	*ret = e ? e : tp;
	return 0;
}

const struct hs_event_desc *hs_event_at(size_t i)
{
	return i < sizeof(events) / sizeof(events[0]) ? &events[i].d : NULL;
}

/* The first of dirs with a readable events/ directory, or NULL with *err set. */
int64_t hs_event_sample_period(const struct hs_event_desc *e, uint32_t freq, uint64_t period)
{
	if (period)
		return (int64_t)period;
	return e->time_based ? (int64_t)(1000000000ULL / freq) : 1;
}

void hs_event_describe(const struct hs_event_desc *e, uint32_t freq, uint64_t period, struct hs_strbuf *sb)
{
	if (period)
		hs_strbuf_addf(sb, "event %s, every %llu events", e->name, (unsigned long long)period);
	else if (e->tracepoint)
		hs_strbuf_addf(sb, "event %s, every hit", e->name);
	else
		hs_strbuf_addf(sb, "event %s at %u Hz", e->name, freq);
}

bool hs_event_in_kernel_paths(const struct hs_event_desc *e)
{
	return e->tracepoint || (e->type == PERF_TYPE_SOFTWARE && !e->time_based);
}

bool hs_event_off_cpu_ok(const struct hs_event_desc *e)
{
	return e->time_based;
}

static const char *find_tracefs(const char *const *dirs, size_t n, int *err)
{
	*err = -ENODEV;
	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (access(path, X_OK) == 0)
			return dirs[i];
		if (errno == EACCES || errno == EPERM)
			*err = -EACCES;
	}
	return NULL;
}

const char *hs_tracefs_dir(int *err)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	static bool tried_mount;
	const char *dir;
	int e;

	dir = find_tracefs(dirs, HS_ARRAY_SIZE(dirs), &e);
	/* Not mounted, as on many machines after boot: root mounts it where the kernel made its
	 * mount point, as perf does (tracefs, else debugfs, whose tracing/ mounts tracefs by
	 * itself). The mount stays, as perf's does. */
	if (!dir && e == -ENODEV && !tried_mount && geteuid() == 0) {
		tried_mount = true;
		if (mount("nodev", dirs[0], "tracefs", 0, NULL) == 0 ||
		    mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL) == 0)
			dir = find_tracefs(dirs, HS_ARRAY_SIZE(dirs), &e);
	}
	if (!dir && err)
		*err = e;
	return dir;
}

static int tp_fail(struct hs_error *err, int code, enum hs_tracepoint_failure what, const char *fmt, ...)
	HS_PRINTF(4, 5);

static int tp_fail(struct hs_error *err, int code, enum hs_tracepoint_failure what, const char *fmt, ...)
{
	va_list ap;

	err->cause = (int)what;
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
	return code;
}

int hs_tracepoint_find(const char *name, struct hs_event_desc *ret, struct hs_error *err)
{
	const char *colon = strchr(name, ':'), *dir;
	char path[512], buf[32], *end;
	size_t cat;
	FILE *f;
	unsigned long long id;
	int e;

	if (!colon || colon == name || !colon[1] || strchr(colon + 1, ':') || strchr(name, '/') ||
	    strstr(name, ".."))
		return tp_fail(err, -EINVAL, HS_TP_BAD_NAME, "'%s' is not a tracepoint name (CATEGORY:NAME)", name);
	dir = hs_tracefs_dir(&e);
	if (!dir && e == -EACCES)
		return tp_fail(err, -EACCES, HS_TP_TRACEFS_DENIED,
			       "no permission to read tracepoint '%s' in /sys/kernel/tracing (tracefs is root's)", name);
	if (!dir)
		return tp_fail(err, -ENODEV, HS_TP_NO_TRACEFS, "no tracefs to look tracepoint '%s' up in", name);
	cat = (size_t)(colon - name);
	snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", dir, (int)cat, name, colon + 1);
	f = fopen(path, "re");
	if (!f) {
		e = errno;
		snprintf(path, sizeof(path), "%s/events/%.*s", dir, (int)cat, name);
		if (e == ENOENT && access(path, F_OK))
			return tp_fail(err, -ENOENT, HS_TP_NO_CATEGORY, "unknown tracepoint category '%.*s'", (int)cat,
				       name);
		if (e == ENOENT)
			return tp_fail(err, -ENOENT, HS_TP_NO_TRACEPOINT, "unknown tracepoint '%s'", name);
		return tp_fail(err, -EACCES, e == EACCES || e == EPERM ? HS_TP_ID_DENIED : HS_TP_ID_UNREADABLE,
			       "cannot read the id of tracepoint '%s' in %s/events: %s", name, dir, strerror(e));
	}
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return tp_fail(err, -EACCES, HS_TP_ID_UNREADABLE, "cannot read the id of tracepoint '%s'", name);
	}
	fclose(f);
	errno = 0;
	id = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return tp_fail(err, -EACCES, HS_TP_ID_UNREADABLE, "tracepoint '%s' has no usable id ('%s')", name, buf);
	memset(ret, 0, sizeof(*ret));
	ret->name = name;
	ret->type = PERF_TYPE_TRACEPOINT;
	ret->config = id;
	ret->tracepoint = true;
	return 0;
}

void hs_names_layout(const struct hs_names *names, bool one_a_line, struct hs_strbuf *out)
{
	size_t col = 0;

	for (size_t i = 0; i < names->n; i++) {
		size_t len = strlen(names->v[i]);
		if (one_a_line) {
			hs_strbuf_addf(out, "  %s\n", names->v[i]);
			continue;
		}
		if (col && col + 1 + len > 78) {
			hs_strbuf_addc(out, '\n');
			col = 0;
		}
		hs_strbuf_addf(out, "%s%s", col ? " " : "  ", names->v[i]);
		col += len + (col ? 1 : 2);
	}
	if (col)
		hs_strbuf_addc(out, '\n');
}

void hs_names_free(struct hs_names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	hs_vec_free(names);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int hs_tracefs_list(const char *tdir, const char *category, struct hs_names *ret)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	if (category) {
		snprintf(path, sizeof(path), "%s/events/%s", tdir, category);
		if (!*category || strchr(category, '/') || access(path, X_OK))
			return -ENOENT;
	} else {
		snprintf(path, sizeof(path), "%s/events", tdir);
	}
	/* the entries that are directories; files (enable, filter, ...) left out */
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		hs_vec_push(ret, hs_xstrdup(de->d_name));
	}
	closedir(d);
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), name_cmp);
	return 0;
}

bool hs_have_cpu_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/armv8_pmuv3_0", F_OK) == 0;
}

int hs_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}
