/* Live recording: perf_event_open per CPU (per thread too for -p), one mmap ring per CPU that
 * every event of that CPU writes to (PERF_EVENT_IOC_SET_OUTPUT), and an epoll loop that drains
 * the rings and watches the targets. */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "util/infile.h"

#define MAX_ATTACH_ROUNDS 16

static int fail(struct hs_record_error *err, int code, int status, const char *fmt, ...) HS_PRINTF(4, 5);

static int fail(struct hs_record_error *err, int code, int status, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->exit_status = status;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* A pid that cannot be attached to: gone, or a zombie (it has exited, its parent has not reaped
 * it yet: /proc still lists it, but it has no threads left to sample). */
static int no_such_process(struct hs_record_error *err, int32_t pid)
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
			return fail(err, -ESRCH, 1,
				    "process %d has exited: a zombie, not yet reaped by its parent (pid %d), with "
				    "nothing left to record",
				    (int)pid, parent);
	}
	return fail(err, -ESRCH, 1, "no such process: %d", (int)pid);
}

void hs_record_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* ---- targets ---- */

static int read_cpus(struct hs_record *r)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char buf[4096];
	char *p, *save = NULL;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (f)
			fclose(f);
		for (long i = 0; i < n; i++)
			hs_vec_push(&r->cpus, (int)i);
		return r->cpus.n ? 0 : -ENODEV;
	}
	fclose(f);
	/* "0-3,5,7-8": offline CPUs are simply not listed */
	for (p = strtok_r(buf, ",\n", &save); p; p = strtok_r(NULL, ",\n", &save)) {
		int a, b;
		if (sscanf(p, "%d-%d", &a, &b) == 2) {
			for (int c = a; c <= b && c < 65536; c++)
				hs_vec_push(&r->cpus, c);
		} else if (sscanf(p, "%d", &a) == 1) {
			hs_vec_push(&r->cpus, a);
		}
	}
	return r->cpus.n ? 0 : -ENODEV;
}

static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = 2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

static uint32_t read_max_stack(void)
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

static int open_error(struct hs_record *r, int e, pid_t pid, struct hs_record_error *err)
{
	const struct hs_event_desc *ev = r->o.event;

	switch (e) {
	case -EACCES:
	case -EPERM:
		return fail(err, e, 1,
			    "no permission to use perf_event_open (kernel.perf_event_paranoid is %d): run as root, "
			    "grant CAP_PERFMON, or lower it with 'sysctl kernel.perf_event_paranoid=1'",
			    read_paranoid());
	case -ENOENT:
	case -EOPNOTSUPP:
	case -ENODEV:
		if (r->o.callgraph == HS_CG_LBR)
			return fail(err, e, 1,
				    "-g lbr needs last-branch records in call-stack mode (an Intel CPU from Haswell on) "
				    "sampled on a hardware event such as -e cycles%s; use -g auto (DWARF) instead",
				    hs_have_cpu_pmu() ? "" : ", and this machine has no hardware PMU");
		if (ev->hardware && !hs_have_cpu_pmu())
			return fail(err, e, 1,
				    "event '%s' needs a hardware PMU and this machine has none (usual in virtual "
				    "machines); use -e cpu-clock",
				    ev->name);
		return fail(err, e, 1, "event '%s' is not supported here (%s); use -e cpu-clock", ev->name,
			    strerror(-e));
	case -ESRCH:
		return no_such_process(err, pid);
	case -EINVAL: {
		unsigned int max = 0;
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
		if (f) {
			if (fscanf(f, "%u", &max) != 1)
				max = 0;
			fclose(f);
		}
		if (!r->o.period && max && r->o.freq > max)
			return fail(err, e, 1, "-F %u is above the kernel's limit (kernel.perf_event_max_sample_rate is %u)",
				    r->o.freq, max);
		return fail(err, e, 1, "perf_event_open refused event '%s': %s", ev->name, strerror(-e));
	}
	case -EMFILE:
	case -ENFILE:
		return fail(err, e, 1, "too many open files for perf events (raise the limit with 'ulimit -n')");
	default:
		return fail(err, e, 1, "perf_event_open failed for event '%s': %s", ev->name, strerror(-e));
	}
}

static void setup_attr(struct hs_record *r)
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
	a->build_id = 1;
	a->exclude_callchain_kernel = !o->kernel;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->sample_max_stack = (uint16_t)r->o.max_stack;
	/* wake up when a quarter of the ring is full; the loop also drains on a timer */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((o->mmap_pages * (size_t)sysconf(_SC_PAGESIZE)) / 4);

	r->layout.sample_type = a->sample_type;
	r->layout.sample_id_all = true;

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
		b->mmap = b->mmap2 = b->comm = b->comm_exec = b->task = b->build_id = 0;
		b->context_switch = 1;
	}
}

/* --off-cpu: the context-switch event for (pid, cpu), into the ring of that CPU (which exists:
 * the main event made it). Its id tells its samples apart. */
static int open_off_cpu(struct hs_record *r, pid_t pid, size_t cpu_ix, struct hs_record_error *err)
{
	struct perf_event_attr *a = &r->attr_off_cpu;
	int cpu = r->cpus.v[cpu_ix], fd;
	uint64_t id;

	if (!r->o.off_cpu)
		return 0;
	/* the same fallbacks as the main event's, so that the layouts stay the same */
	a->build_id = 0;
	a->use_clockid = r->attr.use_clockid;
	a->clockid = r->attr.clockid;
	if (r->attr.exclude_kernel)
		return fail(err, -EACCES, 1,
			    "--off-cpu needs kernel samples (the switch-out happens in the kernel), and "
			    "kernel.perf_event_paranoid is %d: run as root or grant CAP_PERFMON",
			    read_paranoid());
	fd = hs_perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd == -ESRCH)
		return -ESRCH;
	if (fd < 0)
		return fail(err, fd, 1, "cannot open the context-switch event for --off-cpu: %s", strerror(-fd));
	hs_vec_push(&r->fds, fd);
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings.v[cpu_ix].fd) < 0)
		return fail(err, -errno, 1, "cannot share the ring buffer of CPU %d: %s", cpu, strerror(errno));
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return fail(err, -errno, 1, "cannot get the id of the context-switch event: %s", strerror(errno));
	hs_u64map_put(&r->off_cpu_ids, id, 1);
	return 0;
}

enum hs_record_event hs_record_event_index(const struct hs_record *r, uint64_t id)
{
	uint64_t v;

	return r->o.off_cpu && hs_u64map_get(&r->off_cpu_ids, id, &v) ? HS_REC_EVENT_OFF_CPU : HS_REC_EVENT_MAIN;
}

/* Opens the event for (pid, cpu); sends its records to the ring of that CPU, creating the ring
 * for the first event of the CPU. */
static int open_one(struct hs_record *r, pid_t pid, size_t cpu_ix, struct hs_record_error *err)
{
	int cpu = r->cpus.v[cpu_ix];
	int fd = hs_perf_event_open(&r->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd == -EINVAL && r->attr.build_id) {
		/* kernels before 5.12 do not know build_id in MMAP2 */
		r->attr.build_id = 0;
		fd = hs_perf_event_open(&r->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd == -EINVAL && r->attr.use_clockid) {
		r->attr.use_clockid = 0;
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
	if (cpu_ix < r->rings.n) {
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings.v[cpu_ix].fd) < 0)
			return fail(err, -errno, 1, "cannot share the ring buffer of CPU %d: %s", cpu, strerror(errno));
		return open_off_cpu(r, pid, cpu_ix, err);
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
				return fail(err, -e, 1,
					    "cannot map a %zu KiB ring buffer (over kernel.perf_event_mlock_kb); use a smaller "
					    "-m, or run as root",
					    ring.len / 1024);
			return fail(err, -e, 1, "cannot map the ring buffer of CPU %d: %s", cpu, strerror(e));
		}
		hs_ring_init(&ring.ring, ring.base, page, r->o.mmap_pages * page);
		hs_vec_push(&r->rings, ring);
		epoll_ctl(r->ring_epfd, EPOLL_CTL_ADD, fd, &ee);
	}
	return open_off_cpu(r, pid, cpu_ix, err);
}

static int open_for(struct hs_record *r, pid_t pid, struct hs_record_error *err)
{
	for (size_t c = 0; c < r->cpus.n; c++) {
		int rc = open_one(r, pid, c, err);
		if (rc)
			return rc;
	}
	return 0;
}

static bool have_tid(const struct hs_record *r, int32_t tid)
{
	for (size_t i = 0; i < r->tids.n; i++)
		if (r->tids.v[i] == tid)
			return true;
	return false;
}

static void remember_comm(struct hs_record *r, int32_t pid, int32_t tid)
{
	struct hs_attach_comm c = {pid, tid, ""};
	char path[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, c.comm, sizeof(c.comm) - 1);
	close(fd);
	if (n <= 0)
		return;
	c.comm[n] = '\0';
	c.comm[strcspn(c.comm, "\n")] = '\0';
	hs_vec_push(&r->attach_comms, c);
}

/* Every thread of pid, including ones created while we attach: events opened with inherit
 * follow threads created after them, so rescanning until nothing new appears covers the rest. */
static int attach_pid(struct hs_record *r, int32_t pid, struct hs_record_error *err)
{
	char path[64];

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return no_such_process(err, pid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int round = 0; round < MAX_ATTACH_ROUNDS; round++) {
		DIR *d = opendir(path);
		struct dirent *de;
		int added = 0;

		if (!d) {
			if (round == 0)
				return no_such_process(err, pid);
			break;
		}
		while ((de = readdir(d))) {
			int32_t tid = atoi(de->d_name);
			int rc;
			if (tid <= 0 || have_tid(r, tid))
				continue;
			rc = open_for(r, tid, err);
			if (rc == -ESRCH)
				continue; /* the thread ended meanwhile */
			if (rc) {
				closedir(d);
				return rc;
			}
			hs_vec_push(&r->tids, tid);
			remember_comm(r, pid, tid);
			added++;
		}
		closedir(d);
		if (!added)
			break;
	}
	if (!r->tids.n)
		return no_such_process(err, pid);
	return 0;
}

/* ---- the command ---- */

static int start_command(struct hs_record *r, struct hs_record_error *err)
{
	int go[2], ep[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return fail(err, -errno, 1, "cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return fail(err, -errno, 1, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		sigset_t none;
		char c;
		int e;

		close(go[1]);
		close(ep[0]);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* wait until the events are attached; EOF means the parent gave up */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		if (r->o.as_user && (setgroups(r->o.ngroups, r->o.groups) < 0 || setgid(r->o.gid) < 0 ||
				     setuid(r->o.uid) < 0)) {
			/* negative: the user could not be taken */
			e = -errno;
			if (write(ep[1], &e, sizeof(e)) < 0)
				_exit(126);
			_exit(126);
		}
		if (r->o.envp)
			environ = r->o.envp;
		execvp(r->o.argv[0], r->o.argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->err_fd = ep[0];
	return 0;
}

static int release_command(struct hs_record *r, struct hs_record_error *err)
{
	char c = 'g';
	int e = 0;
	ssize_t n;

	if (write(r->go_fd, &c, 1) != 1)
		return fail(err, -errno, 1, "cannot start the command: %s", strerror(errno));
	close(r->go_fd);
	r->go_fd = -1;
	do
		n = read(r->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(r->err_fd);
	r->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(r->child, &r->child_status, 0);
		r->child_exited = true;
		if (e < 0)
			return fail(err, e, 126, "cannot run '%s' as user %u: %s", r->o.argv[0], (unsigned)r->o.uid,
				    strerror(-e));
		if (e == ENOENT)
			return fail(err, -ENOENT, 127, "%s: command not found", r->o.argv[0]);
		if (e == EACCES)
			return fail(err, -EACCES, 126, "%s: permission denied", r->o.argv[0]);
		return fail(err, -e, 126, "cannot run '%s': %s", r->o.argv[0], strerror(e));
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
static void measure_tsc(struct hs_record *r)
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

/* ---- open / close ---- */

int hs_record_open(struct hs_record *r, const struct hs_record_opts *o, struct hs_record_error *err)
{
	struct rlimit rl;
	sigset_t set;
	struct epoll_event ee = {EPOLLIN, {.u64 = 1}};
	int rc;

	memset(r, 0, sizeof(*r));
	memset(err, 0, sizeof(*err));
	r->o = *o;
	r->epfd = r->sigfd = r->timerfd = r->go_fd = r->err_fd = -1;
	r->ring_epfd = r->wake_fd = r->stop_fd = -1;
	hs_queue_init(&r->queue);
	if (r->o.callgraph == HS_CG_STACK && !r->o.stack_bytes)
		r->o.stack_bytes = HS_DEFAULT_STACK_BYTES;
	r->pages_explicit = r->o.mmap_pages != 0;
	if (!r->o.mmap_pages)
		r->o.mmap_pages = hs_callgraph_ring_pages(r->o.callgraph, r->o.stack_bytes, (size_t)sysconf(_SC_PAGESIZE));
	if (!r->o.max_stack || r->o.max_stack > read_max_stack())
		r->o.max_stack = read_max_stack();
	/* one descriptor per (thread, CPU) plus captured files: use what the hard limit allows */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if ((rc = read_cpus(r)))
		return fail(err, rc, 1, "cannot tell which CPUs are online");
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->ring_epfd = epoll_create1(EPOLL_CLOEXEC);
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&r->lock, NULL);
	if (r->ring_epfd < 0 || r->wake_fd < 0 || r->stop_fd < 0)
		return fail(err, -errno, 1, "cannot set up event polling: %s", strerror(errno));
	{
		struct epoll_event we = {EPOLLIN, {.u64 = 3}}, se = {EPOLLIN, {.u64 = 3}};
		epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->wake_fd, &we);
		epoll_ctl(r->ring_epfd, EPOLL_CTL_ADD, r->stop_fd, &se);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->epfd < 0 || r->sigfd < 0)
		return fail(err, -errno, 1, "cannot set up event polling: %s", strerror(errno));
	epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->sigfd, &ee);
	if (o->duration > 0) {
		struct itimerspec its = {{0, 0}, {(time_t)o->duration, (long)((o->duration - (double)(time_t)o->duration) * 1e9)}};
		struct epoll_event te = {EPOLLIN, {.u64 = 2}};
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
		r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (r->timerfd < 0)
			return fail(err, -errno, 1, "cannot create a timer: %s", strerror(errno));
		timerfd_settime(r->timerfd, 0, &its, NULL);
		epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->timerfd, &te);
	}
	setup_attr(r);

	if (o->argv && (rc = start_command(r, err)))
		return rc;
	if (o->all_cpus) {
		if ((rc = open_for(r, -1, err)))
			return rc == -ESRCH ? fail(err, rc, 1, "cannot open system-wide events") : rc;
	} else if (o->argv) {
		if ((rc = open_for(r, r->child, err)))
			return rc == -ESRCH ? fail(err, rc, 1, "the command ended before it could be attached") : rc;
	}
	for (size_t i = 0; i < o->npids; i++) {
		/* before attaching: a process that exits meanwhile is still noticed (its pidfd becomes
		 * readable), where a pidfd opened after it was reaped would never be */
		int pfd = (int)syscall(SYS_pidfd_open, o->pids[i], 0);
		if (pfd < 0 && errno == ESRCH)
			return no_such_process(err, o->pids[i]);
		hs_vec_push(&r->pidfds, pfd);
		if (!o->all_cpus) {
			if ((rc = attach_pid(r, o->pids[i], err)))
				return rc;
		} else if (kill(o->pids[i], 0) < 0 && errno == ESRCH) {
			return no_such_process(err, o->pids[i]);
		}
		if (pfd >= 0) {
			struct epoll_event pe = {EPOLLIN, {.u64 = 100 + i}};
			epoll_ctl(r->epfd, EPOLL_CTL_ADD, pfd, &pe);
		}
	}
	measure_tsc(r);
	return 0;
}

static void stop_reader(struct hs_record *r);

void hs_record_close(struct hs_record *r)
{
	stop_reader(r);
	for (size_t i = 0; i < r->inbox.n; i++)
		free(r->inbox.v[i].rec);
	hs_vec_free(&r->inbox);
	if (r->ring_epfd >= 0)
		close(r->ring_epfd);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	if (r->stop_fd >= 0) {
		close(r->stop_fd);
		pthread_mutex_destroy(&r->lock);
	}
	r->ring_epfd = r->wake_fd = r->stop_fd = -1;
	for (size_t i = 0; i < r->rings.n; i++) {
		munmap(r->rings.v[i].base, r->rings.v[i].len);
		hs_ring_release(&r->rings.v[i].ring);
	}
	for (size_t i = 0; i < r->fds.n; i++)
		close(r->fds.v[i]);
	for (size_t i = 0; i < r->pidfds.n; i++)
		if (r->pidfds.v[i] >= 0)
			close(r->pidfds.v[i]);
	for (size_t i = 0; i < r->captures.n; i++)
		close(r->captures.v[i].fd);
	if (r->child > 0 && !r->child_exited) {
		/* the recording failed before the command ran: it is waiting on the go pipe */
		if (r->go_fd >= 0)
			close(r->go_fd);
		r->go_fd = -1;
		kill(r->child, SIGKILL);
		waitpid(r->child, &r->child_status, 0);
		r->child_exited = true;
	}
	if (r->go_fd >= 0)
		close(r->go_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->sigfd >= 0)
		close(r->sigfd);
	if (r->timerfd >= 0)
		close(r->timerfd);
	hs_queue_release(&r->queue);
	hs_vec_free(&r->cpus);
	hs_vec_free(&r->fds);
	hs_vec_free(&r->rings);
	hs_vec_free(&r->tids);
	hs_vec_free(&r->attach_comms);
	hs_vec_free(&r->pidfds);
	hs_vec_free(&r->captures);
	hs_u64map_release(&r->off_cpu_ids);
	r->epfd = r->sigfd = r->timerfd = -1;
}

/* ---- capturing mapped files ---- */

/* A mapped file, held on to through the mapping itself. A process can map a device (a GPU's,
 * /dev/mem): only a regular file is opened, a device never, not even to be closed again. */
static int open_map_file(int32_t pid, uint64_t start, uint64_t end)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)start,
		 (unsigned long long)end);
	fd = hs_infile_open(path, 0, NULL);
	return fd < 0 ? -1 : fd;
}

int hs_record_capture(void *record, int32_t pid, uint64_t start, uint64_t end)
{
	struct hs_record *r = record;
	int fd = -1;

	pthread_mutex_lock(&r->lock);
	for (size_t i = r->captures.n; i-- > 0;) {
		struct hs_capture *c = &r->captures.v[i];
		if (c->pid == pid && c->start == start && c->end == end) {
			fd = c->fd;
			*c = r->captures.v[--r->captures.n];
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return fd >= 0 ? fd : open_map_file(pid, start, end);
}

/* A new executable file mapping: hold on to the file now, while the mapping surely exists. */
static void capture_early(struct hs_record *r, const struct hs_perf_event *ev)
{
	const struct hs_perf_mmap *m = &ev->mmap;
	struct hs_capture c;

	if (!m->is_mmap2 || !(m->prot & PROT_EXEC) || !m->filename || m->filename[0] != '/' ||
	    !strncmp(m->filename, "//", 2) || m->pid == UINT32_MAX)
		return;
	c.fd = open_map_file((int32_t)m->pid, m->start, m->start + m->len);
	if (c.fd < 0)
		return;
	c.pid = (int32_t)m->pid;
	c.start = m->start;
	c.end = m->start + m->len;
	c.time = ev->sid.time;
	pthread_mutex_lock(&r->lock);
	hs_vec_push(&r->captures, c);
	pthread_mutex_unlock(&r->lock);
}

/* Captures of mappings already handed on and not taken are no longer needed. */
static void drop_captures(struct hs_record *r, uint64_t upto)
{
	size_t k = 0;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->captures.n; i++) {
		if (r->captures.v[i].time <= upto)
			close(r->captures.v[i].fd);
		else
			r->captures.v[k++] = r->captures.v[i];
	}
	r->captures.n = k;
	pthread_mutex_unlock(&r->lock);
}

/* ---- the loop ---- */

struct reader_round {
	struct hs_record *r;
	HS_VEC(struct hs_drained) got;
	uint64_t last_time;
	bool idle; /* the last round drained nothing */
};

/* The kernel reserves the whole requested stack size in every sample, most of it unused where
 * stacks are shallow: copying it all doubled hotstack's CPU time at 64 KiB. */
struct perf_event_header *hs_record_copy(const struct perf_event_header *rec, const struct hs_perf_event *ev)
{
	const uint8_t *p = (const uint8_t *)rec;
	const struct hs_perf_sample *s = &ev->sample;
	uint64_t keep;
	size_t head, tail, n;
	uint8_t *out;

	/* a word more than the kernel filled: the copy's size stays above its dynamic size, which
	 * is how a copy the kernel ended early (at the end of the stack) is told from a full one */
	keep = ev->type == PERF_RECORD_SAMPLE && s->stack ? ((s->stack_dyn_size + 7) & ~7ULL) + 8 : UINT64_MAX;
	if (keep >= s->stack_size) {
		out = hs_xmalloc(rec->size);
		memcpy(out, rec, rec->size);
		return (struct perf_event_header *)out;
	}
	head = (size_t)((const uint8_t *)s->stack - p); /* the copy's size is the 8 bytes before */
	tail = head + s->stack_size;                     /* its dynamic size, and what follows */
	n = rec->size - (size_t)(s->stack_size - keep);
	out = hs_xmalloc(n);
	memcpy(out, p, head);
	memcpy(out + head - 8, &keep, 8);
	memcpy(out + head, s->stack, keep);
	memcpy(out + head + keep, p + tail, rec->size - tail);
	((struct perf_event_header *)out)->size = (uint16_t)n;
	return (struct perf_event_header *)out;
}

/* On the reader thread: copy each record out of its ring. */
static void on_record(void *ctx, const struct perf_event_header *rec)
{
	struct reader_round *rr = ctx;
	struct hs_record *r = rr->r;
	struct hs_perf_event ev;
	struct hs_drained d;

	__atomic_add_fetch(&r->records, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->bytes, rec->size, __ATOMIC_RELAXED);
	if (hs_perf_event_parse(rec, rec->size, &r->layout, 0, &ev, &r->reader_perr)) {
		__atomic_add_fetch(&r->bad_records, 1, __ATOMIC_RELAXED);
		return;
	}
	if (ev.type == PERF_RECORD_LOST)
		__atomic_add_fetch(&r->lost_records, ev.lost.lost, __ATOMIC_RELAXED);
	if (ev.type == PERF_RECORD_MMAP2)
		capture_early(r, &ev);
	if (ev.sid.has_time)
		rr->last_time = ev.sid.time;
	d.time = rr->last_time;
	d.rec = hs_record_copy(rec, &ev);
	__atomic_add_fetch(&r->backlog, d.rec->size, __ATOMIC_RELAXED);
	hs_vec_push(&rr->got, d);
}

/* One round: every ring drained, then handed over with an end-of-round mark. Unless last, none
 * while the backlog is over its cap: the records wait in the rings (and what does not fit there
 * is lost, and counted by the kernel) until the main thread has caught up. */
static void reader_round(struct reader_round *rr, bool last)
{
	struct hs_record *r = rr->r;
	struct hs_drained mark = {0, NULL};
	uint64_t one = 1;

	if (!last && __atomic_load_n(&r->backlog, __ATOMIC_RELAXED) > HS_RECORD_MAX_BACKLOG) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
		return;
	}
	rr->got.n = 0;
	for (size_t i = 0; i < r->rings.n; i++)
		hs_ring_drain(&r->rings.v[i].ring, on_record, rr);
	/* a round after an empty one with nothing new says nothing the last mark did not: no mark,
	 * so that a main thread busy for long (a big file to read) does not find millions of them */
	if (!rr->got.n && rr->idle)
		return;
	rr->idle = !rr->got.n;
	hs_vec_push(&rr->got, mark);
	pthread_mutex_lock(&r->lock);
	hs_vec_reserve(&r->inbox, r->inbox.n + rr->got.n);
	memcpy(r->inbox.v + r->inbox.n, rr->got.v, rr->got.n * sizeof(*rr->got.v));
	r->inbox.n += rr->got.n;
	pthread_mutex_unlock(&r->lock);
	if (write(r->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the main thread has wake-ups pending anyway */
	}
}

static void *reader_main(void *arg)
{
	struct reader_round rr = {arg, {0}, 0, false};
	struct hs_record *r = arg;
	bool stopping = false;

	while (!stopping) {
		struct epoll_event evs[64];
		int n = epoll_wait(r->ring_epfd, evs, 64, 50);
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == 3) {
				stopping = true;
			} else if (evs[i].events & (EPOLLHUP | EPOLLERR) && tag >= 1000 && tag - 1000 < r->rings.n) {
				/* its thread has exited: the hang-up would wake us at once for ever; what
				 * its ring still gets (other threads') is drained every round anyway */
				epoll_ctl(r->ring_epfd, EPOLL_CTL_DEL, r->rings.v[tag - 1000].fd, NULL);
			}
		}
		reader_round(&rr, stopping);
	}
	hs_vec_free(&rr.got);
	return NULL;
}

static void stop_reader(struct hs_record *r)
{
	uint64_t one = 1;

	if (!r->reader_running)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot happen with a fresh eventfd; the reader's 50 ms timeout is no help here */
	}
	pthread_join(r->reader, NULL);
	r->reader_running = false;
}

/* On the main thread: what the reader drained goes into time order, and every record older than
 * the previous round's newest is handed on. */
static void process_inbox(struct hs_record *r, bool final)
{
	HS_VEC(struct hs_drained) batch = {0};
	uint64_t count;
	struct hs_queue_item it;

	if (read(r->wake_fd, &count, sizeof(count)) < 0) {
		/* nothing pending: fine */
	}
	pthread_mutex_lock(&r->lock);
	batch.v = r->inbox.v;
	batch.n = r->inbox.n;
	batch.cap = r->inbox.cap;
	memset(&r->inbox, 0, sizeof(r->inbox));
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < batch.n; i++) {
		uint64_t limit;
		if (batch.v[i].rec) {
			hs_queue_push_owned(&r->queue, batch.v[i].rec, batch.v[i].time);
			continue;
		}
		limit = hs_queue_round(&r->queue);
		while (hs_queue_pop(&r->queue, limit, &it)) {
			struct hs_perf_event ev;
			__atomic_sub_fetch(&r->backlog, it.rec->size, __ATOMIC_RELAXED);
			if (!hs_perf_event_parse(it.rec, it.rec->size, &r->layout, 0, &ev, &r->perr))
				r->sink->event(r->sink->ctx, &ev);
			hs_queue_item_release(&it);
		}
		drop_captures(r, limit);
	}
	hs_vec_free(&batch);
	if (final) {
		while (hs_queue_pop(&r->queue, UINT64_MAX, &it)) {
			struct hs_perf_event ev;
			__atomic_sub_fetch(&r->backlog, it.rec->size, __ATOMIC_RELAXED);
			if (!hs_perf_event_parse(it.rec, it.rec->size, &r->layout, 0, &ev, &r->perr))
				r->sink->event(r->sink->ctx, &ev);
			hs_queue_item_release(&it);
		}
		drop_captures(r, UINT64_MAX);
	}
}

static void reap_child(struct hs_record *r)
{
	int st;

	if (r->child <= 0 || r->child_exited)
		return;
	if (waitpid(r->child, &st, WNOHANG) == r->child) {
		r->child_status = st;
		r->child_exited = true;
		if (r->cause == HS_CAUSE_NONE)
			r->cause = HS_CAUSE_COMMAND_EXITED;
	}
}

static void describe_running(struct hs_record *r)
{
	/* the names read at attach first: /proc may no longer have them */
	for (size_t i = 0; i < r->attach_comms.n; i++) {
		struct hs_perf_event ev = {.type = PERF_RECORD_COMM};
		ev.comm.pid = (uint32_t)r->attach_comms.v[i].pid;
		ev.comm.tid = (uint32_t)r->attach_comms.v[i].tid;
		ev.comm.comm = r->attach_comms.v[i].comm;
		r->sink->event(r->sink->ctx, &ev);
	}
	if (r->o.all_cpus) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		if (!d)
			return;
		while ((de = readdir(d))) {
			int32_t pid = atoi(de->d_name);
			if (pid > 0 && pid != getpid())
				r->sink->proc(r->sink->ctx, pid);
		}
		closedir(d);
		return;
	}
	for (size_t i = 0; i < r->o.npids; i++)
		r->sink->proc(r->sink->ctx, r->o.pids[i]);
}

static void enable_all(struct hs_record *r, unsigned long req)
{
	for (size_t i = 0; i < r->fds.n; i++)
		ioctl(r->fds.v[i], req, 0);
}

int hs_record_run(struct hs_record *r, const struct hs_record_sink *sink, struct hs_record_error *err)
{
	uint64_t last_progress;
	int rc;

	r->sink = sink;
	r->start_ns = hs_now_ns();
	last_progress = r->start_ns;
	if ((rc = pthread_create(&r->reader, NULL, reader_main, r)))
		return fail(err, -rc, 1, "cannot start the ring reader: %s", strerror(rc));
	r->reader_running = true;
	/* events of a command start at its exec; the others now */
	if (!r->o.argv || r->o.all_cpus)
		enable_all(r, PERF_EVENT_IOC_ENABLE);
	if (r->o.argv && (rc = release_command(r, err)))
		return rc;
	describe_running(r);

	while (r->cause == HS_CAUSE_NONE) {
		struct epoll_event evs[32];
		int n = epoll_wait(r->epfd, evs, 32, 100);

		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == 1) {
				struct signalfd_siginfo si;
				while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						reap_child(r);
					} else if (r->cause == HS_CAUSE_NONE) {
						r->cause = HS_CAUSE_SIGNAL;
						r->stop_signal = (int)si.ssi_signo;
					}
				}
			} else if (tag == 2) {
				if (r->cause == HS_CAUSE_NONE)
					r->cause = HS_CAUSE_DURATION;
			} else if (tag >= 100 && tag < 1000) {
				size_t k = tag - 100, alive = 0;
				epoll_ctl(r->epfd, EPOLL_CTL_DEL, r->pidfds.v[k], NULL);
				close(r->pidfds.v[k]);
				r->pidfds.v[k] = -1;
				for (size_t j = 0; j < r->pidfds.n; j++)
					alive += r->pidfds.v[j] >= 0;
				if (!alive && !r->o.argv && !r->o.all_cpus && r->cause == HS_CAUSE_NONE)
					r->cause = HS_CAUSE_TARGETS_EXITED;
			}
		}
		reap_child(r);
		process_inbox(r, false);
		if (sink->progress && hs_now_ns() - last_progress >= 1000000000ULL) {
			struct hs_record_progress p = {__atomic_load_n(&r->records, __ATOMIC_RELAXED),
						       __atomic_load_n(&r->bytes, __ATOMIC_RELAXED),
						       __atomic_load_n(&r->lost_records, __ATOMIC_RELAXED),
						       (double)(hs_now_ns() - r->start_ns) / 1e9};
			last_progress = hs_now_ns();
			sink->progress(sink->ctx, &p);
		}
	}

	r->stop_ns = hs_now_ns();
	enable_all(r, PERF_EVENT_IOC_DISABLE);
	stop_reader(r); /* after a last round */
	process_inbox(r, true);
	if (sink->ending)
		sink->ending(sink->ctx);
	if (r->child > 0 && !r->child_exited) {
		/* we end the recording: end the command too, as perf does */
		r->child_killed_by_us = r->cause == HS_CAUSE_DURATION;
		kill(r->child, SIGTERM);
		for (int i = 0; i < 50 && !r->child_exited; i++) {
			reap_child(r);
			if (!r->child_exited)
				usleep(20000);
		}
		if (!r->child_exited) {
			kill(r->child, SIGKILL);
			/* a process in an uninterruptible wait (a hung NFS server) dies only when that
			 * ends: the outputs are not held for it; it is reaped by init after us */
			for (int i = 0; i < 250 && !r->child_exited; i++) {
				reap_child(r);
				if (!r->child_exited)
					usleep(20000);
			}
			if (!r->child_exited) {
				r->child_status = SIGKILL;
				r->child_exited = true;
			}
		}
	}
	return 0;
}

int hs_record_command_status(const struct hs_record *r)
{
	if (r->child <= 0 || !r->child_exited || r->child_killed_by_us)
		return 0;
	if (WIFEXITED(r->child_status))
		return WEXITSTATUS(r->child_status);
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return 1;
}
