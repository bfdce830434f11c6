/* The HotSpot attach protocol on Linux (src/hotspot/os/linux/attachListener_linux.cpp in
 * OpenJDK): the JVM's listener is started by the trigger file and SIGQUIT; a request is
 * "<version>\0<command>\0<arg>\0<arg>\0<arg>\0" with version 1 and three arguments (empty ones
 * too); the answer is the result code as a decimal line, then the command's output. jcmd's
 * requests are the command "jcmd" with the diagnostic command line as first argument. */
#include "jvm.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/util.h"

#define REPLY_MAX 65536

struct jvm_proc {
	int32_t pid, nspid;
	uint32_t euid, egid;
	uint64_t sigcgt;
};

bool hs_jvm_is_hotspot(int32_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		size_t n = strlen(line);
		while (n && line[n - 1] == '\n')
			line[--n] = '\0';
		found = n >= 10 && !strcmp(line + n - 10, "/libjvm.so");
	}
	free(line);
	fclose(f);
	return found;
}

static int read_status(struct jvm_proc *j)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int got = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)j->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	j->nspid = j->pid;
	while (getline(&line, &cap, f) > 0) {
		unsigned int r, e;
		unsigned long long m;
		if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
			j->euid = e;
			got |= 1;
		} else if (sscanf(line, "Gid: %u %u", &r, &e) == 2) {
			j->egid = e;
			got |= 2;
		} else if (sscanf(line, "SigCgt: %llx", &m) == 1) {
			j->sigcgt = m;
			got |= 4;
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');
			long v = last ? strtol(last + 1, NULL, 10) : 0;
			if (v > 0 && v <= INT32_MAX)
				j->nspid = (int32_t)v;
		}
	}
	free(line);
	fclose(f);
	return got == 7 ? 0 : -EPROTO;
}

/* Whether "-XX:+DisableAttachMechanism" is the last word on it in the NUL-separated (sep '\0') or
 * space-separated (sep ' ') words of buf; *off is left as it is when neither form is there. */
static void scan_attach_flag(const char *buf, size_t n, char sep, bool *off)
{
	for (size_t i = 0; i < n;) {
		const char *arg = buf + i;
		const char *end = memchr(arg, sep, n - i);
		size_t len = end ? (size_t)(end - arg) : n - i;
		if (len == 27 && !memcmp(arg, "-XX:+DisableAttachMechanism", 27))
			*off = true;
		else if (len == 27 && !memcmp(arg, "-XX:-DisableAttachMechanism", 27))
			*off = false;
		i += len + 1;
	}
}

/* Reads up to cap - 1 bytes of /proc/PID/NAME into buf; returns how many (0 on failure). */
static size_t read_proc(int32_t pid, const char *name, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, cap - 1);
	close(fd);
	return n > 0 ? (size_t)n : 0;
}

/* Whether attach is off: on the command line, or in the options the JVM takes from its
 * environment (JAVA_TOOL_OPTIONS and the launcher's JDK_JAVA_OPTIONS come before the command
 * line, _JAVA_OPTIONS after it) — else the listener would be waited for in vain. */
static bool attach_disabled(int32_t pid)
{
	static const char *const before[] = {"JAVA_TOOL_OPTIONS=", "JDK_JAVA_OPTIONS="};
	const size_t cap = 65536;
	char *env = malloc(cap), *cmdline = malloc(cap);
	const char *after = NULL;
	size_t n, after_len = 0;
	bool off = false;

	if (!env || !cmdline)
		goto out;
	n = read_proc(pid, "environ", env, cap);
	for (size_t i = 0; i < n;) {
		const char *var = env + i;
		size_t len = strnlen(var, n - i);
		for (size_t k = 0; k < HS_ARRAY_SIZE(before); k++)
			if (!strncmp(var, before[k], strlen(before[k])))
				scan_attach_flag(var + strlen(before[k]), len - strlen(before[k]), ' ', &off);
		if (len >= 14 && !strncmp(var, "_JAVA_OPTIONS=", 14)) {
			after = var + 14;
			after_len = len - 14;
		}
		i += len + 1;
	}
	scan_attach_flag(cmdline, read_proc(pid, "cmdline", cmdline, cap), '\0', &off);
	if (after)
		scan_attach_flag(after, after_len, ' ', &off);
out:
	free(env);
	free(cmdline);
	return off;
}

/* Whether the process still runs: not gone, not a zombie. */
static bool alive(int32_t pid)
{
	char buf[512], *paren;
	size_t n = read_proc(pid, "stat", buf, sizeof(buf));

	if (!n)
		return false;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Set while the asker's request in flight is to end at once: the recording was stopped by a
 * signal the main thread took (so it is no longer pending). */
static int cancel_asking;

/* Whether the user asked hotstack to stop: a stop signal pending, or taken and passed on. */
static bool stopping(void)
{
	return hs_stop_signal_pending() || __atomic_load_n(&cancel_asking, __ATOMIC_RELAXED);
}

/* Whether to give up waiting: the deadline passed, or the user asked hotstack to stop (the
 * map is a nicety; the recording's outputs are not held for it). */
static bool give_up(uint64_t deadline)
{
	return now_ms() >= deadline || stopping();
}

/* Polls fd for events until the deadline, a stop signal, or an event: poll's result. */
static int poll_until(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = {fd, events, 0};
		uint64_t now = now_ms();
		int n;
		if (give_up(deadline))
			return 0;
		n = poll(&pfd, 1, (int)HS_MIN(deadline - now, 50));
		if (n != 0 && !(n < 0 && errno == EINTR))
			return n;
	}
}

static bool is_socket(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Writes all of buf, or fails. */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t k = write(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -errno;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Opens /proc/PID/WHERE as a directory and creates the attach trigger NAME in it: new (then
 * *created), or one already there as a regular file (another client's, which triggers as well:
 * it is left to that client to remove); never opens what else is planted there (a FIFO would
 * block, a device have side effects). Returns the directory's fd, or -errno. */
static int open_trigger_dir(int32_t pid, const char *where, const char *name, bool *created)
{
	char path[64];
	struct stat st;
	int dir, fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, where);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	*created = fd >= 0;
	if (fd >= 0) {
		close(fd);
		return dir;
	}
	if (errno == EEXIST && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		return dir;
	fd = errno == EEXIST ? -EEXIST : -errno;
	close(dir);
	return fd;
}

/* The exchange itself, as the JVM's user: starts the listener when needed, sends the request,
 * and reads the answer. */
static int exchange(const struct jvm_proc *j, uint64_t deadline, struct hs_error *err)
{
	static const char request[] = "1\0jcmd\0Compiler.perfmap\0\0"; /* + the literal's own NUL */
	char sock_path[128], reply[REPLY_MAX + 1];
	struct sockaddr_un sa = {0};
	size_t got = 0;
	int fd, rc;
	long code;
	char *end;

	snprintf(sock_path, sizeof(sock_path), "/proc/%d/root/tmp/.java_pid%d", (int)j->pid, (int)j->nspid);
	if (!is_socket(sock_path)) {
		char trigger[32];
		bool created;
		int dir;
		/* SIGQUIT to a JVM that does not catch it (-Xrs) would end it */
		if (!(j->sigcgt & (1ull << (SIGQUIT - 1))))
			return hs_error_set(err, -EOPNOTSUPP, "it does not handle SIGQUIT (-Xrs), so attach cannot be started");
		/* the trigger: in the working directory first, as the JVM looks, then in its /tmp; made
		 * and removed through the directory itself, which stays reachable when the JVM exits
		 * meanwhile (its /proc entry does not) */
		snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)j->nspid);
		dir = open_trigger_dir(j->pid, "cwd", trigger, &created);
		if (dir < 0)
			dir = open_trigger_dir(j->pid, "root/tmp", trigger, &created);
		if (dir < 0)
			return hs_error_set(err, dir, "cannot create its attach trigger file: %s", strerror(-dir));
		rc = kill(j->pid, SIGQUIT) < 0 ? -errno : 0;
		while (!rc && !is_socket(sock_path) && !give_up(deadline))
			if (alive(j->pid))
				sleep_ms(20);
			else
				rc = -ESRCH;
		if (created)
			unlinkat(dir, trigger, 0);
		close(dir);
		if (rc == -ESRCH)
			return hs_error_set(err, rc, "it exited before its attach listener started");
		if (rc)
			return hs_error_set(err, rc, "cannot signal it: %s", strerror(-rc));
		if (!is_socket(sock_path) && stopping())
			return hs_error_set(err, -ECANCELED, "given up: hotstack was asked to stop");
		if (!is_socket(sock_path))
			return hs_error_set(err, -ETIMEDOUT, "its attach listener did not start (attach disabled?)");
	}
	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return hs_error_set(err, -ENAMETOOLONG, "its socket path is too long");
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	/* non-blocking: a listener that never accepts (its backlog full) would hold a blocking
	 * connect for ever */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return hs_error_set(err, -errno, "cannot create a socket: %s", strerror(errno));
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		if ((rc == -EAGAIN || rc == -EINTR) && !give_up(deadline)) {
			sleep_ms(20);
			continue;
		}
		close(fd);
		if (rc == -EAGAIN && stopping())
			return hs_error_set(err, -ECANCELED, "given up: hotstack was asked to stop");
		if (rc == -EAGAIN)
			return hs_error_set(err, -ETIMEDOUT, "its attach socket accepts no connection");
		return hs_error_set(err, rc, "cannot connect to its attach socket: %s", strerror(-rc));
	}
	/* a fresh connection has room for the short request */
	fcntl(fd, F_SETFL, 0);
	if ((rc = write_all(fd, request, sizeof(request)))) {
		close(fd);
		return hs_error_set(err, rc, "cannot send the request: %s", strerror(-rc));
	}
	/* the JVM answers when it is done, then closes */
	for (;;) {
		ssize_t k;
		if (poll_until(fd, POLLIN, deadline) <= 0) {
			close(fd);
			if (stopping())
				return hs_error_set(err, -ECANCELED, "given up: hotstack was asked to stop");
			return hs_error_set(err, -ETIMEDOUT, "no answer in time");
		}
		k = read(fd, reply + got, REPLY_MAX - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || (got += (size_t)k) == REPLY_MAX)
			break;
	}
	close(fd);
	reply[got] = '\0';
	code = strtol(reply, &end, 10);
	if (end == reply || *end != '\n')
		return hs_error_set(err, -EPROTO, "unexpected answer to the attach request");
	{
		/* jcmd's own failures (an unknown command: a JVM before 17) come back as text */
		const char *out = end + 1, *nl;
		if (code == 0 && !strstr(out, "Exception") && !strstr(out, "Unknown diagnostic command"))
			return 0;
		while (*out == '\n' || *out == ' ')
			out++;
		nl = strchr(out, '\n');
		if (strstr(out, "Unknown diagnostic command"))
			return hs_error_set(err, -EOPNOTSUPP, "it has no Compiler.perfmap (a JDK before 17)");
		return hs_error_set(err, -EPROTO, "Compiler.perfmap failed (%ld): %.*s", code,
			   (int)(nl ? (size_t)(nl - out) : strlen(out)), out);
	}
}

/* The exchange in a child process with the JVM's effective user and group: the JVM checks its
 * peer's credentials, which root outside a user namespace would not pass from inside it. */
static int exchange_as(const struct jvm_proc *j, uint64_t deadline, struct hs_error *err)
{
	int pipefd[2], status;
	pid_t child;
	char buf[512];
	ssize_t n;
	int32_t rc;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return hs_error_set(err, -errno, "cannot create a pipe: %s", strerror(errno));
	child = fork();
	if (child < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return hs_error_set(err, -errno, "cannot fork: %s", strerror(errno));
	}
	if (child == 0) {
		struct hs_error e = {0};
		size_t len;
		close(pipefd[0]);
		if (setgroups(0, NULL) < 0 || setresgid(j->egid, j->egid, j->egid) < 0 ||
		    setresuid(j->euid, j->euid, j->euid) < 0)
			rc = hs_error_set(&e, -EPERM, "cannot take its user %u: %s", (unsigned)j->euid, strerror(errno));
		else
			rc = exchange(j, deadline, &e);
		len = strnlen(e.detail, sizeof(buf) - sizeof(rc) - 1);
		memcpy(buf, &rc, sizeof(rc));
		memcpy(buf + sizeof(rc), e.detail, len);
		buf[sizeof(rc) + len] = '\0';
		if (write_all(pipefd[1], buf, sizeof(rc) + len + 1)) {
			/* the parent sees a short answer */
		}
		_exit(0);
	}
	close(pipefd[1]);
	n = 0;
	for (bool told = false;;) {
		struct pollfd pfd = {pipefd[0], POLLIN, 0};
		uint64_t now = now_ms(), until = told ? deadline : deadline + 500;
		ssize_t k;
		int ready;
		/* the child, which blocks SIGTERM as we do, sees it pending: it gives up as for a
		 * user's signal, removes its trigger file, and answers */
		if (!told && stopping()) {
			kill(child, SIGTERM);
			told = true;
			deadline = now + 500;
			continue;
		}
		if (now >= until)
			break;
		ready = poll(&pfd, 1, (int)HS_MIN(until - now, 50));
		if (ready == 0 || (ready < 0 && errno == EINTR))
			continue;
		if (ready < 0)
			break;
		k = read(pipefd[0], buf + n, sizeof(buf) - 1 - (size_t)n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += k;
	}
	close(pipefd[0]);
	if (waitpid(child, &status, WNOHANG) == 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	if (n < (ssize_t)sizeof(rc) && stopping())
		return hs_error_set(err, -ECANCELED, "given up: hotstack was asked to stop");
	if (n < (ssize_t)sizeof(rc))
		return hs_error_set(err, -ETIMEDOUT, "no answer in time");
	buf[n] = '\0';
	memcpy(&rc, buf, sizeof(rc));
	if (rc)
		hs_error_set(err, rc, "%s", buf + sizeof(rc));
	return rc;
}

int hs_jvm_request_perfmap(int32_t pid, int timeout_ms, struct hs_error *err)
{
	struct jvm_proc j = {pid, pid, 0, 0, 0};
	uint64_t deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 5000);
	int rc;

	if ((rc = read_status(&j)))
		return hs_error_set(err, rc == -ENOENT ? -ESRCH : rc, "cannot read its status");
	if (attach_disabled(pid))
		return hs_error_set(err, -EOPNOTSUPP, "attach is disabled (-XX:+DisableAttachMechanism)");
	if (geteuid() == 0 && j.euid != 0)
		return exchange_as(&j, deadline, err);
	return exchange(&j, deadline, err);
}

/* Each JVM gets JVM_WAIT_MS to answer, all of them JVM_WAIT_TOTAL_MS: processes that only look
 * like JVMs (a file named libjvm.so mapped) must not hold the end of a recording for long. */
#define JVM_WAIT_MS 10000
#define JVM_WAIT_TOTAL_MS 30000

int hs_jvm_request_perfmaps(const int32_t *pids, size_t n, hs_jvm_answer_fn *answer, void *ctx, size_t *left)
{
	uint64_t end = hs_now_ns() + (uint64_t)JVM_WAIT_TOTAL_MS * 1000000;

	for (size_t i = 0; i < n; i++) {
		uint64_t now = hs_now_ns();
		struct hs_error err = {0};
		int rc;

		if (stopping() || now >= end) {
			*left = n - i;
			return now >= end ? -ETIMEDOUT : -EINTR;
		}
		if (kill(pids[i], 0) < 0 || !hs_jvm_is_hotspot(pids[i]))
			continue;
		rc = hs_jvm_request_perfmap(pids[i], (int)HS_MIN((uint64_t)JVM_WAIT_MS, (end - now) / 1000000 + 1), &err);
		answer(ctx, pids[i], rc, &err);
	}
	return 0;
}

/* ---- the asker: perf maps asked for while the recording runs ---- */

/* A JVM is asked as soon as it has samples in JIT code that nothing names, and again whenever
 * more such code is sampled (new code compiled since its last map), but never sooner than
 * ASK_GAP_NS after its last request, nor sooner than ASK_COST_SHARE times that request's own
 * time: each request costs the JVM a dump of its whole code cache, which must stay a small share
 * of its time however large that cache grows. */
#define ASK_GAP_NS (1000000000ULL)
#define ASK_COST_SHARE 10

/* What makes a JVM write its perf map as it exits (a diagnostic option in JDK 17) */
#define AT_EXIT "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"

enum jvm_kind { JVM_UNKNOWN, JVM_NOT, JVM_HOTSPOT };

struct jvm_state {
	int32_t pid;
	enum jvm_kind kind;
	bool left;              /* hs_jvm_asker_leave(): another reader names its frames */
	uint64_t unnamed;       /* what the recording last said it has unnamed */
	uint64_t unnamed_asked; /* ... when it was last asked */
	uint64_t next;          /* not asked before (ns) */
	unsigned asked, written;
	bool at_end;   /* its last answer is the end's */
	int rc;        /* the last answer */
	char why[512]; /* the last failure's reason */
};

struct hs_jvm_asker {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running, quit, early;
	HS_VEC(struct jvm_state) jvms;
};

static struct jvm_state *state_of(struct hs_jvm_asker *a, int32_t pid)
{
	struct jvm_state s = {0};

	for (size_t i = 0; i < a->jvms.n; i++)
		if (a->jvms.v[i].pid == pid)
			return &a->jvms.v[i];
	s.pid = pid;
	hs_vec_push(&a->jvms, s);
	return &a->jvms.v[a->jvms.n - 1];
}

/* Whether a failure is the JVM's for good: asking again would only cost it (or us) time. */
static bool lasting(int rc)
{
	return rc == -EOPNOTSUPP || rc == -EPERM || rc == -ESRCH;
}

static void take_answer(struct jvm_state *s, int rc, const struct hs_error *err)
{
	s->asked++;
	s->rc = rc;
	if (rc)
		snprintf(s->why, sizeof(s->why), "%s", err->detail);
	else
		s->written++;
}

/* The next process due (to be told apart, or asked); NULL when none. Called with the lock held. */
static struct jvm_state *next_due(struct hs_jvm_asker *a, uint64_t now)
{
	for (size_t i = 0; i < a->jvms.n; i++) {
		struct jvm_state *s = &a->jvms.v[i];
		if (s->kind == JVM_NOT || s->left || s->unnamed <= s->unnamed_asked || now < s->next ||
		    (s->asked && s->rc && lasting(s->rc)))
			continue;
		if (s->kind == JVM_UNKNOWN || a->early)
			return s;
	}
	return NULL;
}

static void *asker_main(void *arg)
{
	struct hs_jvm_asker *a = arg;

	pthread_mutex_lock(&a->lock);
	while (!a->quit) {
		uint64_t now = hs_now_ns();
		struct jvm_state *s = next_due(a, now);
		struct hs_error err = {0};
		int32_t pid;
		size_t ix;
		enum jvm_kind kind;
		uint64_t took, unnamed;
		int rc;

		if (!s) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&a->wake, &a->lock, &ts);
			continue;
		}
		ix = (size_t)(s - a->jvms.v);
		pid = s->pid;
		kind = s->kind;
		unnamed = s->unnamed; /* what is sampled meanwhile may be newer than the map */
		pthread_mutex_unlock(&a->lock);
		if (kind == JVM_UNKNOWN)
			kind = hs_jvm_is_hotspot(pid) ? JVM_HOTSPOT : JVM_NOT;
		rc = 0;
		if (kind == JVM_HOTSPOT && a->early)
			rc = hs_jvm_request_perfmap(pid, JVM_WAIT_MS, &err);
		took = hs_now_ns() - now;
		/* a JVM that ends while asked fails in many ways (its socket, its directory gone):
		 * that it ended is the one reason that matters */
		if (rc && !alive(pid)) {
			err = (struct hs_error){0};
			rc = hs_error_set(&err, -ESRCH, "it exited while it was asked");
		}
		pthread_mutex_lock(&a->lock);
		s = &a->jvms.v[ix]; /* the vector may have moved meanwhile */
		s->kind = kind;
		if (kind != JVM_HOTSPOT || !a->early)
			continue;
		take_answer(s, rc, &err);
		s->unnamed_asked = unnamed;
		s->next = now + HS_MAX(ASK_GAP_NS, took * ASK_COST_SHARE);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int hs_jvm_asker_new(struct hs_jvm_asker **ret, bool early)
{
	struct hs_jvm_asker *a = hs_xcalloc(1, sizeof(*a));
	int rc;

	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	a->early = early;
	if ((rc = pthread_create(&a->thread, NULL, asker_main, a))) {
		hs_jvm_asker_free(a);
		return -rc;
	}
	a->running = true;
	*ret = a;
	return 0;
}

void hs_jvm_asker_seen(struct hs_jvm_asker *a, int32_t pid, uint64_t unnamed)
{
	struct jvm_state *s;

	pthread_mutex_lock(&a->lock);
	s = state_of(a, pid);
	if (unnamed > s->unnamed) {
		s->unnamed = unnamed;
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->lock);
}

void hs_jvm_asker_leave(struct hs_jvm_asker *a, int32_t pid)
{
	pthread_mutex_lock(&a->lock);
	state_of(a, pid)->left = true;
	pthread_mutex_unlock(&a->lock);
}

/* Stops the thread: its request in flight ends first, at once when cancel. */
static void stop_thread(struct hs_jvm_asker *a, bool cancel)
{
	if (!a->running)
		return;
	if (cancel)
		__atomic_store_n(&cancel_asking, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&a->lock);
	a->quit = true;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	a->running = false;
	__atomic_store_n(&cancel_asking, 0, __ATOMIC_RELAXED);
}

static void end_answer(void *ctx, int32_t pid, int rc, const struct hs_error *err)
{
	struct jvm_state *s = state_of(ctx, pid);

	s->kind = JVM_HOTSPOT;
	s->at_end = true;
	take_answer(s, rc, err);
}

int hs_jvm_asker_end(struct hs_jvm_asker *a, bool stopped, size_t *left)
{
	HS_VEC(int32_t) pids = {0};
	int rc = 0;

	*left = 0;
	stop_thread(a, stopped);
	for (size_t i = 0; i < a->jvms.n; i++) {
		struct jvm_state *s = &a->jvms.v[i];
		/* a JVM is asked again unless its last answer says asking is in vain (or took its
		 * whole time: the end is not held twice for it) */
		if (s->kind == JVM_NOT || s->left ||
		    (s->asked && s->rc && (lasting(s->rc) || s->rc == -ETIMEDOUT || s->rc == -ECANCELED)))
			continue;
		if (s->kind == JVM_UNKNOWN && kill(s->pid, 0) == 0)
			s->kind = hs_jvm_is_hotspot(s->pid) ? JVM_HOTSPOT : JVM_NOT;
		if (s->kind == JVM_HOTSPOT)
			hs_vec_push(&pids, s->pid);
	}
	if (pids.n)
		rc = hs_jvm_request_perfmaps(pids.v, pids.n, end_answer, a, left);
	hs_vec_free(&pids);
	return rc;
}

/* What to do about a JVM that could not be asked */
static const char *advice(const struct jvm_state *s)
{
	if (s->rc == -EPERM)
		return "run hotstack as root or as the JVM's user";
	if (s->rc == -ESRCH)
		return "record it with -p while it runs, or start it with " AT_EXIT;
	if (s->rc == -ECANCELED)
		return "let the recording end without a signal, or start the JVM with " AT_EXIT;
	if (strstr(s->why, "before 17"))
		return "run it on JDK 17 or later, or with a perf map agent";
	return "start it with " AT_EXIT ", or allow attaching";
}

bool hs_jvm_asker_why(const struct hs_jvm_asker *a, int32_t pid, double share, struct hs_strbuf *sb)
{
	const struct jvm_state *s = NULL;

	for (size_t i = 0; i < a->jvms.n && !s; i++)
		if (a->jvms.v[i].pid == pid)
			s = &a->jvms.v[i];
	if (!s || s->kind != JVM_HOTSPOT || s->left)
		return false;
	if (!s->asked) {
		hs_strbuf_addf(sb,
			       "cannot get Java method names from JVM %d: it exited before it could be asked for "
			       "its perf map (%.0f%% of its samples in unnamed JIT code): start it with " AT_EXIT,
			       (int)pid, share);
	} else if (s->rc && !s->written) {
		hs_strbuf_addf(sb,
			       "cannot get Java method names from JVM %d: %s (%.0f%% of its samples in unnamed JIT "
			       "code): %s",
			       (int)pid, s->why, share, advice(s));
	} else if (!s->at_end || s->rc) {
		hs_strbuf_addf(sb,
			       "%.0f%% of the samples of JVM %d are in JIT code its last perf map does not name "
			       "(it was not asked at the end: %s): start it with " AT_EXIT " for a complete map",
			       share, (int)pid, s->rc ? s->why : "it had exited");
	} else {
		hs_strbuf_addf(sb,
			       "%.0f%% of the samples of JVM %d are in JIT code its perf map does not name (code "
			       "freed or moved before the map was written at the end)",
			       share, (int)pid);
	}
	return true;
}

unsigned hs_jvm_asker_written(const struct hs_jvm_asker *a, int32_t pid)
{
	for (size_t i = 0; i < a->jvms.n; i++)
		if (a->jvms.v[i].pid == pid)
			return a->jvms.v[i].written;
	return 0;
}

void hs_jvm_asker_free(struct hs_jvm_asker *a)
{
	if (!a)
		return;
	stop_thread(a, true);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	hs_vec_free(&a->jvms);
	free(a);
}
