/* What this user may do with perf events, as the kernel decides it, so that what a refusal is
 * said to need is what would allow it: kernel.perf_event_paranoid and the capabilities
 * perf_event_open() checks, the ptrace check on another process, and the memory perf_mmap()
 * lets a user lock for rings (kernel.perf_event_mlock_kb, RLIMIT_MEMLOCK). */
#include "session-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* linux/capability.h's numbers: CAP_PERFMON is from Linux 5.8, CAP_SYS_ADMIN stood for it
 * before */
#define CAP_IPC_LOCK_BIT 14
#define CAP_SYS_PTRACE_BIT 19
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

/* Here, in the file that calls no other of the recording's, so that all of them can call it */
int hs_record_fail(struct hs_error *err, int code, enum hs_record_failure what, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->cause = (int)what;
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
	return code;
}

static long read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v = dflt;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

int hs_record_paranoid(void)
{
	return (int)read_long("/proc/sys/kernel/perf_event_paranoid", 2);
}

/* Whether this process has capability bit in its effective set. */
static bool has_cap(unsigned bit)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long eff = 0;
	char line[256];
	bool found = false;

	if (!f)
		return geteuid() == 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	fclose(f);
	return found ? (eff >> bit & 1) != 0 : geteuid() == 0;
}

static bool perfmon_capable(void)
{
	return has_cap(CAP_PERFMON_BIT) || has_cap(CAP_SYS_ADMIN_BIT);
}

/* Process pid's real, effective and saved ids (uid and gid), from /proc: whether each of them
 * is ours, as the kernel's ptrace check (PTRACE_MODE_READ_REALCREDS) wants; *owner is its real
 * uid. False when it cannot be read. */
static bool same_user(int32_t pid, bool *ret, uid_t *owner)
{
	char path[64], line[256];
	unsigned long u[3] = {0}, g[3] = {0};
	int have = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f) && have < 2) {
		if (sscanf(line, "Uid: %lu %lu %lu", &u[0], &u[1], &u[2]) == 3)
			have++;
		else if (sscanf(line, "Gid: %lu %lu %lu", &g[0], &g[1], &g[2]) == 3)
			have++;
	}
	fclose(f);
	if (have < 2)
		return false;
	*owner = (uid_t)u[0];
	*ret = true;
	for (int i = 0; i < 3; i++)
		*ret = *ret && u[i] == getuid() && g[i] == getgid();
	return true;
}

/* A process of ours whose /proc files are root's is not dumpable (a set-id program, or one
 * that said so with PR_SET_DUMPABLE): the ptrace check refuses it too. */
static bool dumpable(int32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) != 0 || st.st_uid == getuid();
}

int hs_record_denied(int code, int32_t pid, struct hs_error *err)
{
	int paranoid = hs_record_paranoid();
	bool mine = true;
	uid_t owner = 0;

	if (pid > 0 && !has_cap(CAP_SYS_PTRACE_BIT) && !perfmon_capable() && same_user(pid, &mine, &owner)) {
		if (!mine)
			return hs_record_fail(err, code, HS_RECORD_NOT_YOURS,
				      "no permission to record process %d: it is another user's (uid %u)", (int)pid,
				      (unsigned)owner);
		if (!dumpable(pid))
			return hs_record_fail(err, code, HS_RECORD_NOT_YOURS,
				      "no permission to record process %d: it is not dumpable (a set-id "
				      "program, or one that asked not to be)",
				      (int)pid);
	}
	if (pid == -1 && paranoid > 0)
		return hs_record_fail(err, code, HS_RECORD_NO_PERMISSION_CPU,
			      "no permission to record every CPU (kernel.perf_event_paranoid is %d; it takes 0 "
			      "or less)",
			      paranoid);
	if (pid != -1 && paranoid > 2)
		return hs_record_fail(err, code, HS_RECORD_NO_PERMISSION,
			      "no permission to use perf_event_open (kernel.perf_event_paranoid is %d; one's "
			      "own processes take 2 or less, their kernel frames 1)",
			      paranoid);
	return hs_record_fail(err, code, HS_RECORD_DENIED,
		      "perf_event_open refused although kernel.perf_event_paranoid is %d, which allows it: "
		      "a security module, a seccomp filter or a container's limits forbid it",
		      paranoid);
}

/* ---- the memory rings may lock ---- */

void hs_record_ring_limit(struct hs_ring_limit *ret)
{
	struct rlimit rl;
	long page_kb = sysconf(_SC_PAGESIZE) / 1024, cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(ret, 0, sizeof(*ret));
	/* perf_mmap(): over the limits only without CAP_IPC_LOCK, and with perf_event_paranoid > -1 */
	if (has_cap(CAP_IPC_LOCK_BIT) || hs_record_paranoid() < 0)
		return;
	ret->limited = true;
	ret->mlock_kb = (uint64_t)HS_MAX(read_long("/proc/sys/kernel/perf_event_mlock_kb", 516), 0);
	ret->cpus = (unsigned)HS_MAX(cpus, 1);
	ret->memlock_kb = getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX
											 : (uint64_t)rl.rlim_cur / 1024;
	/* a user's rings first lock up to mlock_kb per online CPU, all of that user's rings
	 * together; the rest counts against the process's RLIMIT_MEMLOCK */
	if (ret->memlock_kb == UINT64_MAX) {
		ret->limited = false;
		return;
	}
	ret->pages = ret->mlock_kb / (uint64_t)HS_MAX(page_kb, 1) * ret->cpus +
		     ret->memlock_kb / (uint64_t)HS_MAX(page_kb, 1);
}

size_t hs_record_ring_fit(const struct hs_ring_limit *l, size_t rings)
{
	size_t pages = HS_RECORD_MAX_RING_PAGES;

	if (!l->limited)
		return pages;
	/* each ring is its data pages and a page of its own */
	while (pages && (uint64_t)rings * (pages + 1) > l->pages)
		pages /= 2;
	return pages;
}

/* -m pages over what l lets rings rings lock: what does fit, and the kernel.perf_event_mlock_kb
 * that would let it. */
static int locked(const struct hs_ring_limit *l, size_t pages, size_t rings, size_t fit, struct hs_error *err)
{
	size_t page_kb = (size_t)sysconf(_SC_PAGESIZE) / 1024;
	unsigned long long want = ((unsigned long long)rings * (pages + 1) * page_kb + l->cpus - 1) / l->cpus;
	char allow[32] = "no ring at all";

	if (fit)
		snprintf(allow, sizeof(allow), "-m %zu at most", fit);
	return hs_record_fail(err, -EPERM, HS_RECORD_RING_LOCKED,
		      "-m %zu (%zu KiB a ring, %zu ring%s) is more than this user may lock for rings: "
		      "kernel.perf_event_mlock_kb (%llu KiB for each of %u CPUs, for all of this user's rings) "
		      "and RLIMIT_MEMLOCK (%llu KiB) allow %s; -m %zu takes kernel.perf_event_mlock_kb=%llu",
		      pages, pages * page_kb, rings, rings == 1 ? "" : "s", (unsigned long long)l->mlock_kb, l->cpus,
		      (unsigned long long)l->memlock_kb, allow, pages, want);
}

int hs_record_ring_check(struct hs_record *r, struct hs_error *err)
{
	struct hs_ring_limit l;
	size_t fit, rings = r->cpus.n;

	hs_record_ring_limit(&l);
	fit = hs_record_ring_fit(&l, rings);
	if (r->o.mmap_pages <= fit)
		return 0;
	/* the default ring, where it does not fit: rings of the size that does, all alike (open.c
	 * still halves a ring the kernel refuses, where other rings of the user's hold memory) */
	if (!r->pages_explicit) {
		r->o.mmap_pages = HS_MAX(fit, 1);
		return 0;
	}
	return locked(&l, r->o.mmap_pages, rings, fit, err);
}

int hs_record_ring_denied(const struct hs_record *r, size_t pages, struct hs_error *err)
{
	struct hs_ring_limit l;

	hs_record_ring_limit(&l);
	if (!l.limited)
		return hs_record_fail(err, -EPERM, HS_RECORD_FAILED,
			      "cannot map a %zu KiB ring buffer: Operation not permitted",
			      pages * (size_t)(sysconf(_SC_PAGESIZE) / 1024));
	return locked(&l, pages, r->cpus.n, hs_record_ring_fit(&l, r->cpus.n), err);
}
