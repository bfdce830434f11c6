/* The targets of a live recording: a command started for it (held before its exec until its
 * events are attached), running processes with all their threads (-p), and their ends. */
#include "session-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/strbuf.h"

#define MAX_ATTACH_ROUNDS 16

/* ---- processes (-p) ---- */

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
static int attach_pid(struct hs_record *r, int32_t pid, struct hs_error *err)
{
	char path[64];

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return hs_record_no_such_process(err, pid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int round = 0; round < MAX_ATTACH_ROUNDS; round++) {
		DIR *d = opendir(path);
		struct dirent *de;
		int added = 0;

		if (!d) {
			if (round == 0)
				return hs_record_no_such_process(err, pid);
			break;
		}
		while ((de = readdir(d))) {
			int32_t tid = atoi(de->d_name);
			int rc;
			if (tid <= 0 || have_tid(r, tid))
				continue;
			rc = hs_record_open_for(r, tid, err);
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
		return hs_record_no_such_process(err, pid);
	return 0;
}

/* The process a thread belongs to (its Tgid), or 0 when it is gone. */
static int32_t tgid_of(int32_t tid)
{
	char path[64], line[128];
	int32_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (!tgid && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) != 1)
			tgid = 0;
	fclose(f);
	return tgid;
}

/* -t: the thread alone (and the threads and children it creates), not the rest of its process. */
static int attach_tid(struct hs_record *r, int32_t tid, struct hs_error *err)
{
	int32_t pid = tgid_of(tid);
	int rc;

	if (have_tid(r, tid))
		return 0;
	rc = pid > 0 ? hs_record_open_for(r, tid, err) : -ESRCH;
	if (rc == -ESRCH)
		return hs_record_fail(err, -ESRCH, HS_RECORD_NO_THREAD, "no such thread: %d", (int)tid);
	if (rc)
		return rc;
	hs_vec_push(&r->tids, tid);
	remember_comm(r, pid, tid);
	return 0;
}

bool hs_record_threads_gone(const struct hs_record *r)
{
	if (!r->o.ntids || r->o.argv || r->o.npids || r->o.all_cpus)
		return false;
	for (size_t i = 0; i < r->o.ntids; i++)
		if (kill(r->o.tids[i], 0) == 0 || errno != ESRCH)
			return false;
	return true;
}

/* ---- the command ---- */

static int start_command(struct hs_record *r, struct hs_error *err)
{
	int go[2], ep[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot fork: %s", strerror(errno));
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

int hs_record_release_command(struct hs_record *r, struct hs_error *err)
{
	char c = 'g';
	int e = 0;
	ssize_t n;

	if (write(r->go_fd, &c, 1) != 1)
		return hs_record_fail(err, -errno, HS_RECORD_FAILED, "cannot start the command: %s", strerror(errno));
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
			return hs_record_fail(err, e, HS_RECORD_USER, "cannot run '%s' as user %u: %s",
					      r->o.argv[0], (unsigned)r->o.uid,
				    strerror(-e));
		if (e == ENOENT)
			return hs_record_fail(err, -ENOENT, HS_RECORD_EXEC, "%s: command not found", r->o.argv[0]);
		if (e == EACCES)
			return hs_record_fail(err, -EACCES, HS_RECORD_EXEC, "%s: permission denied", r->o.argv[0]);
		return hs_record_fail(err, -e, HS_RECORD_EXEC, "cannot run '%s': %s", r->o.argv[0], strerror(e));
	}
	return 0;
}

/* ---- all of them ---- */

/* Starts the command (held before its exec) and opens the events of every target. */
int hs_record_open_targets(struct hs_record *r, struct hs_error *err)
{
	const struct hs_record_opts *o = &r->o;
	int rc;

	if (o->argv && (rc = start_command(r, err)))
		return rc;
	if (o->all_cpus) {
		rc = hs_record_open_for(r, -1, err);
		if (rc == -ESRCH)
			return hs_record_fail(err, rc, HS_RECORD_FAILED, "cannot open system-wide events");
		if (rc || (rc = hs_record_sideband_open(r, err)))
			return rc;
	} else if (o->argv) {
		rc = hs_record_open_for(r, r->child, err);
		if (rc == -ESRCH)
			return hs_record_fail(err, rc, HS_RECORD_FAILED, "the command ended before it could be attached");
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < o->ntids && !o->all_cpus; i++)
		if ((rc = attach_tid(r, o->tids[i], err)))
			return rc;
	for (size_t i = 0; i < o->npids; i++) {
		/* before attaching: a process that exits meanwhile is still noticed (its pidfd becomes
		 * readable), where a pidfd opened after it was reaped would never be */
		int pfd = (int)syscall(SYS_pidfd_open, o->pids[i], 0);
		if (pfd < 0 && errno == ESRCH)
			return hs_record_no_such_process(err, o->pids[i]);
		hs_vec_push(&r->pidfds, pfd);
		if (!o->all_cpus) {
			if ((rc = attach_pid(r, o->pids[i], err)))
				return rc;
		} else if (kill(o->pids[i], 0) < 0 && errno == ESRCH) {
			return hs_record_no_such_process(err, o->pids[i]);
		}
		if (pfd >= 0) {
			struct epoll_event pe = {EPOLLIN, {.u64 = 100 + i}};
			epoll_ctl(r->epfd, EPOLL_CTL_ADD, pfd, &pe);
		}
	}
	return 0;
}

void hs_record_reap_child(struct hs_record *r)
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

void hs_record_probe_targets(struct hs_record *r)
{
	for (size_t i = 0; i < r->o.npids; i++)
		hs_record_rt_probe(r, r->o.pids[i]);
	for (size_t i = 0; i < r->o.ntids; i++) {
		int32_t pid = tgid_of(r->o.tids[i]);
		if (pid > 0)
			hs_record_rt_probe(r, pid);
	}
}

void hs_record_describe_running(struct hs_record *r)
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
			if (pid > 0 && pid != getpid()) {
				hs_record_rt_probe(r, pid);
				r->sink->proc(r->sink->ctx, pid);
			}
		}
		closedir(d);
		return;
	}
	for (size_t i = 0; i < r->o.npids; i++) {
		hs_record_rt_probe(r, r->o.pids[i]);
		r->sink->proc(r->sink->ctx, r->o.pids[i]);
	}
	for (size_t i = 0; i < r->o.ntids; i++) {
		int32_t pid = tgid_of(r->o.tids[i]);
		if (pid > 0) {
			hs_record_rt_probe(r, pid);
			r->sink->proc(r->sink->ctx, pid);
		}
	}
}

/* A command still running when the recording ends (the duration passed, a signal) is ended:
 * SIGTERM, then SIGKILL. */
void hs_record_end_command(struct hs_record *r)
{
	if (r->child > 0 && !r->child_exited) {
		/* we end the recording: end the command too, as perf does */
		r->child_killed_by_us = r->cause == HS_CAUSE_DURATION || r->cause == HS_CAUSE_ASKED;
		kill(r->child, SIGTERM);
		for (int i = 0; i < 50 && !r->child_exited; i++) {
			hs_record_reap_child(r);
			if (!r->child_exited)
				usleep(20000);
		}
		if (!r->child_exited) {
			kill(r->child, SIGKILL);
			/* a process in an uninterruptible wait (a hung NFS server) dies only when that
			 * ends: the outputs are not held for it; it is reaped by init after us */
			for (int i = 0; i < 250 && !r->child_exited; i++) {
				hs_record_reap_child(r);
				if (!r->child_exited)
					usleep(20000);
			}
			if (!r->child_exited) {
				r->child_status = SIGKILL;
				r->child_exited = true;
			}
		}
	}
}

bool hs_record_duration_words(const struct hs_record *r, struct hs_strbuf *sb)
{
	if (r->cause != HS_CAUSE_DURATION)
		return false;
	hs_strbuf_addf(sb, "stopped after %g s (-d)", r->o.duration);
	if (r->child > 0 && r->child_killed_by_us)
		hs_strbuf_addf(sb, ", and stopped the command (pid %d) as perf does: its exit status is not hotstack's",
			       (int)r->child);
	else if (r->child <= 0 && (r->o.npids || r->o.ntids))
		hs_strbuf_adds(sb, "; the processes it recorded go on");
	return true;
}

int hs_record_command_status(const struct hs_record *r)
{
	/* as perf, which ends by its own signal: Ctrl-C is 130 whether or not the command outlived
	 * its SIGINT (it had it from the terminal too), and whatever a command's handler made of it */
	if (r->cause == HS_CAUSE_SIGNAL)
		return 128 + r->stop_signal;
	if (r->child <= 0 || !r->child_exited || r->child_killed_by_us)
		return 0;
	if (WIFEXITED(r->child_status))
		return WEXITSTATUS(r->child_status);
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return 1;
}

size_t hs_record_bigger_ring(const struct hs_record *r)
{
	size_t pages = r->o.mmap_pages ? r->o.mmap_pages : 1;
	size_t dflt = hs_callgraph_ring_pages(r->o.callgraph, r->o.stack_bytes, (size_t)sysconf(_SC_PAGESIZE));

	struct hs_ring_limit l;
	size_t fit;

	hs_record_ring_limit(&l);
	fit = hs_record_ring_fit(&l, r->cpus.n);
	/* twice a ring far too small would still be too small: -m 1 loses all with stack copies */
	pages = pages >= HS_RECORD_MAX_RING_PAGES / 2 ? HS_RECORD_MAX_RING_PAGES : pages * 2;
	pages = HS_MIN(HS_MAX(pages, dflt), fit);
	return pages > r->o.mmap_pages ? pages : 0;
}

/* ---- record --user ---- */

int hs_run_as_init(struct hs_run_as *u, const char *user)
{
	struct passwd *pw;
	char *end;
	int ng = 64;
	size_t n = 0, k = 0;

	memset(u, 0, sizeof(*u));
	errno = 0;
	pw = getpwnam(user);
	if (!pw && *user >= '0' && *user <= '9') {
		unsigned long uid = strtoul(user, &end, 10);
		if (!*end && uid <= UINT32_MAX)
			pw = getpwuid((uid_t)uid);
	}
	if (!pw)
		return -ENOENT;
	u->name = hs_xstrdup(pw->pw_name);
	if (geteuid() != 0 && pw->pw_uid != geteuid())
		return -EPERM;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->groups = hs_xmalloc((size_t)ng * sizeof(gid_t));
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &ng) < 0) {
		u->groups = hs_xrealloc(u->groups, (size_t)ng * sizeof(gid_t));
		if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &ng) < 0)
			ng = 0;
	}
	u->ngroups = (size_t)ng;
	hs_strbuf_addf(&u->env[0], "HOME=%s", pw->pw_dir);
	hs_strbuf_addf(&u->env[1], "USER=%s", pw->pw_name);
	hs_strbuf_addf(&u->env[2], "LOGNAME=%s", pw->pw_name);
	while (environ[n])
		n++;
	u->envp = hs_xmalloc((n + 4) * sizeof(char *));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "HOME=", 5) && strncmp(environ[i], "USER=", 5) &&
		    strncmp(environ[i], "LOGNAME=", 8))
			u->envp[k++] = environ[i];
	for (size_t j = 0; j < HS_ARRAY_SIZE(u->env); j++)
		u->envp[k++] = (char *)hs_strbuf_str(&u->env[j]);
	u->envp[k] = NULL;
	return 0;
}

void hs_run_as_release(struct hs_run_as *u)
{
	free(u->name);
	free(u->groups);
	free(u->envp);
	for (size_t j = 0; j < HS_ARRAY_SIZE(u->env); j++)
		hs_strbuf_release(&u->env[j]);
	memset(u, 0, sizeof(*u));
}

void hs_run_as_apply(const struct hs_run_as *u, struct hs_record_opts *o)
{
	o->as_user = true;
	o->uid = u->uid;
	o->gid = u->gid;
	o->groups = u->groups;
	o->ngroups = u->ngroups;
	o->envp = u->envp;
}

int hs_record_duration_parse(const char *arg, double *ret)
{
	double d;

	if (hs_duration_parse(arg, 1, &d) || !(d > 0) || d > 1e7)
		return -EINVAL;
	*ret = d;
	return 0;
}

int hs_record_ring_pages_parse(const char *arg, size_t *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || !v || v > HS_RECORD_MAX_RING_PAGES || (v & (v - 1)))
		return -EINVAL;
	*ret = v;
	return 0;
}

const char *hs_record_targets_settle(struct hs_record_opts *o)
{
	static char line[160];
	const char *given = o->npids && o->ntids ? "-p and -t" : o->npids ? "-p" : "-t";

	if (!o->all_cpus || (!o->npids && !o->ntids))
		return NULL;
	/* perf: "PID/TID switch overriding CPU" (or SYSTEM) */
	snprintf(line, sizeof(line), "%s %s %s: only the given %s recorded, on every CPU, as perf does", given,
		 o->npids && o->ntids ? "override" : "overrides", o->cpu_list ? "-C" : "-a",
		 o->npids && o->ntids ? "processes and threads are"
		 : o->ntids           ? "threads are"
				      : "processes are");
	o->all_cpus = false;
	o->cpu_list = NULL;
	return line;
}

int hs_record_pids_add(struct hs_record_pids *pids, const char *list)
{
	const char *p = list;
	size_t n0 = pids->n;

	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 0x3fffffff || (*end && *end != ',')) {
			pids->n = n0;
			return -EINVAL;
		}
		hs_vec_push(pids, (int32_t)v);
		p = *end ? end + 1 : end;
	}
	return 0;
}
