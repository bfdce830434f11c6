/* The service a process belongs to: see service.h. */
#include "push/service.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "format/elf.h"

/* PF_KTHREAD among /proc/PID/stat's flags (include/linux/sched.h) */
#define PF_KTHREAD 0x00200000u
/* parents looked through for the cgroup of a process gone before it was read */
#define MAX_PARENT_HOPS 8
/* a process's start by /proc against its fork's time: /proc's is in clock ticks (10 ms) */
#define START_SLACK_NS 50000000
#define NAME_MAX_LEN 128

int hs_series_by_parse(const char *s, enum hs_series_by *ret)
{
	if (!strcmp(s, "service"))
		*ret = HS_SERIES_BY_SERVICE;
	else if (!strcmp(s, "comm"))
		*ret = HS_SERIES_BY_COMM;
	else
		return -EINVAL;
	return 0;
}

/* name, made fit for a series name (letters, digits, . _ -), into buf, after "user-UID." where
 * uid is not -1 */
static void fit(int64_t uid, const char *name, size_t len, char *buf, size_t cap)
{
	size_t k = 0;

	if (uid >= 0)
		k = (size_t)snprintf(buf, cap, "user-%lld.", (long long)uid);
	if (k >= cap)
		k = cap - 1;
	for (size_t i = 0; i < len && k + 1 < cap; i++) {
		char c = name[i];
		buf[k++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
					   c == '-' || c == '_'
				   ? c
				   : '_';
	}
	buf[k] = 0;
	if (!len)
		snprintf(buf + k, cap - k, "unknown");
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n > k && !memcmp(s + n - k, suffix, k);
}

/* "user-UID.slice" or "user@UID.service": the uid, else -1 */
static int64_t user_of(const char *c, size_t n, const char *pre, const char *suffix)
{
	size_t k = strlen(pre), m = strlen(suffix);
	int64_t uid = 0;

	if (n <= k + m || n - k - m > 10 || memcmp(c, pre, k) || !ends_with(c, n, suffix))
		return -1;
	for (size_t i = k; i < n - m; i++) {
		if (c[i] < '0' || c[i] > '9')
			return -1;
		uid = uid * 10 + (c[i] - '0');
	}
	return uid <= UINT32_MAX ? uid : -1;
}

/* Walks the path from the root as systemd lays it out: slices (user.slice/user-UID.slice/
 * user@UID.service below, a user's own), then a unit. What a unit or container holds below
 * it is its own to name (a delegated subtree, a container's own systemd), so the first unit
 * or container from the root is the one. */
bool hs_service_of_cgroup(const char *path, int64_t *uid, char *buf, size_t cap)
{
	static const char *const runtimes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};
	const char *c = path, *prev = NULL;
	size_t depth = 0, prevn = 0;
	int64_t slice = -1;   /* the uid of the user-UID.slice it is in */
	bool manager = false; /* below that user's own systemd (user@UID.service): their units */

	*uid = -1;
	for (size_t n; *c; c += n, depth++) {
		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if (!n)
			break;
		for (size_t i = 0; i < HS_ARRAY_SIZE(runtimes); i++) {
			size_t k = strlen(runtimes[i]);
			if (n >= k + 12 && !strncmp(c, runtimes[i], k)) {
				char id[64];
				snprintf(id, sizeof(id), "%.*s-%.12s", (int)(k - 1), c, c + k);
				fit(*uid, id, strlen(id), buf, cap);
				return true;
			}
		}
		/* docker's cgroupfs driver: /docker/ID */
		if (prev && prevn == 6 && !memcmp(prev, "docker", 6) && n >= 12) {
			char id[32];
			snprintf(id, sizeof(id), "docker-%.12s", c);
			fit(*uid, id, strlen(id), buf, cap);
			return true;
		}
		prev = c;
		prevn = n;
		if (n == 6 && !memcmp(c, "docker", 6))
			continue;
		if (ends_with(c, n, ".slice")) {
			if (depth == 1 && slice < 0 && !strncmp(path + strspn(path, "/"), "user.slice/", 11)) {
				slice = user_of(c, n, "user-", ".slice");
				*uid = slice > 0 ? slice : -1; /* root's own is root's choice */
			}
			continue;
		}
		if (!ends_with(c, n, ".service"))
			return false; /* a scope (a session, init.scope), or not systemd's tree */
		if (slice >= 0 && !manager && user_of(c, n, "user@", ".service") == slice) {
			manager = true;
			continue;
		}
		/* a template's instance (getty@tty1): its template */
		const char *at = memchr(c, '@', n - 8);
		fit(*uid, c, at ? (size_t)(at - c) : n - 8, buf, cap);
		return true;
	}
	return false;
}

/* Whether a directory (lstat st) is root's to change alone: root owns it and no one else (but
 * the root group) may write it, or, where next_dir, it is sticky (/tmp), where no one else may
 * rename or remove an entry root owns. */
static bool root_only(const struct stat *st, bool next_dir)
{
	if (!S_ISDIR(st->st_mode) || st->st_uid != 0)
		return false;
	if (!(st->st_mode & S_IWOTH) && (!(st->st_mode & S_IWGRP) || st->st_gid == 0))
		return true;
	return next_dir && (st->st_mode & S_ISVTX);
}

/* Whether path names, in hotstack's own view of the file system, the very file running (not
 * one mounted over it in another mount namespace, not one put in its place since), through
 * directories only root can change, none of them a link. */
static bool system_program(const char *path, const struct stat *running)
{
	char dir[4096];
	struct stat st;

	if (path[0] != '/' || strlen(path) >= sizeof(dir))
		return false;
	for (size_t i = 0; path[i]; i++) {
		const char *after = path + i + 1;
		size_t n;
		if (path[i] != '/')
			continue;
		n = strcspn(after, "/");
		if (!n || (n == 1 && after[0] == '.') || (n == 2 && after[0] == '.' && after[1] == '.'))
			return false;
		memcpy(dir, path, i ? i : 1);
		dir[i ? i : 1] = 0;
		if (lstat(dir, &st) || !root_only(&st, after[n] == '/'))
			return false;
	}
	return !lstat(path, &st) && S_ISREG(st.st_mode) && st.st_dev == running->st_dev && st.st_ino == running->st_ino;
}

void hs_service_of_program(const char *path, const struct stat *running, int64_t uid, char *buf, size_t cap,
			   enum hs_service_rank *rank)
{
	size_t len = strlen(path);
	bool deleted = len >= 10 && !strcmp(path + len - 10, " (deleted)");
	const char *base;

	if (deleted)
		len -= 10;
	base = memrchr(path, '/', len);
	base = base ? base + 1 : path;
	*rank = HS_SERVICE_USER;
	if (uid < 0 && !running) {
		snprintf(buf, cap, "unknown");
	} else if (uid < 0 && !deleted && system_program(path, running)) {
		fit(-1, base, len - (size_t)(base - path), buf, cap);
		*rank = HS_SERVICE_PROGRAM;
	} else {
		fit(uid >= 0 ? uid : (int64_t)running->st_uid, base, len - (size_t)(base - path), buf, cap);
	}
}

/* ---- one process ---- */

/* The service /proc/PID/cgroup's text says: the path in the unified hierarchy, else in
 * systemd's own (name=systemd, cgroup v1), the first that is not the root; where neither is,
 * a v1 controller's may still name a container (docker's cgroupfs driver). */
static bool cgroup_of_text(char *text, int64_t *uid, char *buf, size_t cap)
{
	const char *unified = NULL, *systemd = NULL, *v1[32];
	size_t nv1 = 0;

	*uid = -1;
	for (char *line = text, *end; *line; line = end) {
		char *ctl, *path;
		end = line + strcspn(line, "\n");
		if (*end)
			*end++ = 0;
		ctl = strchr(line, ':');
		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = 0;
		if (ctl - line == 1 && line[0] == '0' && !ctl[1])
			unified = path;
		else if (!strcmp(ctl + 1, "name=systemd"))
			systemd = path;
		else if (nv1 < HS_ARRAY_SIZE(v1))
			v1[nv1++] = path;
	}
	if (unified && strcmp(unified, "/"))
		return hs_service_of_cgroup(unified, uid, buf, cap);
	if (systemd && strcmp(systemd, "/"))
		return hs_service_of_cgroup(systemd, uid, buf, cap);
	for (size_t i = 0; i < nv1; i++)
		if (hs_service_of_cgroup(v1[i], uid, buf, cap))
			return true;
	*uid = -1;
	return false;
}

/* Reads /proc/PID/cgroup: false where it cannot (the process is gone), else true with *named
 * whether it names a unit or container (into buf) */
static bool read_cgroup(int32_t pid, int64_t *uid, bool *named, char *buf, size_t cap)
{
	char path[64], *text;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (hs_read_file(path, 0, 1 << 16, &text, &len))
		return false;
	*named = cgroup_of_text(text, uid, buf, cap);
	free(text);
	return true;
}

/* From /proc/PID/stat: whether a kernel thread, and when it started (CLOCK_BOOTTIME ns). False
 * where it is gone. */
static bool read_stat(int32_t pid, bool *kthread, int64_t *start_ns)
{
	char path[64], *text, *p;
	unsigned long flags;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	size_t len;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hs_read_file(path, 0, 1 << 12, &text, &len))
		return false;
	/* after the name (which may hold anything but ends at the last ')'): state ppid pgrp
	 * session tty_nr tpgid flags ... and starttime, the 22nd field */
	ok = (p = strrchr(text, ')')) &&
	     sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &flags,
		    &ticks) == 2;
	free(text);
	if (!ok)
		return false;
	*kthread = flags & PF_KTHREAD;
	*start_ns = (int64_t)(ticks * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100)));
	return true;
}

/* Whether pid is still the process e was: started when e did, where that is known */
static bool same_process(const struct hs_service_entry *e)
{
	int64_t start;
	bool kthread;

	if (!e->start_ns)
		return true;
	return read_stat(e->pid, &kthread, &start) && start > e->start_ns - START_SLACK_NS &&
	       start < e->start_ns + START_SLACK_NS;
}

/* Reads a short /proc/PID/NAME file's first line into buf: false where it cannot */
static bool read_line(int32_t pid, const char *name, char *buf, size_t cap)
{
	char path[64];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if (!(f = fopen(path, "re")))
		return false;
	ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* ---- the table ---- */

struct name_key {
	const struct hs_service_cache *c;
	const char *s;
};

static bool name_eq(const void *ctx, uint32_t id)
{
	const struct name_key *k = ctx;
	return !strcmp(k->c->names.v[id], k->s);
}

/* s's index in c's names + 1 */
static uint32_t intern(struct hs_service_cache *c, const char *s)
{
	struct name_key k = {c, s};
	uint64_t h = hs_hash_mem(s, strlen(s));
	uint32_t id = hs_index_find(&c->names_ix, h, name_eq, &k);

	if (id != UINT32_MAX)
		return id + 1;
	hs_index_insert(&c->names_ix, h, (uint32_t)c->names.n);
	hs_vec_push(&c->names, hs_xstrdup(s));
	return (uint32_t)c->names.n;
}

static const char *name_of(const struct hs_service_cache *c, uint32_t id)
{
	return c->names.v[id - 1];
}

static struct hs_service_entry *find(struct hs_service_cache *c, int32_t pid)
{
	uint64_t at;
	return hs_u64map_get(&c->ix, (uint32_t)pid, &at) ? &c->procs.v[at - 1] : NULL;
}

/* pid's entry, made where there is none (pointers to entries do not outlive it) */
static struct hs_service_entry *entry(struct hs_service_cache *c, int32_t pid)
{
	struct hs_service_entry *e = find(c, pid);

	if (e)
		return e;
	hs_vec_push(&c->procs, ((struct hs_service_entry){.pid = pid, .uid = -1}));
	hs_u64map_put(&c->ix, (uint32_t)pid, c->procs.n);
	return &c->procs.v[c->procs.n - 1];
}

/* A process gone before its cgroup was read: its parent's, which it had when it forked (moving a
 * process to another cgroup takes root, or a cgroup delegated to its user: the user's own). */
static void inherit(struct hs_service_cache *c, struct hs_service_entry *e)
{
	char unit[NAME_MAX_LEN];
	int32_t pid = e->ppid;
	int64_t uid;
	bool named;

	for (int hop = 0; hop < MAX_PARENT_HOPS && pid > 0; hop++) {
		struct hs_service_entry *pe = find(c, pid);
		if (pe && pe->cgroup_known) {
			e->uid = pe->uid;
			e->unit = pe->unit;
			e->cgroup_known = true;
			return;
		}
		if ((!pe || (!pe->exited && same_process(pe))) && read_cgroup(pid, &uid, &named, unit, sizeof(unit))) {
			e->uid = uid;
			e->unit = named ? intern(c, unit) : 0;
			e->cgroup_known = true;
			return;
		}
		pid = pe ? pe->ppid : 0;
	}
}

/* Whether the regular file at path has this build-id (into *st): the same program, where the
 * kernel's records give a build-id instead of a device and inode. Opened without blocking or
 * following a link: a user may have put anything there since. */
static bool same_build_id(const char *path, const uint8_t *id, size_t n, struct stat *st)
{
	uint8_t got[20];
	bool same = false;
	Elf *elf;
	int fd;

	if (lstat(path, st) || !S_ISREG(st->st_mode) ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return false;
	elf_version(EV_CURRENT);
	if (!fstat(fd, st) && S_ISREG(st->st_mode) && (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		same = hs_elf_build_id(elf, got, sizeof(got)) == n && !memcmp(got, id, n);
		elf_end(elf);
	}
	close(fd);
	return same;
}

/* What the recording knows of the program of a process gone from /proc, named */
static void program_known(struct hs_service_cache *c, int32_t pid, int64_t uid, char *buf, size_t cap,
			  enum hs_service_rank *rank)
{
	struct hs_service_proc info = {.exe_fd = -1};
	struct stat st;
	const struct stat *running = NULL;

	if (c->proc_of)
		c->proc_of(c->ctx, pid, &info);
	if (!info.exe) {
		if (uid >= 0)
			fit(uid, "unknown", 7, buf, cap);
		else
			snprintf(buf, cap, "unknown");
		*rank = HS_SERVICE_USER;
		return;
	}
	if (info.exe_fd >= 0 && !fstat(info.exe_fd, &st))
		running = &st;
	else if (info.ino && !stat(info.exe, &st) && st.st_ino == info.ino && major(st.st_dev) == info.maj &&
		 minor(st.st_dev) == info.min)
		running = &st;
	else if (!info.ino && info.build_id_size && same_build_id(info.exe, info.build_id, info.build_id_size, &st))
		running = &st;
	hs_service_of_program(info.exe, running, uid, buf, cap, rank);
}

/* Reads e's cgroup: false where its process is gone */
static bool read_entry_cgroup(struct hs_service_cache *c, struct hs_service_entry *e)
{
	char unit[NAME_MAX_LEN];
	int64_t uid;
	bool named;

	if (!same_process(e) || !read_cgroup(e->pid, &uid, &named, unit, sizeof(unit)))
		return false;
	e->uid = uid;
	e->unit = named ? intern(c, unit) : 0;
	e->cgroup_known = true;
	return true;
}

/* Reads e's service (from /proc while its process runs, else from its parent and from what the
 * recording knows); comm: the name its samples carry, the last resort of the comm rule. */
static void capture(struct hs_service_cache *c, struct hs_service_entry *e, const char *comm)
{
	char name[NAME_MAX_LEN], path[64], exe[4096];
	enum hs_service_rank rank = HS_SERVICE_USER;
	struct hs_service_proc info = {.exe_fd = -1};
	struct stat st;
	int64_t uid, start;
	bool alive, kthread;
	ssize_t n;

	if (e->pid <= 0) { /* 0: the idle task, the kernel's own */
		snprintf(name, sizeof(name), e->pid ? "unknown" : "kernel");
		rank = e->pid ? HS_SERVICE_USER : HS_SERVICE_SYSTEM;
		goto done;
	}
	alive = read_entry_cgroup(c, e);
	if (!alive && !e->cgroup_known)
		inherit(c, e);
	uid = e->cgroup_known ? e->uid : -1;
	if (e->unit) {
		e->name = e->unit;
		e->rank = uid < 0 ? HS_SERVICE_SYSTEM : HS_SERVICE_USER;
		return;
	}
	if (c->by == HS_SERIES_BY_COMM) {
		if (!alive || !read_line(e->pid, "comm", exe, sizeof(exe))) {
			if (c->proc_of)
				c->proc_of(c->ctx, e->pid, &info);
			snprintf(exe, sizeof(exe), "%s", info.comm ? info.comm : comm ? comm : "");
		}
		fit(uid, exe, strlen(exe), name, sizeof(name));
		goto done;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)e->pid);
	n = alive ? readlink(path, exe, sizeof(exe) - 1) : -1;
	if (n > 0 && !stat(path, &st)) {
		exe[n] = 0;
		hs_service_of_program(exe, &st, uid, name, sizeof(name), &rank);
	} else if (alive && read_stat(e->pid, &kthread, &start) && kthread) {
		snprintf(name, sizeof(name), "kernel");
		rank = HS_SERVICE_SYSTEM;
	} else {
		program_known(c, e->pid, uid, name, sizeof(name), &rank);
	}
done:
	e->name = intern(c, name);
	e->rank = (uint8_t)rank;
}

void hs_service_cache_event(struct hs_service_cache *c, const struct hs_perf_event *ev)
{
	struct hs_service_entry *e;

	switch (ev->type) {
	case PERF_RECORD_FORK:
		if (ev->task.pid == ev->task.ppid)
			break; /* a thread */
		if (!find(c, (int32_t)ev->task.pid) && c->procs.n >= HS_SERVICE_MAX_PROCS)
			break;
		/* a reused pid starts afresh */
		e = entry(c, (int32_t)ev->task.pid);
		*e = (struct hs_service_entry){.pid = (int32_t)ev->task.pid,
					       .ppid = (int32_t)ev->task.ppid,
					       .uid = -1,
					       .start_ns =
						       c->fork_starts ? (int64_t)ev->task.time + c->boot_offset_ns : 0,
					       .touched = true};
		break;
	case PERF_RECORD_COMM:
		if (ev->comm.exec && (e = find(c, (int32_t)ev->comm.pid)))
			e->name = 0; /* another program: read again at its next sample */
		break;
	case PERF_RECORD_EXIT:
		if (ev->task.pid == ev->task.tid && (e = find(c, (int32_t)ev->task.pid)))
			e->exited = true;
		break;
	case PERF_RECORD_SAMPLE:
		if (!(e = find(c, (int32_t)ev->sample.sid.pid))) {
			if (c->procs.n >= HS_SERVICE_MAX_PROCS)
				break; /* read when its period is grouped */
			e = entry(c, (int32_t)ev->sample.sid.pid);
		}
		e->touched = true;
		if (!e->name)
			capture(c, e, NULL);
		break;
	default:
		break;
	}
}

void hs_service_cache_proc(struct hs_service_cache *c, int32_t pid)
{
	struct hs_service_entry *e;
	int64_t start;
	bool kthread;

	if (pid <= 0 || (!find(c, pid) && c->procs.n >= HS_SERVICE_MAX_PROCS))
		return;
	e = entry(c, pid);
	e->touched = true;
	if (read_stat(pid, &kthread, &start))
		e->start_ns = start;
	read_entry_cgroup(c, e);
}

void hs_service_cache_clock(struct hs_service_cache *c)
{
	struct timespec b, m;

	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	c->boot_offset_ns = ((int64_t)b.tv_sec - (int64_t)m.tv_sec) * 1000000000 + (b.tv_nsec - m.tv_nsec);
	c->fork_starts = true;
}

void hs_service_cache_name(struct hs_service_cache *c, int32_t pid, const char *comm, char *buf, size_t cap)
{
	struct hs_service_entry *e = entry(c, pid);

	e->touched = true;
	if (!e->name)
		capture(c, e, comm);
	snprintf(buf, cap, "%s", name_of(c, e->name));
}

void hs_service_of(int32_t pid, enum hs_series_by by, const char *comm, char *buf, size_t cap)
{
	struct hs_service_cache c = {.by = by};

	if (pid > 0) {
		hs_service_cache_name(&c, pid, comm, buf, cap);
		hs_service_cache_release(&c);
	} else {
		fit(-1, comm, strlen(comm), buf, cap);
	}
}

void hs_service_cache_release(struct hs_service_cache *c)
{
	for (size_t i = 0; i < c->names.n; i++)
		free(c->names.v[i]);
	hs_vec_free(&c->names);
	hs_index_release(&c->names_ix);
	hs_vec_free(&c->procs);
	hs_u64map_release(&c->ix);
}

/* After a grouping: the processes that exited, and those neither forked nor sampled since the
 * last one, are forgotten; the others' names are read again at their next sample (a process
 * moved to another cgroup, or a pid the kernel's lost records hid the reuse of, named afresh
 * each period), their cgroups kept for their children. */
static void forget(struct hs_service_cache *c)
{
	struct hs_service_cache next = {.by = c->by,
					.proc_of = c->proc_of,
					.ctx = c->ctx,
					.folded = c->folded,
					.fork_starts = c->fork_starts,
					.boot_offset_ns = c->boot_offset_ns};

	for (size_t i = 0; i < c->procs.n; i++) {
		struct hs_service_entry e = c->procs.v[i];
		if (e.exited || !e.touched)
			continue;
		e.name = 0;
		e.unit = e.unit ? intern(&next, name_of(c, e.unit)) : 0;
		e.touched = false;
		hs_vec_push(&next.procs, e);
		hs_u64map_put(&next.ix, (uint32_t)e.pid, next.procs.n);
	}
	hs_service_cache_release(c);
	*c = next;
}

/* ---- grouping ---- */

struct group {
	uint32_t name;
	const char *s; /* its name */
	uint8_t rank;
	int64_t samples;
	HS_VEC(int32_t) pids;
};

/* The order the cap keeps groups in: system units before others, then the most samples, then
 * by name */
static int group_order(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->s, y->s);
}

void hs_service_group(struct hs_service_cache *c, const struct hs_profile *p, struct hs_service_groups *ret)
{
	struct hs_u64map by_name = {0}, seen = {0}; /* name -> group + 1; pid -> 1 */
	HS_VEC(struct group) g = {0};
	struct hs_service_groups out = {0};
	size_t keep;

	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		struct hs_service_entry *e = entry(c, s->pid);
		uint64_t at, dummy;
		e->touched = true;
		if (!e->name)
			capture(c, e, hs_profile_str(p, s->comm));
		if (!hs_u64map_get(&by_name, e->name, &at)) {
			hs_vec_push(&g, ((struct group){.name = e->name, .rank = e->rank}));
			at = g.n;
			hs_u64map_put(&by_name, e->name, at);
		}
		if (p->types.n)
			g.v[at - 1].samples += hs_profile_sample_values(p, (uint32_t)i)[0];
		if (!hs_u64map_get(&seen, (uint32_t)s->pid, &dummy)) {
			hs_u64map_put(&seen, (uint32_t)s->pid, 1);
			hs_vec_push(&g.v[at - 1].pids, s->pid);
		}
	}
	for (size_t i = 0; i < g.n; i++)
		g.v[i].s = name_of(c, g.v[i].name);
	qsort(g.v, g.n, sizeof(*g.v), group_order);
	keep = HS_MIN(g.n, (size_t)HS_SERVICE_MAX_SERIES);
	c->folded = g.n - keep;
	out.v = hs_xcalloc(keep + 1, sizeof(*out.v));
	for (size_t i = 0; i < g.n; i++) {
		const char *name = i < keep ? g.v[i].s : HS_SERVICE_OTHER;
		struct hs_service_group *o = NULL;
		for (size_t k = i < keep ? out.n : 0; k < out.n && !o; k++)
			if (!strcmp(out.v[k].name, name)) /* the folded ones, and a service of that name */
				o = &out.v[k];
		if (!o) {
			o = &out.v[out.n++];
			o->name = hs_xstrdup(name);
		}
		o->pids = hs_xrealloc(o->pids, (o->npids + g.v[i].pids.n) * sizeof(*o->pids));
		memcpy(o->pids + o->npids, g.v[i].pids.v, g.v[i].pids.n * sizeof(*o->pids));
		o->npids += g.v[i].pids.n;
		hs_vec_free(&g.v[i].pids);
	}
	hs_vec_free(&g);
	hs_u64map_release(&by_name);
	hs_u64map_release(&seen);
	forget(c);
	*ret = out;
}

void hs_service_groups_release(struct hs_service_groups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].name);
		free(g->v[i].pids);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}
