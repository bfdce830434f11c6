/* The events of a live recording: perf_event_open per CPU (per thread too for -p), one mmap
 * ring per CPU that every event of that CPU writes to (PERF_EVENT_IOC_SET_OUTPUT), the
 * fallbacks older kernels and unprivileged users need, and the TSC of the events' clock. */
#include "session-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* A pid that cannot be attached to: gone, or a zombie (it has exited, its parent has not reaped
 * it yet: /proc still lists it, but it has no threads left to sample). */
int hs_record_no_such_process(struct hs_error *err, int32_t pid)
{
	char path[64], buf[512], *close_paren;
	int parent = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		/* "pid (comm) S ppid ...": comm may hold spaces and parentheses, the last ')' ends it */
		close_paren = strrchr(buf, ')');
		if (close_paren && sscanf(close_paren + 1, " Z %d", &parent) == 1)
			return hs_record_fail(err, -ESRCH, HS_RECORD_FAILED,
				    "process %d has exited: a zombie, not yet reaped by its parent (pid %d), with "
				    "nothing left to record",
				    (int)pid, parent);
	}
	return hs_record_fail(err, -ESRCH, HS_RECORD_FAILED, "no such process: %d", (int)pid);
}

/* ---- events ---- */

int hs_record_cpus_add(struct hs_record_cpus *cpus, const char *list)
{
	const char *p = list;
	size_t n0 = cpus->n;

	while (*p && *p != '\n') {
		char *end;
		long a, b;

		a = b = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
		if (a >= 0 && *end == '-')
			b = (end[1] >= '0' && end[1] <= '9') ? strtol(end + 1, &end, 10) : -1;
		if (a < 0 || b < a || b > HS_RECORD_MAX_CPU || (*end && *end != ',' && *end != '\n') ||
		    (*end == ',' && (!end[1] || end[1] == '\n'))) {
			cpus->n = n0;
			return -EINVAL;
		}
		for (long c = a; c <= b; c++)
			hs_vec_push(cpus, (int)c);
		p = *end == ',' ? end + 1 : end;
	}
	return p == list ? -EINVAL : 0;
}

/* -C: the online CPUs that the list names, each online, in order and once. */
static int keep_cpus(struct hs_record *r, const char *online, struct hs_error *err)
{
	struct hs_record_cpus want = {0};
	bool *asked = hs_xcalloc(HS_RECORD_MAX_CPU + 1, sizeof(bool));
	size_t k = 0;
	int rc = 0;

	if (hs_record_cpus_add(&want, r->o.cpu_list)) {
		rc = hs_record_fail(err, -EINVAL, HS_RECORD_BAD_CPUS,
				    "invalid CPU list '%s' (CPU numbers and ranges: 0-2,4)", r->o.cpu_list);
		goto out;
	}
	for (size_t i = 0; i < want.n; i++) {
		bool on = false;
		for (size_t j = 0; j < r->cpus.n && !on; j++)
			on = r->cpus.v[j] == want.v[i];
		if (!on) {
			rc = hs_record_fail(err, -ENODEV, HS_RECORD_BAD_CPUS, "CPU %d is not online (online: %.*s)",
					    want.v[i], (int)strcspn(online, "\n"), online);
			goto out;
		}
		asked[want.v[i]] = true;
	}
	for (size_t j = 0; j < r->cpus.n; j++)
		if (asked[r->cpus.v[j]])
			r->cpus.v[k++] = r->cpus.v[j];
	r->cpus.n = k;
out:
	free(asked);
	hs_vec_free(&want);
	return rc;
}

int hs_record_read_cpus(struct hs_record *r, struct hs_error *err)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096];

	if (!f || !fgets(buf, sizeof(buf), f) || hs_record_cpus_add(&r->cpus, buf)) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (f)
			fclose(f);
		f = NULL;
		r->cpus.n = 0;
		for (long i = 0; i < n; i++)
			hs_vec_push(&r->cpus, (int)i);
		snprintf(buf, sizeof(buf), "0-%ld", n - 1);
	}
	if (f)
		fclose(f);
	if (!r->cpus.n)
		return hs_record_fail(err, -ENODEV, HS_RECORD_FAILED, "cannot tell which CPUs are online");
	return r->o.cpu_list ? keep_cpus(r, buf, err) : 0;
}

uint32_t hs_record_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
	unsigned int v = 127;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 127;
		fclose(f);
	}
	return v;
}

static int open_error(struct hs_record *r, int e, pid_t pid, struct hs_error *err)
{
	const struct hs_event_desc *ev = r->o.event;

	switch (e) {
	case -EACCES:
	case -EPERM:
		return hs_record_denied(e, pid, err);
	case -ENOENT:
	case -EOPNOTSUPP:
	case -ENODEV:
		if (r->o.callgraph == HS_CG_LBR)
			return hs_record_fail(err, e, HS_RECORD_NO_LBR, "%s",
					      hs_have_cpu_pmu() ? "" : "this machine has no hardware PMU");
		if (ev->hardware && !hs_have_cpu_pmu())
			return hs_record_fail(err, e, HS_RECORD_EVENT_UNSUPPORTED,
					      "event '%s' needs a hardware PMU and this machine has none (usual in "
					      "virtual machines)",
					      ev->name);
		return hs_record_fail(err, e, HS_RECORD_EVENT_UNSUPPORTED, "event '%s' is not supported here (%s)",
				      ev->name, strerror(-e));
	case -ESRCH:
		return hs_record_no_such_process(err, pid);
	case -EINVAL: {
		unsigned int max = 0;
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
		if (f) {
			if (fscanf(f, "%u", &max) != 1)
				max = 0;
			fclose(f);
		}
		if (!r->o.period && max && r->o.freq > max)
			return hs_record_fail(err, e, HS_RECORD_FREQ_TOO_HIGH,
					      "above the kernel's limit (kernel.perf_event_max_sample_rate is %u)", max);
		return hs_record_fail(err, e, HS_RECORD_FAILED, "perf_event_open refused event '%s': %s",
				      ev->name, strerror(-e));
	}
	case -EMFILE:
	case -ENFILE:
		return hs_record_fail(err, e, HS_RECORD_TOO_MANY_FILES, "too many open files for perf events");
	default:
		return hs_record_fail(err, e, HS_RECORD_FAILED, "perf_event_open failed for event '%s': %s",
				      ev->name, strerror(-e));
	}
}

void hs_record_setup_attr(struct hs_record *r)
{
	struct perf_event_attr *a = &r->attr;
	const struct hs_record_opts *o = &r->o;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = o->event->type;
	a->config = o->event->config;
	if (o->period || o->event->tracepoint) {
		/* a tracepoint: every hit, unless -c says otherwise */
		a->sample_period = o->period ? o->period : 1;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq;
	}
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (o->callgraph == HS_CG_FP || ((o->callgraph == HS_CG_STACK || o->callgraph == HS_CG_LBR) && o->kernel))
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (o->callgraph == HS_CG_LBR || (o->lbr_repair && o->event->hardware)) {
		/* -g lbr: the user part from the branch records; the kernel's chain still gives its
		 * part and, through PERF_CONTEXT_USER, the user instruction of samples taken in the
		 * kernel. -g fp and auto: the records check the caller of the leaf frame */
		a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK |
					PERF_SAMPLE_BRANCH_NO_FLAGS | PERF_SAMPLE_BRANCH_NO_CYCLES;
		r->layout.branch_sample_type = a->branch_sample_type;
	}
	if (o->callgraph == HS_CG_STACK) {
		/* the kernel part of the chain from the kernel; the user part is unwound here */
		a->exclude_callchain_user = 1;
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = HS_PERF_REGS_MASK;
		a->sample_stack_user = o->stack_bytes;
		r->layout.sample_regs_user = a->sample_regs_user;
	}
	a->disabled = 1;
	a->inherit = !o->all_cpus;
	a->enable_on_exec = o->argv && !o->all_cpus;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	/* no build_id: the kernel would mark the MMAP2 records of other tools' events (perf's) as
	 * holding build-ids too, over their device and inode (perf-event.h). A file's build-id is
	 * read from the file, captured through /proc/PID/map_files when it is mapped */
	a->exclude_callchain_kernel = !o->kernel;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->sample_max_stack = (uint16_t)r->o.max_stack;
	/* wake up when half the ring is full (a wake-up costs as much as several samples), the
	 * round's records handed on at once (session.c); the loop also drains on a timer */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((o->mmap_pages * (size_t)sysconf(_SC_PAGESIZE)) / 2);

	r->layout.sample_type = a->sample_type;
	r->layout.sample_id_all = true;
	/* and no build_id: a build-id bit that another tool's event left set is ignored */
	r->layout.build_id = false;

	/* side-band on a dummy event of its own where the kernel counts each event's lost records:
	 * then the sampling events' counts are samples alone (lost.c); and with -a, where it has
	 * rings of its own, so that no process's mappings crowd out the others' samples
	 * (sideband.c). Its layout is the samples' but for the branch records a software event
	 * cannot take (and never has to: it never samples) */
	r->lost_counted = hs_record_lost_countable();
	if ((r->side_apart = r->lost_counted || o->all_cpus)) {
		struct perf_event_attr *d = &r->attr_side;
		if (r->lost_counted)
			a->read_format = PERF_FORMAT_LOST;
		*d = *a;
		d->type = PERF_TYPE_SOFTWARE;
		d->config = PERF_COUNT_SW_DUMMY;
		d->freq = 0;
		d->sample_period = 0;
		d->sample_type &= ~(uint64_t)PERF_SAMPLE_BRANCH_STACK;
		d->branch_sample_type = 0;
		a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 0;
	}

	if (o->off_cpu) {
		/* a sample at every switch-out, taken in the scheduler (its kernel chain starts at
		 * schedule()), with the same layout as the main event's; no side-band records but the
		 * switches, which the main event already sends */
		struct perf_event_attr *b = &r->attr_off_cpu;
		*b = *a;
		b->type = PERF_TYPE_SOFTWARE;
		b->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		b->freq = 0;
		b->sample_period = 1;
		b->mmap = b->mmap2 = b->comm = b->comm_exec = b->task = 0;
		b->context_switch = 1;
	}
}

/* --off-cpu: the context-switch event for (pid, cpu), into the ring of that CPU (which exists:
 * the main event made it). Its id tells its samples apart. */
static int open_off_cpu(struct hs_record *r, pid_t pid, size_t cpu_ix, struct hs_error *err)
{
	struct perf_event_attr *a = &r->attr_off_cpu;
	int cpu = r->cpus.v[cpu_ix], fd;
	uint64_t id;

	if (!r->o.off_cpu)
		return 0;
	/* the same fallbacks as the main event's, so that the layouts stay the same */
	a->use_clockid = r->attr.use_clockid;
	a->clockid = r->attr.clockid;
	if (r->attr.exclude_kernel)
		return hs_record_fail(err, -EACCES, HS_RECORD_OFF_CPU_NO_KERNEL, "kernel.perf_event_paranoid is %d",
				      hs_record_paranoid());
	fd = hs_perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd == -ESRCH)
		return -ESRCH;
	if (fd < 0)
		return hs_record_fail(err, fd, HS_RECORD_OFF_CPU_EVENT, "cannot open the context-switch event");
	hs_vec_push(&r->fds, fd);
	hs_record_rt_attach(r, fd); /* the runtime frames a thread blocked in, too */
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings.v[cpu_ix].fd) < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot share the ring buffer of CPU %d: %s",
				      cpu, strerror(errno));
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot get the id of the context-switch event: %s",
				      strerror(errno));
	hs_u64map_put(&r->off_cpu_ids, id, 1);
	return 0;
}

void hs_record_side_attr(struct hs_record *r)
{
	struct perf_event_attr *d = &r->attr_side;

	d->use_clockid = r->attr.use_clockid;
	d->clockid = r->attr.clockid;
	d->exclude_kernel = r->attr.exclude_kernel;
	d->exclude_callchain_kernel = r->attr.exclude_callchain_kernel;
	d->sample_type = r->attr.sample_type & ~(uint64_t)PERF_SAMPLE_BRANCH_STACK;
}

/* The side-band event for (pid, cpu), into the ring of that CPU (r->side_apart; -a's are
 * opened once every CPU's ring is there, on rings of their own: sideband.c). */
static int open_side(struct hs_record *r, pid_t pid, size_t cpu_ix, struct hs_error *err)
{
	int cpu = r->cpus.v[cpu_ix], fd;

	if (!r->side_apart || r->o.all_cpus)
		return 0;
	hs_record_side_attr(r);
	fd = hs_perf_event_open(&r->attr_side, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd == -ESRCH)
		return -ESRCH;
	if (fd < 0)
		return hs_record_fail(err, fd, HS_RECORD_FAILED, "cannot open the side-band event: %s", strerror(-fd));
	hs_vec_push(&r->fds, fd);
	hs_vec_push(&r->side_fds, fd);
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings.v[cpu_ix].fd) < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot share the ring buffer of CPU %d: %s", cpu,
				      strerror(errno));
	return 0;
}

/* What goes with the main event of (pid, cpu) once its ring is there. */
static int open_more(struct hs_record *r, pid_t pid, size_t cpu_ix, struct hs_error *err)
{
	int rc = open_side(r, pid, cpu_ix, err);

	return rc ? rc : open_off_cpu(r, pid, cpu_ix, err);
}

enum hs_record_event hs_record_event_index(const struct hs_record *r, uint64_t id)
{
	uint64_t v;

	return r->o.off_cpu && hs_u64map_get(&r->off_cpu_ids, id, &v) ? HS_REC_EVENT_OFF_CPU : HS_REC_EVENT_MAIN;
}

/* Opens the event for (pid, cpu); sends its records to the ring of that CPU, creating the ring
 * for the first event of the CPU. */
bool hs_record_times_monotonic(const struct hs_record *r)
{
	/* a kernel that refused use_clockid stamps events with its local clock */
	return r->attr.use_clockid && r->attr.clockid == CLOCK_MONOTONIC;
}

static int open_one(struct hs_record *r, pid_t pid, size_t cpu_ix, struct hs_error *err)
{
	int cpu = r->cpus.v[cpu_ix];
	int fd = hs_perf_event_open(&r->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd == -EINVAL && r->attr.use_clockid) {
		/* the rings' times cannot be compared with the reader's clock: a ring then holds
		 * two rounds' records (session.c), so it is read at a quarter full */
		r->attr.use_clockid = 0;
		r->attr.wakeup_watermark /= 2;
		fd = hs_perf_event_open(&r->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if ((fd == -EOPNOTSUPP || fd == -ENOENT || fd == -EINVAL) && r->o.callgraph != HS_CG_LBR &&
	    (r->attr.sample_type & PERF_SAMPLE_BRANCH_STACK) && !r->fds.n) {
		/* no last-branch records on this CPU: leaf frames go unrepaired. Only for the first
		 * event: the layout is the recording's, and events already open write branches */
		r->attr.sample_type &= ~(uint64_t)PERF_SAMPLE_BRANCH_STACK;
		r->attr.branch_sample_type = 0;
		r->layout.sample_type = r->attr.sample_type;
		r->layout.branch_sample_type = 0;
		fd = hs_perf_event_open(&r->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if ((fd == -EACCES || fd == -EPERM) && !r->attr.exclude_kernel && !r->o.all_cpus) {
		/* unprivileged users may still sample user space of their own processes */
		r->attr.exclude_kernel = 1;
		r->attr.exclude_callchain_kernel = 1;
		fd = hs_perf_event_open(&r->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			r->user_only = r->o.kernel;
		else
			r->attr.exclude_kernel = r->attr.exclude_callchain_kernel = 0;
	}
	if (fd < 0)
		return fd == -ESRCH ? -ESRCH : open_error(r, fd, pid, err);
	hs_vec_push(&r->fds, fd);
	hs_record_rt_attach(r, fd);
	if (cpu_ix < r->rings.n) {
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings.v[cpu_ix].fd) < 0)
			return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot share the ring buffer of CPU %d: %s",
					      cpu, strerror(errno));
		return open_more(r, pid, cpu_ix, err);
	}
	{
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		struct hs_record_ring ring = {fd, cpu, NULL, (r->o.mmap_pages + 1) * page, {0}};
		struct epoll_event ee = {EPOLLIN, {.u64 = 1000 + r->rings.n}};

		ring.base = mmap(NULL, ring.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		/* unprivileged users may lock only kernel.perf_event_mlock_kb per CPU: make do with
		 * smaller rings unless -m asked for a size */
		while (ring.base == MAP_FAILED && errno == EPERM && !r->pages_explicit && r->o.mmap_pages > 16) {
			r->o.mmap_pages /= 2;
			ring.len = (r->o.mmap_pages + 1) * page;
			ring.base = mmap(NULL, ring.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		}
		if (ring.base == MAP_FAILED) {
			int e = errno;
			if (e == EPERM)
				return hs_record_ring_denied(r, r->o.mmap_pages, err);
			return hs_record_fail(err, -e, HS_RECORD_FAILED, "cannot map the ring buffer of CPU %d: %s",
					      cpu, strerror(e));
		}
		hs_ring_init(&ring.ring, ring.base, page, r->o.mmap_pages * page);
		hs_vec_push(&r->rings, ring);
		pthread_mutex_init(&r->rings.v[r->rings.n - 1].lock, NULL);
		epoll_ctl(r->ring_epfd, EPOLL_CTL_ADD, fd, &ee);
	}
	return open_more(r, pid, cpu_ix, err);
}

int hs_record_open_for(struct hs_record *r, pid_t pid, struct hs_error *err)
{
	for (size_t c = 0; c < r->cpus.n; c++) {
		int rc = open_one(r, pid, c, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the TSC ---- */

#if defined(__x86_64__)
/* A (TSC, CLOCK_MONOTONIC) pair read as close together as a few tries allow. */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t t0 = hs_now_ns(), c = __rdtsc(), t1 = hs_now_ns();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = c;
			*ns = t0 + (t1 - t0) / 2;
		}
	}
}
#endif

/* How a runtime's TSC timestamps (jitdump's architecture-timestamp flag) map to our clock: the
 * rate from the kernel's perf_event_mmap_page where it publishes it (cap_user_time: a stable
 * TSC and the native sched_clock), else measured over 10 ms; the offset measured now. */
void hs_record_measure_tsc(struct hs_record *r)
{
#if defined(__x86_64__)
	const struct perf_event_mmap_page *pg = r->rings.n ? r->rings.v[0].base : NULL;
	uint64_t c0 = 0, n0 = 0;

	memset(&r->tsc, 0, sizeof(r->tsc));
	if (pg && pg->cap_user_time && pg->time_mult && pg->time_shift < 64) {
		r->tsc.mult = pg->time_mult;
		r->tsc.shift = pg->time_shift;
	} else {
		uint64_t c1 = 0, n1 = 0;
		struct timespec ts = {0, 10000000};
		tsc_pair(&c0, &n0);
		nanosleep(&ts, NULL);
		tsc_pair(&c1, &n1);
		if (c1 <= c0 || n1 <= n0)
			return;
		/* ns per tick as mult / 2^shift, shift chosen to keep mult in 32 bits */
		r->tsc.shift = 31;
		while (r->tsc.shift && (((n1 - n0) << r->tsc.shift) / (c1 - c0)) > UINT32_MAX)
			r->tsc.shift--;
		r->tsc.mult = (uint32_t)(((n1 - n0) << r->tsc.shift) / (c1 - c0));
		if (!r->tsc.mult)
			return;
	}
	tsc_pair(&c0, &n0);
	r->tsc.offset = 0;
	r->tsc.offset = n0 - hs_tsc_to_ns(&r->tsc, c0);
	r->tsc.valid = true;
#else
	memset(&r->tsc, 0, sizeof(r->tsc));
#endif
}
