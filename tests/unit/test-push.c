/* Unit tests for what record --push decides on its own (src/push/): which labels a store takes,
 * what service a process belongs to (its cgroup, its program, who could choose either), the
 * grouping of a profile's processes by service (one series each, with -a, at most
 * HS_SERVICE_MAX_SERIES), the URL as messages show it, and the spool: which directories it
 * refuses, its files' names and order, what it leaves alone. The sending itself is tested end
 * to end against a receiver (tests/e2e/record-push.sh, record-push-faults.sh, push-series.sh). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/elf.h"
#include "helpers.h"
#include "format/protobuf.h"
#include "output/otlp.h"
#include "push/labels.h"
#include "push/push.h"
#include "push/service.h"
#include "push/spool.h"
#include "util/error.h"

static void test_labels(void **state)
{
	static const char *const good[] = {"env=prod", "_x=1", "a.b_c=d-e/f:g", "region=us-west-1"};
	static const char *const bad[] = {"", "=x", "env=", "env", "1env=x", "e nv=x", "env=a,b", "env=a}",
					  "env={", "env=a=b", "env=\"x\"", "env=a b", "env=a\tb"};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(good); i++)
		assert_true(hs_push_label_ok(good[i]));
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++)
		assert_false(hs_push_label_ok(bad[i]));
}

/* This process's service: what its cgroup or its name says, never empty, and fit for a series
 * name; a process that does not exist: the name given, made fit. */
static void test_service_of(void **state)
{
	char buf[128], comm[64] = {0};
	FILE *f = fopen("/proc/self/comm", "r");
	(void)state;

	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	hs_service_of(getpid(), HS_SERIES_BY_SERVICE, "ignored", buf, sizeof(buf));
	assert_true(buf[0]);
	assert_int_equal(strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"), strlen(buf));
	hs_service_of(-1, HS_SERIES_BY_SERVICE, "my app{1}", buf, sizeof(buf));
	assert_string_equal(buf, "my_app_1_");
	hs_service_of(-1, HS_SERIES_BY_SERVICE, "", buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
}

/* Units and containers by their cgroup, the first from the root: what a unit or container holds
 * below it (a delegated subtree, a container's own systemd) is its own to name. A user's slice
 * names what is in it with their uid: their own units and containers cannot pass for the
 * system's. */
static void test_service_of_cgroup(void **state)
{
	static const struct {
		const char *path, *want; /* NULL: none */
		int64_t uid;
	} cases[] = {
		{"/system.slice/nginx.service", "nginx", -1},
		{"/system.slice/getty@tty1.service", "getty", -1},
		{"/system.slice/docker-0123456789abcdef0123.scope", "docker-0123456789ab", -1},
		{"/kubepods.slice/kubepods-pod1.slice/cri-containerd-fedcba9876543210ff.scope",
		 "cri-containerd-fedcba987654", -1},
		{"/machine.slice/libpod-aabbccddeeff00112233.scope", "libpod-aabbccddeeff", -1},
		{"/machine.slice/libpod-aabbccddeeff00112233.scope/container", "libpod-aabbccddeeff", -1},
		{"/docker/0123456789abcdef0123", "docker-0123456789ab", -1},
		{"/user.slice/user-0.slice/session-3.scope", NULL, -1},
		{"/", NULL, -1},
		{"/init.scope", NULL, -1},
		{"/system.slice/docker-short.scope", NULL, -1},
		{"/my.slice/my-web.slice/web.service", "web", -1},
		{"/web.service", "web", -1},
		{"/process_api/f3c8fa0778af2433110597bd2733899d", NULL, -1},
		{"/foo/nginx.service", NULL, -1},
		/* a unit's own cgroups, and a container's, name nothing of their own */
		{"/system.slice/ci.service/nginx.service", "ci", -1},
		{"/system.slice/ci.service/docker-0123456789abcdef0123.scope", "ci", -1},
		{"/system.slice/docker-0123456789abcdef0123.scope/system.slice/nginx.service", "docker-0123456789ab",
		 -1},
		/* root's slice is root's; a system unit in user.slice is the system's */
		{"/user.slice/user-0.slice/user@0.service/app.slice/nginx.service", "nginx", -1},
		{"/user.slice/nginx.service", "nginx", -1},
		/* a user's */
		{"/user.slice/user-1000.slice/session-3.scope", NULL, 1000},
		{"/user.slice/user-1000.slice/user@1000.service/init.scope", NULL, 1000},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/nginx.service", "user-1000.nginx", 1000},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/run-u12.service", "user-1000.run-u12", 1000},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/app-web@x.service", "user-1000.app-web",
		 1000},
		{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-aabbccddeeff00112233.scope",
		 "user-1000.libpod-aabbccddeeff", 1000},
		{"/user.slice/user-65534.slice/user@65534.service/app.slice/a.slice/b.service/c.service",
		 "user-65534.b", 65534},
		{"/user.slice/user-4294967295.slice/session-1.scope", NULL, 4294967295},
		{"/user.slice/user-4294967296.slice/session-1.scope", NULL, -1},
		{"/user.slice/user-x.slice/session-1.scope", NULL, -1},
	};
	char buf[128];
	int64_t uid;
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		bool found = hs_service_of_cgroup(cases[i].path, &uid, buf, sizeof(buf));
		if (found != (cases[i].want != NULL) || uid != cases[i].uid)
			fail_msg("%s: %s, uid %lld", cases[i].path, found ? buf : "none", (long long)uid);
		if (found)
			assert_string_equal(buf, cases[i].want);
	}
}

/* A program's name alone only where root alone could have put it there, under that name, and it
 * is the very file the process runs; else with the uid of whoever could. Builds its directories
 * under /tmp (root's, sticky), owned as each case needs: as root only. */
static void test_service_of_program(void **state)
{
	char t[] = "/tmp/hs-service.XXXXXX", path[512], other[600], buf[128];
	enum hs_service_rank rank;
	struct stat prog, st;
	static const struct {
		const char *dir;
		mode_t mode;
		uid_t uid;
		gid_t gid;
	} dirs[] = {
		{"bin", 0755, 0, 0},        {"open", 0777, 0, 0},     {"sticky", 01777, 0, 0},
		{"sticky/sub", 0755, 0, 0}, {"home", 0755, 65534, 0}, {"group-root", 0775, 0, 0},
		{"group", 0775, 0, 100},    {"bin/sub", 0755, 0, 0},
	};
	static const struct {
		const char *file;
		uid_t uid;
		const char *want;
	} cases[] = {
		{"bin/prog", 0, "prog"},
		{"bin/sub/nginx", 0, "nginx"},
		{"sticky/sub/prog", 0, "prog"},
		{"group-root/prog", 0, "prog"},
		{"open/prog", 0, "user-0.prog"}, /* anyone could have named it */
		{"open/nginx", 65534, "user-65534.nginx"},
		{"sticky/prog", 0, "user-0.prog"}, /* anyone could have taken the name first */
		{"home/nginx", 65534, "user-65534.nginx"},
		{"home/root-owned", 0, "user-0.root-owned"}, /* renamed by the directory's owner */
		{"group/prog", 0, "user-0.prog"},
	};
	(void)state;

	if (geteuid() != 0)
		hs_test_skip("needs root: directories owned by root and by others");
	assert_non_null(mkdtemp(t));
	assert_int_equal(chmod(t, 0755), 0);
	for (size_t i = 0; i < HS_ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", t, dirs[i].dir);
		assert_int_equal(mkdir(path, 0700), 0);
		assert_int_equal(chown(path, dirs[i].uid, dirs[i].gid), 0);
		assert_int_equal(chmod(path, dirs[i].mode), 0);
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		snprintf(path, sizeof(path), "%s/%s", t, cases[i].file);
		hs_test_write_file(path, "#!/bin/sh\n", 10);
		assert_int_equal(chown(path, cases[i].uid, 0), 0);
		assert_int_equal(stat(path, &prog), 0);
		hs_service_of_program(path, &prog, -1, buf, sizeof(buf), &rank);
		if (strcmp(buf, cases[i].want))
			fail_msg("%s: %s, not %s", cases[i].file, buf, cases[i].want);
		assert_int_equal(rank, strncmp(cases[i].want, "user-", 5) ? HS_SERVICE_PROGRAM : HS_SERVICE_USER);
		/* in a user's slice (their session, their own units): theirs, wherever it is */
		hs_service_of_program(path, &prog, 1000, buf, sizeof(buf), &rank);
		snprintf(other, sizeof(other), "user-1000.%s",
			 strncmp(cases[i].want, "user-", 5) ? cases[i].want : strchr(cases[i].want, '.') + 1);
		assert_string_equal(buf, other);
		assert_int_equal(rank, HS_SERVICE_USER);
	}
	snprintf(path, sizeof(path), "%s/bin/prog", t);
	assert_int_equal(stat(path, &prog), 0);
	/* another file than the one at the path (one mounted over it, or put there since) */
	snprintf(other, sizeof(other), "%s/bin/sub/nginx", t);
	assert_int_equal(stat(other, &st), 0);
	hs_service_of_program(path, &st, -1, buf, sizeof(buf), &rank);
	assert_string_equal(buf, "user-0.prog");
	/* deleted: whatever had that name then, the name is no longer root's to vouch for */
	snprintf(other, sizeof(other), "%s (deleted)", path);
	hs_service_of_program(other, &prog, -1, buf, sizeof(buf), &rank);
	assert_string_equal(buf, "user-0.prog");
	/* through a link */
	snprintf(other, sizeof(other), "%s/link", t);
	assert_int_equal(symlink("bin", other), 0);
	snprintf(other, sizeof(other), "%s/link/prog", t);
	hs_service_of_program(other, &prog, -1, buf, sizeof(buf), &rank);
	assert_string_equal(buf, "user-0.prog");
	/* a path that is no path, a file not known */
	hs_service_of_program("prog", &prog, -1, buf, sizeof(buf), &rank);
	assert_string_equal(buf, "user-0.prog");
	snprintf(other, sizeof(other), "%s/bin/../bin/prog", t);
	hs_service_of_program(other, &prog, -1, buf, sizeof(buf), &rank);
	assert_string_equal(buf, "user-0.prog");
	hs_service_of_program(path, NULL, -1, buf, sizeof(buf), &rank);
	assert_string_equal(buf, "unknown");
	assert_int_equal(rank, HS_SERVICE_USER);
	assert_int_equal(hs_test_rmtree(t), 0);
}

/* ---- the table of processes' services ---- */

#define PID0 5000000 /* above every pid Linux gives (PID_MAX_LIMIT: 4 Mi) */
#define NFAKE 160

/* What a recording knows of the test's processes, which /proc never had: pid PID0 + i runs
 * path[i] (its identity from st[i], as the kernel's records give it), named comm */
struct fake_procs {
	char path[NFAKE][512];
	struct stat st[NFAKE];
	uint8_t build_id[NFAKE][20]; /* given in place of st where build_ids */
	size_t build_id_size[NFAKE];
	bool build_ids;
	const char *comm;
};

static void fake_proc_of(void *ctx, int32_t pid, struct hs_service_proc *ret)
{
	struct fake_procs *f = ctx;
	size_t i = (size_t)(pid - PID0);

	ret->comm = f->comm;
	if (pid < PID0 || i >= NFAKE || !f->path[i][0])
		return;
	ret->exe = f->path[i];
	if (f->build_ids) {
		ret->build_id = f->build_id[i];
		ret->build_id_size = f->build_id_size[i];
		return;
	}
	ret->maj = major(f->st[i].st_dev);
	ret->min = minor(f->st[i].st_dev);
	ret->ino = f->st[i].st_ino;
}

static void fake_program(struct fake_procs *f, size_t i, const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;

	snprintf(f->path[i], sizeof(f->path[i]), "%s", path);
	assert_int_equal(stat(path, &f->st[i]), 0);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	f->build_id_size[i] = elf ? hs_elf_build_id(elf, f->build_id[i], sizeof(f->build_id[i])) : 0;
	elf_end(elf);
	close(fd);
}

/* A profile of one sample per process, pids[i] counted counts[i] times */
static struct hs_profile *profile_of(const int32_t *pids, const int64_t *counts, size_t n)
{
	struct hs_profile *p = hs_profile_new();
	uint32_t fn, loc, st;

	hs_profile_add_type(p, "samples", "count");
	fn = hs_profile_function(p, hs_profile_intern_str(p, "f"), 0, 0, 0);
	loc = hs_profile_location(p, 0, 0x10, HS_KIND_USER, &(struct hs_line){fn, 0}, 1);
	st = hs_profile_stack(p, &loc, 1);
	for (size_t i = 0; i < n; i++)
		hs_profile_add_sample(p, st, hs_profile_intern_str(p, "comm"), pids[i], pids[i], 0, &counts[i]);
	return p;
}

static const struct hs_service_group *group_named(const struct hs_service_groups *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->v[i].name, name))
			return &g->v[i];
	return NULL;
}

/* Past HS_SERVICE_MAX_SERIES services in a profile, the rest go to one series: the system's
 * programs first, however few their samples, then the services with the most samples (ties by
 * name), so that no number of busy programs a user starts pushes the system's out. */
static void test_group_cap(void **state)
{
	char t[] = "/tmp/hs-service.XXXXXX", path[512], want[128];
	struct fake_procs *f = hs_xcalloc(1, sizeof(*f));
	struct hs_service_cache c = {.proc_of = fake_proc_of, .ctx = f};
	struct hs_service_groups g;
	const struct hs_service_group *o;
	int32_t pids[NFAKE];
	int64_t counts[NFAKE];
	struct hs_profile *p;
	size_t n = 0;
	(void)state;

	if (geteuid() != 0)
		hs_test_skip("needs root: programs in directories only root can write");
	_Static_assert(30 + 50 + 70 <= NFAKE && 30 + 70 == HS_SERVICE_MAX_SERIES, "the cases fill the cap");
	assert_non_null(mkdtemp(t));
	assert_int_equal(chmod(t, 0755), 0);
	snprintf(path, sizeof(path), "%s/bin", t);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/open", t);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 0777), 0);
	/* 30 system programs with a sample each; 50 user programs with 2, named to come first; 70
	 * with 10 */
	for (size_t i = 0; i < 150; i++, n++) {
		if (i < 30)
			snprintf(path, sizeof(path), "%s/bin/sys-%02zu", t, i);
		else
			snprintf(path, sizeof(path), "%s/open/u-%c-%03zu", t, i < 80 ? 'a' : 'b', i);
		hs_test_write_file(path, "x", 1);
		fake_program(f, i, path);
		pids[i] = PID0 + (int32_t)i;
		counts[i] = i < 30 ? 1 : i < 80 ? 2 : 10;
	}
	p = profile_of(pids, counts, n);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, HS_SERVICE_MAX_SERIES + 1);
	assert_int_equal(c.folded, 50);
	for (size_t i = 0; i < 150; i++) {
		if (i < 30)
			snprintf(want, sizeof(want), "sys-%02zu", i);
		else
			snprintf(want, sizeof(want), "user-0.u-%c-%03zu", i < 80 ? 'a' : 'b', i);
		o = group_named(&g, want);
		if ((o != NULL) != (i < 30 || i >= 80))
			fail_msg("%s %s its series", want, o ? "has" : "does not have");
		assert_true(!o || (o->npids == 1 && o->pids[0] == pids[i]));
	}
	o = group_named(&g, HS_SERVICE_OTHER);
	assert_non_null(o);
	assert_int_equal(o->npids, 50);
	for (size_t i = 0; i < o->npids; i++)
		assert_true(o->pids[i] >= PID0 + 30 && o->pids[i] < PID0 + 80);
	hs_service_groups_release(&g);
	hs_profile_free(p);
	/* at the cap, nothing folded */
	p = profile_of(pids + 50, counts + 50, HS_SERVICE_MAX_SERIES);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, HS_SERVICE_MAX_SERIES);
	assert_int_equal(c.folded, 0);
	assert_null(group_named(&g, HS_SERVICE_OTHER));
	hs_service_groups_release(&g);
	hs_profile_free(p);
	hs_service_cache_release(&c);
	free(f);
	assert_int_equal(hs_test_rmtree(t), 0);
}

/* What this process's cgroup says (the unified hierarchy's path, else systemd's own): whether
 * it names a unit (into unit), and the user whose slice holds it */
static bool own_cgroup(int64_t *uid, char *unit, size_t cap)
{
	char *text = hs_test_read_file("/proc/self/cgroup", NULL), *path = NULL, *line, *save = NULL;
	bool named = false;

	*uid = -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "0::", 3) && strcmp(line + 3, "/"))
			path = line + 3;
		else if (!path && strstr(line, ":name=systemd:") && strcmp(strstr(line, ":name=systemd:") + 14, "/"))
			path = strstr(line, ":name=systemd:") + 14;
	}
	if (path)
		named = hs_service_of_cgroup(path, uid, unit, cap);
	free(text);
	return named;
}

/* This process's start, CLOCK_MONOTONIC ns, from /proc/self/stat (to a clock tick) */
static uint64_t own_start_mono(void)
{
	char *text = hs_test_read_file("/proc/self/stat", NULL);
	unsigned long long ticks = 0;
	struct timespec b, m;

	assert_int_equal(sscanf(strrchr(text, ')') + 1,
				" %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
				&ticks),
			 1);
	free(text);
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ticks * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK)) -
	       (uint64_t)(((int64_t)b.tv_sec - m.tv_sec) * 1000000000 + (b.tv_nsec - m.tv_nsec)) + 5000000;
}

static struct hs_perf_event task_event(uint32_t type, int32_t pid, int32_t ppid)
{
	struct hs_perf_event ev = {.type = type};
	ev.task.pid = ev.task.tid = (uint32_t)pid;
	ev.task.ppid = ev.task.ptid = (uint32_t)ppid;
	return ev;
}

static struct hs_perf_event sample_event(int32_t pid)
{
	struct hs_perf_event ev = {.type = PERF_RECORD_SAMPLE};
	ev.sample.sid.pid = ev.sample.sid.tid = (uint32_t)pid;
	return ev;
}

/* A process gone before its first sample is named by what it was: its parent's cgroup (this
 * process's: it forked from here), its own program as the recording knows it; after an exec,
 * by its new program; forgotten once it exited and its period is grouped. */
static void test_cache_events(void **state)
{
	char self[512], other[512], unit[128], want[128], buf[128];
	struct fake_procs *f = hs_xcalloc(1, sizeof(*f));
	struct hs_service_cache c = {.proc_of = fake_proc_of, .ctx = f};
	struct hs_perf_event ev;
	struct hs_service_groups g;
	enum hs_service_rank rank;
	struct hs_profile *p;
	int32_t pid = PID0 + 1;
	int64_t one = 1, uid;
	bool named = own_cgroup(&uid, unit, sizeof(unit));
	char *tmp = hs_test_temp_file("hs-service-prog");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	(void)state;

	assert_true(n > 0);
	self[n] = 0;
	snprintf(other, sizeof(other), "%s", tmp);
	fake_program(f, 1, self);
	ev = task_event(PERF_RECORD_FORK, pid, getpid());
	hs_service_cache_event(&c, &ev);
	ev = sample_event(pid);
	hs_service_cache_event(&c, &ev);
	if (named)
		snprintf(want, sizeof(want), "%s", unit);
	else
		hs_service_of_program(self, &f->st[1], uid, want, sizeof(want), &rank);
	hs_service_cache_name(&c, pid, NULL, buf, sizeof(buf));
	assert_string_equal(buf, want);
	/* its program changed since: the name read at its first sample holds */
	fake_program(f, 1, other);
	hs_service_cache_event(&c, &ev);
	hs_service_cache_name(&c, pid, NULL, buf, sizeof(buf));
	assert_string_equal(buf, want);
	/* an exec: read again */
	ev = (struct hs_perf_event){.type = PERF_RECORD_COMM};
	ev.comm.pid = ev.comm.tid = (uint32_t)pid;
	ev.comm.comm = "other";
	ev.comm.exec = true;
	hs_service_cache_event(&c, &ev);
	ev = sample_event(pid);
	hs_service_cache_event(&c, &ev);
	if (!named)
		hs_service_of_program(other, &f->st[1], uid, want, sizeof(want), &rank);
	hs_service_cache_name(&c, pid, NULL, buf, sizeof(buf));
	assert_string_equal(buf, want);
	/* its exit: grouped with its name, then forgotten */
	ev = task_event(PERF_RECORD_EXIT, pid, pid);
	hs_service_cache_event(&c, &ev);
	p = profile_of(&pid, &one, 1);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.v[0].name, want);
	hs_service_groups_release(&g);
	hs_profile_free(p);
	assert_int_equal(c.procs.n, 0);
	/* a process running when the recording starts: its cgroup read then, kept for its samples */
	hs_service_cache_proc(&c, getpid());
	assert_int_equal(c.procs.n, 1);
	assert_true(c.procs.v[0].cgroup_known);
	assert_int_equal(c.procs.v[0].uid, uid);
	assert_true(!c.procs.v[0].unit == !named);
	assert_int_equal(c.procs.v[0].name, 0);
	/* a thread is no process; a process whose fork was not seen has no parent to go by, one
	 * whose program is not known is unknown */
	ev = task_event(PERF_RECORD_FORK, PID0 + 2, PID0 + 2);
	hs_service_cache_event(&c, &ev);
	assert_int_equal(c.procs.n, 1);
	fake_program(f, 3, self);
	hs_service_cache_name(&c, PID0 + 3, NULL, buf, sizeof(buf));
	hs_service_of_program(self, &f->st[3], -1, want, sizeof(want), &rank);
	assert_string_equal(buf, want);
	hs_service_cache_name(&c, PID0 + 4, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	/* the kernel's records with a build-id in place of a device and an inode: the file at the
	 * path is the program where its build-id is the same, else not known */
	f->build_ids = true;
	fake_program(f, 5, self);
	assert_true(f->build_id_size[5] > 0);
	hs_service_cache_name(&c, PID0 + 5, NULL, buf, sizeof(buf));
	assert_string_equal(buf, want);
	fake_program(f, 6, self);
	snprintf(f->path[6], sizeof(f->path[6]), "%s", other);
	hs_service_cache_name(&c, PID0 + 6, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	f->build_ids = false;
	hs_service_cache_release(&c);
	/* a pid the kernel gave another process since (this one, started long before the fork the
	 * recording saw): not read from /proc */
	c = (struct hs_service_cache){.proc_of = fake_proc_of, .ctx = f};
	hs_service_cache_clock(&c);
	ev = task_event(PERF_RECORD_FORK, getpid(), PID0 + 9);
	ev.task.time = own_start_mono() + 3600000000000ull;
	hs_service_cache_event(&c, &ev);
	hs_service_cache_name(&c, getpid(), NULL, buf, sizeof(buf));
	assert_string_equal(buf, "unknown");
	hs_service_cache_release(&c);
	/* the process that forked then: read */
	c = (struct hs_service_cache){.proc_of = fake_proc_of, .ctx = f};
	hs_service_cache_clock(&c);
	ev.task.time = own_start_mono();
	hs_service_cache_event(&c, &ev);
	hs_service_cache_name(&c, getpid(), NULL, buf, sizeof(buf));
	hs_service_of(getpid(), HS_SERIES_BY_SERVICE, NULL, want, sizeof(want));
	assert_string_equal(buf, want);
	hs_service_cache_release(&c);
	/* by command name: the name the recording knows, in the unit or user's slice of its parent */
	c = (struct hs_service_cache){.by = HS_SERIES_BY_COMM, .proc_of = fake_proc_of, .ctx = f};
	f->comm = "nginx";
	ev = task_event(PERF_RECORD_FORK, pid, getpid());
	hs_service_cache_event(&c, &ev);
	hs_service_cache_name(&c, pid, NULL, buf, sizeof(buf));
	if (named)
		snprintf(want, sizeof(want), "%s", unit);
	else if (uid >= 0)
		snprintf(want, sizeof(want), "user-%lld.nginx", (long long)uid);
	else
		snprintf(want, sizeof(want), "nginx");
	assert_string_equal(buf, want);
	hs_service_cache_release(&c);
	unlink(tmp);
	free(tmp);
	free(f);
}

static void test_group(void **state)
{
	struct hs_profile *p = hs_profile_new();
	struct hs_service_cache c = {.by = HS_SERIES_BY_COMM};
	struct hs_service_groups g;
	int64_t one = 1;
	uint32_t fn, loc, st;
	(void)state;

	hs_profile_add_type(p, "samples", "count");
	fn = hs_profile_function(p, hs_profile_intern_str(p, "f"), 0, 0, 0);
	loc = hs_profile_location(p, 0, 0x10, HS_KIND_USER, &(struct hs_line){fn, 0}, 1);
	st = hs_profile_stack(p, &loc, 1);
	/* processes that do not exist, grouped by the names their samples carry: two under one */
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "alpha"), 999999999, 1, 0, &one);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "alpha"), 999999998, 2, 0, &one);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "beta"), 999999997, 3, 0, &one);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "beta"), 999999997, 4, 0, &one);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, 2);
	for (size_t i = 0; i < g.n; i++) {
		if (!strcmp(g.v[i].name, "alpha"))
			assert_int_equal(g.v[i].npids, 2);
		else {
			assert_string_equal(g.v[i].name, "beta");
			assert_int_equal(g.v[i].npids, 1);
		}
	}
	assert_int_equal(c.procs.n, 3); /* the processes of this profile, kept for the next */
	hs_service_groups_release(&g);
	/* the next profile has one of them: the cache keeps just it */
	hs_profile_free(p);
	p = hs_profile_new();
	hs_profile_add_type(p, "samples", "count");
	fn = hs_profile_function(p, hs_profile_intern_str(p, "f"), 0, 0, 0);
	loc = hs_profile_location(p, 0, 0x10, HS_KIND_USER, &(struct hs_line){fn, 0}, 1);
	st = hs_profile_stack(p, &loc, 1);
	hs_profile_add_sample(p, st, hs_profile_intern_str(p, "renamed"), 999999997, 3, 0, &one);
	hs_service_group(&c, p, &g);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.v[0].name, "renamed"); /* read again each period */
	assert_int_equal(c.procs.n, 1);
	hs_service_groups_release(&g);
	hs_service_cache_release(&c);
	hs_profile_free(p);
}

static void test_url_shown(void **state)
{
	static const struct {
		const char *url, *want;
	} cases[] = {
		{"http://me:s3cret@store:4040/ingest", "http://***@store:4040/ingest"},
		{"https://me@store", "https://***@store"},
		{"http://store:4040/a@b?x=@", "http://store:4040/a@b?x=@"}, /* an @ past the host is no userinfo */
		{"http://a:b@c@store/", "http://***@store/"},
		{"http://store", "http://store"},
	};
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		char *s = hs_push_url_shown(cases[i].url);
		assert_string_equal(s, cases[i].want);
		free(s);
	}
}

static void test_spool_names(void **state)
{
	int64_t from;
	uint64_t seq;
	bool tmp;
	char buf[64];
	struct hs_spool_entry e = {1795893455072618310LL, 42, 0};
	(void)state;

	hs_spool_name(&e, buf, sizeof(buf));
	assert_string_equal(buf, "01795893455072618310-0000000042.push");
	assert_true(hs_spool_parse_name(buf, &from, &seq, &tmp));
	assert_true(from == e.from && seq == 42 && !tmp);
	assert_true(hs_spool_parse_name("00000000000000000001-000007.push.tmp", &from, &seq, &tmp));
	assert_true(from == 1 && seq == 7 && tmp);
	assert_false(hs_spool_parse_name("x-1.push", &from, &seq, &tmp));
	assert_false(hs_spool_parse_name("1-2.push.old", &from, &seq, &tmp));
	assert_false(hs_spool_parse_name("1-.push", &from, &seq, &tmp));
	assert_false(hs_spool_parse_name("123456789012345678901-1.push", &from, &seq, &tmp)); /* 21 digits */
	assert_false(hs_spool_parse_name("99999999999999999999-1.push", &from, &seq, &tmp));  /* past int64 */
}

static struct hs_spool *spool_open_ok(const char *dir)
{
	struct hs_spool *sp = NULL;
	struct hs_error err = {0};

	if (hs_spool_open(&sp, dir, 1 << 20, HS_SPOOL_INGEST, &err))
		fail_msg("cannot open the spool: %s", err.detail);
	return sp;
}

static int spool_open_err(const char *dir, const char *want)
{
	struct hs_spool *sp = NULL;
	struct hs_error err = {0};
	int rc = hs_spool_open(&sp, dir, 1 << 20, HS_SPOOL_INGEST, &err);

	assert_true(rc < 0);
	assert_null(sp);
	if (!strstr(err.detail, want))
		fail_msg("'%s' does not say '%s'", err.detail, want);
	return rc;
}

/* Directories the spool refuses: a link, a file, someone else's, one others can write, one
 * another recording has; one it makes is 0700 */
static void test_spool_refused(void **state)
{
	char dir[256], path[300], link[300];
	struct hs_spool *sp, *sp2;
	struct stat st;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	snprintf(path, sizeof(path), "%s/spool", dir);
	umask(0);
	sp = spool_open_ok(path);
	umask(022);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	spool_open_err(path, "in use by another recording");
	hs_spool_close(sp);
	sp2 = spool_open_ok(path);
	hs_spool_close(sp2);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	spool_open_err(link, "is a symbolic link");
	assert_int_equal(chmod(path, 0777), 0);
	spool_open_err(path, "writable by others (mode 0777)");
	assert_int_equal(chmod(path, 0770), 0);
	spool_open_err(path, "writable by its group");
	assert_int_equal(chmod(path, 0755), 0);
	hs_spool_close(spool_open_ok(path)); /* others may read, not write */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(chmod(path, 0700), 0);
		spool_open_err(path, "belongs to uid 65534, not to this user (uid 0)");
	}
	snprintf(path, sizeof(path), "%s/file", dir);
	hs_test_write_file(path, "x", 1);
	spool_open_err(path, "not a directory");
	hs_test_rmtree(dir);
}

static void put(struct hs_spool *sp, const char *series, int64_t from, const char *body)
{
	struct hs_spool_entry e;

	assert_int_equal(hs_spool_write(sp, series, from, from + 10, body, strlen(body), &e), 0);
	hs_spool_add(sp, &e);
}

/* Profiles come back oldest first by their period, whatever order their files were written
 * in; a file hotstack did not write is never read nor removed; a kill's temporary file is */
static void test_spool_files(void **state)
{
	char dir[256], path[600], body[64];
	struct hs_spool *sp;
	struct hs_spool_reader r;
	const struct hs_spool_entry *e;
	static const int64_t froms[] = {5000, 1000, 3000, 3000, 2000};
	static const char *const foreign[] = {
		"00000000000000000001-0000000001.push", /* not our format */
		"00000000000000000002-0000000002.push", /* ours, but grown past its size */
		"00000000000000000003-0000000003.push", /* a link to one of ours */
		"notes.push",                           /* not our name */
	};
	struct stat st;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	sp = spool_open_ok(dir);
	for (size_t i = 0; i < HS_ARRAY_SIZE(froms); i++) {
		snprintf(body, sizeof(body), "body %zu", i);
		put(sp, "svc{env=x}", froms[i], body);
	}
	hs_spool_close(sp);
	/* beside them: files not to touch, and a temporary file a kill left */
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[0]);
	hs_test_write_file(path, "HSPUSH9 1 2 3\nabc\n", 18);
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[1]);
	hs_test_write_file(path, "HSPUSH2 2 3 1 1\nx\nyz", 20);
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[2]);
	assert_int_equal(symlink("00000000000000000005-0000000009.push", path), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, foreign[3]);
	hs_test_write_file(path, "x", 1);
	snprintf(path, sizeof(path), "%s/00000000000000000004-0000000004.push.tmp", dir);
	hs_test_write_file(path, "HSPU", 4);

	sp = spool_open_ok(dir);
	assert_int_equal(sp->stale, 1);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(sp->foreign, 4);
	assert_int_equal(hs_spool_count(sp), HS_ARRAY_SIZE(froms));
	/* oldest first: by period, then by the order of writing within one */
	for (int64_t last = 0, k = 0; (e = hs_spool_oldest(sp)); k++) {
		char got[64] = {0};
		assert_true(e->from >= last);
		last = e->from;
		assert_int_equal(hs_spool_read_open(sp, e, &r), 0);
		assert_string_equal(r.series, "svc{env=x}");
		assert_true(r.from == e->from && r.until == e->from + 10);
		assert_true(r.body_len < sizeof(got));
		assert_int_equal(pread(r.fd, got, r.body_len, (off_t)r.body_off), (ssize_t)r.body_len);
		close(r.fd);
		if (e->from == 3000) /* two of one period: in the order written */
			assert_string_equal(got, k == 2 ? "body 2" : "body 3");
		assert_int_equal(hs_spool_remove(sp, 0, true), 0);
	}
	assert_true(sp->bytes == 0);
	hs_spool_close(sp);
	for (size_t i = 0; i < HS_ARRAY_SIZE(foreign); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, foreign[i]);
		assert_int_equal(lstat(path, &st), 0);
	}
	hs_test_rmtree(dir);
}

/* Full: the oldest go first, but for the one being sent */
static void test_spool_room(void **state)
{
	char dir[256];
	struct hs_spool *sp;
	struct hs_error err = {0};
	uint64_t one;
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	assert_int_equal(hs_spool_open(&sp, dir, 1000, HS_SPOOL_INGEST, &err), 0);
	for (int i = 0; i < 4; i++)
		put(sp, "s{}", 1000 * (i + 1), "0123456789012345678901234567890123456789");
	one = hs_spool_oldest(sp)->size;
	assert_int_equal(hs_spool_make_room(sp, 1000 - 2 * one, 1), 2); /* room for two more */
	assert_int_equal(hs_spool_count(sp), 2);
	assert_true(hs_spool_oldest(sp)->from == 1000); /* the one being sent */
	assert_int_equal(hs_spool_remove(sp, 0, true), 0);
	assert_true(hs_spool_oldest(sp)->from == 4000);
	hs_spool_close(sp);
	/* only the one left is on disk */
	assert_int_equal(hs_spool_open(&sp, dir, 1000, HS_SPOOL_INGEST, &err), 0);
	assert_int_equal(hs_spool_count(sp), 1);
	assert_true(hs_spool_oldest(sp)->from == 4000);
	hs_spool_close(sp);
	hs_test_rmtree(dir);
}


/* A container's full id in /proc/PID/cgroup's text, for the container.id label: after each
 * runtime's prefix and under docker's directory; none in a unit's, nor a run of 63 or 65
 * digits or capitals */
static void test_container_id(void **state)
{
	static const char hex[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const char *const yes[][2] = {
		{"0::/system.slice/docker-", ".scope\n"},
		{"0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-", ".scope\n"},
		{"0::/machine.slice/libpod-", ".scope/container\n"},
		{"0::/kubepods/besteffort/pod1/crio-", ".scope\n"},
		{"12:pids:/docker/", "\n0::/\n"},
	};
	char text[256], id[65];
	(void)state;

	for (size_t i = 0; i < HS_ARRAY_SIZE(yes); i++) {
		snprintf(text, sizeof(text), "%s%s%s", yes[i][0], hex, yes[i][1]);
		assert_true(hs_container_id(text, id));
		assert_string_equal(id, hex);
	}
	assert_false(hs_container_id("0::/system.slice/nginx.service\n", id));
	snprintf(text, sizeof(text), "0::/system.slice/docker-%.63s.scope\n", hex);
	assert_false(hs_container_id(text, id));
	snprintf(text, sizeof(text), "0::/system.slice/docker-%s0.scope\n", hex);
	assert_false(hs_container_id(text, id));
	snprintf(text, sizeof(text), "0::/system.slice/docker-%.60sABCD.scope\n", hex);
	assert_false(hs_container_id(text, id));
}

static const struct hs_label *label(const struct hs_labels *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return &l->v[i];
	return NULL;
}

/* A service's labels: the machine's (this process: its program and pid), the user's over
 * them, renamed and dropped by either form of a name */
static void test_labels_of(void **state)
{
	static const char *const user[] = {"env=prod", "host.name=chosen"};
	static const char *const renames[] = {"process_executable_name=exe", "process.pid=", "nothing=x"};
	int32_t self = (int32_t)getpid(), none = 0;
	struct hs_labels l;
	char prom[64];
	(void)state;

	hs_labels_of(&l, "svc", "h1", &self, 1, NULL, 0, NULL, 0);
	assert_string_equal(label(&l, "service.name")->value, "svc");
	assert_string_equal(label(&l, "host.name")->value, "h1");
	assert_string_equal(label(&l, "process.executable.name")->value, "test-push");
	assert_non_null(strstr(label(&l, "process.executable.path")->value, "/tests/unit/test-push"));
	assert_true(label(&l, "process.pid")->is_num);
	assert_int_equal(label(&l, "process.pid")->num, self);
	assert_null(label(&l, "container.id")); /* the test runs in no container's cgroup here */
	hs_labels_release(&l);

	hs_labels_of(&l, "svc", "h1", &self, 1, user, 2, renames, 3);
	assert_string_equal(label(&l, "env")->value, "prod");
	assert_string_equal(label(&l, "host.name")->value, "chosen");
	assert_null(label(&l, "process.executable.name"));
	assert_string_equal(label(&l, "exe")->value, "test-push");
	assert_null(label(&l, "process.pid"));
	assert_null(label(&l, "x"));
	hs_labels_release(&l);

	/* a service of processes all gone: what is known without them */
	hs_labels_of(&l, "svc", "", &none, 1, NULL, 0, NULL, 0);
	assert_int_equal(l.n, 1);
	hs_labels_release(&l);

	assert_true(hs_relabel_ok("host.name=node"));
	assert_true(hs_relabel_ok("process.pid="));
	assert_false(hs_relabel_ok("=x"));
	assert_false(hs_relabel_ok("a b=c"));
	assert_false(hs_relabel_ok("a=1x"));
	assert_false(hs_relabel_ok("nothing"));
	assert_string_equal(hs_label_prom_name("k8s.pod.name", prom, sizeof(prom)), "k8s_pod_name");
}

/* The length-delimited contents of the n-th field num of the message in buf, or NULL */
static const uint8_t *pb_field(const uint8_t *buf, size_t len, uint32_t num, size_t nth, size_t *ret)
{
	struct hs_pb_reader r;
	struct hs_pb_field f;

	hs_pb_reader_init(&r, buf, len, 0, NULL);
	while (hs_pb_next(&r, &f) == 1)
		if (f.num == num && f.wire == HS_PB_LEN && !nth--) {
			*ret = f.len;
			return f.data;
		}
	return NULL;
}

static size_t pb_count(const uint8_t *buf, size_t len, uint32_t num)
{
	size_t n = 0, k;

	while (pb_field(buf, len, num, n, &k))
		n++;
	return n;
}

/* An OTLP request: a resource per resource given that has samples (the rest's in the one with
 * no pids), every dictionary table with its zero entry first */
static void test_otlp_encode(void **state)
{
	static const int32_t pids[] = {10, 20, 20, -1};
	static const int64_t counts[] = {3, 4, 5, 6};
	static const int32_t ten = 10, thirty = 30;
	static const struct hs_otlp_attr attrs[] = {{"service.name", "a"}, {"process.pid", NULL, 10}};
	struct hs_otlp_resource res[] = {
		{attrs, 2, &ten, 1},
		{attrs, 1, &thirty, 1}, /* no samples: left out */
		{attrs, 1, NULL, 0},    /* the others: 20 and the unknown process */
	};
	struct hs_profile *p = profile_of(pids, counts, HS_ARRAY_SIZE(pids));
	struct hs_pb_buf b = {0};
	const uint8_t *d, *t;
	size_t dl, tl;
	(void)state;

	hs_otlp_encode(p, res, HS_ARRAY_SIZE(res), &b);
	assert_int_equal(pb_count(b.v, b.n, 1), 2);
	assert_non_null(d = pb_field(b.v, b.n, 2, 0, &dl));
	for (uint32_t table = 1; table <= 7; table++) {
		assert_non_null(t = pb_field(d, dl, table, 0, &tl));
		if (table != 4) /* the zero link holds ids of zeros */
			assert_int_equal(tl, 0);
	}
	/* the profile's strings, and the keys used: no mapping has a build-id */
	assert_int_equal(pb_count(d, dl, 5), p->str_off.n + 4);
	assert_int_equal(pb_count(d, dl, 7), p->stacks.n);
	assert_string_equal(hs_otlp_frame_type(HS_KIND_PYTHON), "cpython");
	assert_string_equal(hs_otlp_frame_type(HS_KIND_JS_OPT), "v8js");
	assert_null(hs_otlp_frame_type(HS_KIND_PSEUDO));
	hs_pb_buf_release(&b);
	hs_profile_free(p);
}

/* A spool holds one protocol's profiles for a recording: another's are left alone, and a
 * recording of theirs finds them */
static void test_spool_kinds(void **state)
{
	char dir[256];
	struct hs_spool *sp;
	struct hs_spool_entry e;
	struct hs_spool_reader r;
	struct hs_error err = {0};
	char body[8] = "";
	(void)state;

	assert_int_equal(hs_test_mkdtemp(dir, sizeof(dir), "hs-spool"), 0);
	assert_int_equal(hs_spool_open(&sp, dir, 1 << 20, HS_SPOOL_OTLP, &err), 0);
	assert_int_equal(hs_spool_write(sp, "otlp", 1000, 2000, "gzip", 4, &e), 0);
	hs_spool_add(sp, &e);
	hs_spool_close(sp);
	assert_int_equal(hs_spool_open(&sp, dir, 1 << 20, HS_SPOOL_INGEST, &err), 0);
	assert_int_equal(hs_spool_write(sp, "svc{}", 500, 1000, "pprof", 5, &e), 0);
	hs_spool_close(sp);
	assert_int_equal(hs_spool_open(&sp, dir, 1 << 20, HS_SPOOL_INGEST, &err), 0);
	assert_int_equal(hs_spool_count(sp), 1);
	assert_int_equal(sp->other_kind, 1);
	assert_int_equal(sp->foreign, 0);
	hs_spool_close(sp);
	assert_int_equal(hs_spool_open(&sp, dir, 1 << 20, HS_SPOOL_OTLP, &err), 0);
	assert_int_equal(hs_spool_count(sp), 1);
	assert_int_equal(sp->other_kind, 1);
	assert_int_equal(hs_spool_read_open(sp, hs_spool_oldest(sp), &r), 0);
	assert_int_equal(r.kind, HS_SPOOL_OTLP);
	assert_string_equal(r.series, "otlp");
	assert_int_equal(r.body_len, 4);
	assert_int_equal(pread(r.fd, body, 4, (off_t)r.body_off), 4);
	assert_string_equal(body, "gzip");
	close(r.fd);
	hs_spool_close(sp);
	hs_test_rmtree(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_service_of),
		cmocka_unit_test(test_service_of_cgroup),
		cmocka_unit_test(test_service_of_program),
		cmocka_unit_test(test_group_cap),
		cmocka_unit_test(test_cache_events),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_url_shown),
		cmocka_unit_test(test_spool_names),
		cmocka_unit_test(test_spool_refused),
		cmocka_unit_test(test_spool_files),
		cmocka_unit_test(test_spool_room),
		cmocka_unit_test(test_spool_kinds),
		cmocka_unit_test(test_container_id),
		cmocka_unit_test(test_labels_of),
		cmocka_unit_test(test_otlp_encode),
	};

	if (hs_test_select(argc, argv, tests, HS_ARRAY_SIZE(tests)) < 0)
		return 1;
	return hs_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
