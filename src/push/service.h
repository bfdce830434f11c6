/* The service a process belongs to, as a fleet's profile store names series (record --push with
 * -a: a series per service), from what an unprivileged process cannot choose: its systemd unit
 * or container (its cgroup), else its program (the file it runs); its command name only when
 * asked for. What a user named themselves is named with their uid. docs/continuous.md, Series. */
#ifndef HS_SERVICE_H
#define HS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "format/perf-event.h"
#include "profile/profile.h"
#include "util/hashmap.h"
#include "util/util.h"

/* Series pushed per period: past it, the services that rank last (below) are pushed together
 * as one series, HS_SERVICE_OTHER. */
#define HS_SERVICE_MAX_SERIES 100
#define HS_SERVICE_OTHER "other-services"
/* Processes whose service is remembered from their fork or first sample on (between groupings):
 * past it, a process's service is read when its period is grouped. */
#define HS_SERVICE_MAX_PROCS 65536

enum hs_series_by {
	HS_SERIES_BY_SERVICE = 0, /* unit, container, else program (the default) */
	HS_SERIES_BY_COMM,        /* unit, container, else the command name any process sets */
};
/* "service" or "comm": 0, else -EINVAL. */
int hs_series_by_parse(const char *s, enum hs_series_by *ret);

/* Who chose a service's name, in the order the cap on series keeps them (then the most samples
 * first, then by name): nothing a user does can push a system unit out. */
enum hs_service_rank {
	HS_SERVICE_SYSTEM = 0, /* root: a system unit, a container, the kernel's threads */
	HS_SERVICE_PROGRAM,    /* a program in directories only root can write */
	HS_SERVICE_USER,       /* a user: their units, containers, programs; command names; unknown */
};

/* What the cgroup path path (a line of /proc/PID/cgroup after its second ':') says: *uid, the
 * user whose slice holds it (user.slice/user-UID.slice: their sessions and their own units),
 * -1 for none (root's slice is none); returns true with the series name of its unit or
 * container in buf: a systemd service's unit name without .service and a template's instance
 * (system.slice/nginx.service, getty@tty1.service: nginx, getty), the first one from the root
 * (a unit's own sub-cgroups name nothing), or a container's runtime and the first 12
 * characters of its id (docker-0123456789ab; also cri-containerd, crio, libpod), with
 * "user-UID." before it in a user's slice. False when it names neither. */
bool hs_service_of_cgroup(const char *path, int64_t *uid, char *buf, size_t cap);

/* The series name of a program, into buf: path is where the process runs it from (as
 * /proc/PID/exe or the kernel's records name it, perhaps with " (deleted)"); running the file
 * it runs (its identity and owner), NULL when not known; uid the user whose slice holds the
 * process (-1: none). Its file name alone (/usr/sbin/nginx: nginx, rank PROGRAM) where uid is
 * -1 and path is the very file running, in directories that root owns and no one else can
 * write; else "user-UID." before it (rank USER), UID the slice's user, or the file's owner:
 * /home/u/nginx is user-1000.nginx. "unknown" when running is NULL. */
void hs_service_of_program(const char *path, const struct stat *running, int64_t uid, char *buf, size_t cap,
			   enum hs_service_rank *rank);

/* The service of process pid by the rule by, into buf, read from /proc now; comm where pid is
 * 0 or less (the name given, made fit). Characters a series name cannot hold become _. */
void hs_service_of(int32_t pid, enum hs_series_by by, const char *comm, char *buf, size_t cap);

/* What the recording knows of a process /proc no longer has (see proc_of below). */
struct hs_service_proc {
	const char *exe;   /* its program's path as the kernel named it, or NULL */
	int exe_fd;        /* a descriptor on that very file, or -1 */
	uint32_t maj, min; /* the file's device and inode from the kernel's records, ino 0 if none */
	uint64_t ino;
	const uint8_t *build_id; /* else its build-id from the kernel's records (size 0: none) */
	size_t build_id_size;
	const char *comm; /* its name, or NULL */
};

struct hs_service_entry {
	int32_t pid, ppid; /* ppid: its parent when it forked, 0 unknown */
	uint32_t name;     /* its series name, index in names + 1; 0 until read */
	uint32_t unit;     /* its cgroup's unit or container series name, index + 1; 0 none */
	int64_t uid;       /* the user whose slice holds it, -1 none */
	int64_t start_ns;  /* when it started (CLOCK_BOOTTIME, as /proc/PID/stat's), 0 unknown */
	uint8_t rank;      /* enum hs_service_rank of name */
	bool cgroup_known; /* unit and uid read (or its parent's) */
	bool exited;
	bool touched; /* forked, sampled or grouped since the last grouping */
};

/* The services of the processes the recording sees, by pid: each read while its process runs
 * (at its first sample, and again after an exec), so that a short-lived process is named by
 * what it was, not by what is left of it; kept for the live ones. All zero is a table of the
 * default rule, with no proc_of. Not thread-safe. */
struct hs_service_cache {
	enum hs_series_by by;
	/* For a process gone from /proc before its first sample was seen: what the recording knows
	 * of it (its program, its name), or NULL. ret comes zeroed, exe_fd -1. */
	void (*proc_of)(void *ctx, int32_t pid, struct hs_service_proc *ret);
	void *ctx;
	struct hs_u64map ix; /* pid -> index in procs + 1 */
	HS_VEC(struct hs_service_entry) procs;
	HS_VEC(char *) names;
	struct hs_index names_ix;
	size_t folded; /* services the last grouping pushed as HS_SERVICE_OTHER */
	/* where the events' times are CLOCK_MONOTONIC (hs_service_cache_clock()): CLOCK_BOOTTIME
	 * less CLOCK_MONOTONIC, for the start of a process from the time of its fork */
	bool fork_starts;
	int64_t boot_offset_ns;
};
/* The events' times are CLOCK_MONOTONIC: a forked process's start is known from its fork, so
 * that a pid the kernel gave to another process since is not read as the one that forked. */
void hs_service_cache_clock(struct hs_service_cache *c);
/* An event of the recording, in time order (fork, exec, exit, sample): a new process's parent,
 * a process's service read at its first sample. */
void hs_service_cache_event(struct hs_service_cache *c, const struct hs_perf_event *ev);
/* A process running when the recording starts: its cgroup read now, for its samples once it
 * is gone (its fork was before the recording's events). */
void hs_service_cache_proc(struct hs_service_cache *c, int32_t pid);
/* The service of process pid by c's rule, into buf (read now where c does not have it). */
void hs_service_cache_name(struct hs_service_cache *c, int32_t pid, const char *comm, char *buf, size_t cap);
void hs_service_cache_release(struct hs_service_cache *c);

struct hs_service_group {
	char *name;
	int32_t *pids;
	size_t npids;
};
struct hs_service_groups {
	struct hs_service_group *v;
	size_t n;
};
/* The processes of p's samples, grouped by service, at most HS_SERVICE_MAX_SERIES groups and
 * HS_SERVICE_OTHER (c->folded says how many it holds). Then c forgets the processes that have
 * exited. */
void hs_service_group(struct hs_service_cache *c, const struct hs_profile *p, struct hs_service_groups *ret);
void hs_service_groups_release(struct hs_service_groups *g);

#endif
