/* A live recording with the perf_event backend: targets (a command started for the purpose,
 * running processes and all their threads, or every online CPU), one ring buffer per CPU
 * drained with epoll, records merged into time order and handed on parsed. Prints nothing:
 * errors come back as an errno, a cause and a detail, which the CLI words. */
#ifndef HS_SESSION_H
#define HS_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/jitdump.h"
#include "format/perf-event.h"
#include "record/callgraph.h"
#include "record/events.h"
#include "format/queue.h"
#include "record/ring.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* Records drained from the rings and not yet handed on, at most (bytes): past it the reader
 * leaves them in the rings, where the kernel counts what no longer fits as lost, so that a
 * recording whose processing cannot keep up holds bounded memory (docs/limits.md). The rings
 * hold as much again (16 MiB a CPU by default), outside the process's memory; an agent's whole
 * budget is 64 MiB (docs/continuous.md). */
#define HS_RECORD_MAX_BACKLOG ((uint64_t)16 << 20)

struct hs_record_opts {
	char **argv;                        /* command to start, or NULL */
	const int32_t *pids;                /* processes to attach to */
	size_t npids;
	bool all_cpus;                      /* -a */
	const char *cpu_list;               /* -C: only these CPUs ("0-1,3"; all_cpus set too) */
	const int32_t *tids;                /* -t: threads to attach to (not their processes) */
	size_t ntids;
	double duration;                    /* seconds; 0 = until the targets end or a signal */
	const struct hs_event_desc *event;
	uint32_t freq;                      /* samples per second (per CPU or thread) */
	uint64_t period;                    /* or: one sample every period events */
	enum hs_callgraph callgraph;
	uint32_t stack_bytes;               /* HS_CG_STACK: bytes of user stack copied per sample */
	bool kernel;                        /* kernel frames in chains */
	bool lbr_repair;                    /* HS_CG_FP, HS_CG_STACK on a hardware event: also the
	                                     * CPU's last-branch records in call-stack mode where it
	                                     * has them (left out where it does not), to repair the
	                                     * leaf frames of frame-pointer walks */
	size_t mmap_pages;                  /* data pages per ring (a power of two); 0 =
	                                     * hs_callgraph_ring_pages() */
	uint32_t max_stack;                 /* chain length cap; 0 = the kernel's maximum */
	bool off_cpu;                       /* also a context-switch event per target: a sample with
	                                     * the stack of every switch-out, and the switch records
	                                     * (PERF_RECORD_SWITCH*) that say when threads run again */
	/* record --user: the command runs as this user (its groups set, then its gid and uid, in
	 * the child before exec) while the recording stays ours */
	bool as_user;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;                /* supplementary groups, ngroups of them */
	size_t ngroups;
	char **envp;                        /* the command's environment; NULL: ours */
	/* The frames of the runtimes that have a store here (Python, Java): read at each sample by
	 * each runtime's BPF program, for every process of it, what names them read into its store
	 * (the caller owns them); NULL: none */
	struct hs_rt_names *rt_names;
	bool switch_signal; /* SIGUSR2 asks for the next period (the sink's tick) */
};

/* -d DURATION: seconds, or a number with a unit (500ms, 2s, 5m, 1h), over 0 and at most 1e7
 * seconds, into ret. Returns 0 or -EINVAL. */
int hs_record_duration_parse(const char *arg, double *ret);

/* -m N: data pages per ring, a power of two from 1 to HS_RECORD_MAX_RING_PAGES, into ret.
 * Returns 0 or -EINVAL. */
int hs_record_ring_pages_parse(const char *arg, size_t *ret);

/* -p PID[,PID...]: the processes to attach to, laid out as HS_VEC(int32_t). */
struct hs_record_pids {
	int32_t *v;
	size_t n, cap;
};
/* Appends the pids of list "1,2,3" (each from 1 to 0x3fffffff, the most a thread id can be) to
 * pids. Returns 0, or -EINVAL for a malformed list, with pids as it was. */
int hs_record_pids_add(struct hs_record_pids *pids, const char *list);
/* As perf: threads named by -p or -t (o->npids, o->ntids) are recorded on every CPU, and -a
 * and -C are dropped from o. Returns what was dropped, as a line for a person ("-p overrides
 * -a: ..."), or NULL when nothing was. */
const char *hs_record_targets_settle(struct hs_record_opts *o);

/* A CPU list as perf and /sys/devices/system/cpu/online write it, "0-3,5,7-8". */
struct hs_record_cpus {
	int *v;
	size_t n, cap;
};
/* Appends the CPUs of list (each from 0 to HS_RECORD_MAX_CPU, ranges low to high, a newline at
 * the end allowed) to cpus in the list's order. Returns 0, or -EINVAL for a malformed list,
 * with cpus as it was. */
#define HS_RECORD_MAX_CPU 65535
int hs_record_cpus_add(struct hs_record_cpus *cpus, const char *list);

/* record --user: the user a command is run as, looked up with its groups, and the command's
 * environment: ours with HOME, USER and LOGNAME the user's, as runuser and su set them. */
struct hs_run_as {
	char *name; /* the user's name */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	char **envp;             /* borrows environ's strings, and env's */
	struct hs_strbuf env[3]; /* HOME=, USER=, LOGNAME= */
};

/* Looks user up (a name, or a uid). Returns 0; -ENOENT when there is no such user, -EPERM when
 * it is another user and we are not root (name is filled in then). Release with
 * hs_run_as_release() either way. */
int hs_run_as_init(struct hs_run_as *u, const char *user);
void hs_run_as_release(struct hs_run_as *u);
/* Makes o's command run as u, which is borrowed and must outlive the recording. */
void hs_run_as_apply(const struct hs_run_as *u, struct hs_record_opts *o);

/* Which event of a recording a sample comes from (hs_record_event_index()). */
enum hs_record_event {
	HS_REC_EVENT_MAIN = 0, /* the event asked for with -e */
	HS_REC_EVENT_OFF_CPU,  /* the context-switch event of --off-cpu */
};

/* What failed, for the CLI to word with the advice it gives a person, and to choose its exit
 * status by. The detail of each says only what was found. */
enum hs_record_failure {
	HS_RECORD_FAILED = 0,        /* the detail says it all */
	HS_RECORD_NO_PERMISSION,     /* perf_event_open refused one's own process:
	                              * kernel.perf_event_paranoid over 2: "no permission to use
	                              * perf_event_open (kernel.perf_event_paranoid is N; ...)" */
	HS_RECORD_NO_PERMISSION_CPU, /* ... every CPU (-a, -C), paranoid over 0: "no permission to
	                              * record every CPU (kernel.perf_event_paranoid is N; ...)" */
	HS_RECORD_NOT_YOURS,         /* ... a process the ptrace check refuses, another user's or
	                              * not dumpable, which no paranoid value allows: "no
	                              * permission to record process N: ..." */
	HS_RECORD_DENIED,            /* ... though paranoid allows it (a security module ...) */
	HS_RECORD_NO_LBR,            /* HS_CG_LBR: no last-branch records in call-stack mode; the
	                              * detail is empty, or says why not ("this machine has ...") */
	HS_RECORD_EVENT_UNSUPPORTED, /* the event cannot be sampled here: "event 'E' ..." */
	HS_RECORD_FREQ_TOO_HIGH,     /* o.freq: "above the kernel's limit (...)" */
	HS_RECORD_TOO_MANY_FILES,    /* out of file descriptors */
	HS_RECORD_OFF_CPU_NO_KERNEL, /* o.off_cpu without kernel samples: "kernel.perf_event_paranoid
	                              * is N" */
	HS_RECORD_OFF_CPU_EVENT,     /* o.off_cpu: "cannot open the context-switch event" (code: why) */
	HS_RECORD_RING_LOCKED,       /* rings over what this user may lock: "-m N (...) is more than
	                              * this user may lock for rings: ... allow -m M at most; -m N
	                              * takes kernel.perf_event_mlock_kb=K" */
	HS_RECORD_USER,              /* the command could not take the user (o.as_user) */
	HS_RECORD_EXEC,              /* the command could not be run (code -ENOENT: not found) */
	HS_RECORD_BAD_CPUS,          /* o.cpu_list: "invalid CPU list 'L' ..." or "CPU N is not
	                              * online (online: 0-1)" */
	HS_RECORD_NO_THREAD,         /* o.tids: "no such thread: N" */
	HS_RECORD_RING_SMALL,        /* o.mmap_pages too few to hold two samples: "-m 16 (64 KiB a
	                              * ring) is too small for two samples ... need -m 32 or more" */
};

struct hs_record_progress {
	uint64_t records, bytes, lost_records;
	double elapsed;
};

/* Where parsed events go. proc() is called for every process that was already running when
 * the recording started (to describe it from /proc) before any event of it. ending(), when not
 * NULL, is called once every event has been handed on, while the targets still run (before the
 * command is ended): the moment to ask them for what they know (a JVM's perf map). */
struct hs_record_sink {
	void (*event)(void *ctx, const struct hs_perf_event *ev);
	void (*proc)(void *ctx, int32_t pid);
	void (*progress)(void *ctx, const struct hs_record_progress *p); /* about once a second */
	void *ctx;
	void (*ending)(void *ctx);
	/* when not NULL: called at least every quarter of a second while the recording runs,
	 * after the events that came were handed on; switch_asked: a SIGUSR2 came
	 * (hs_record_opts.switch_signal). Returns the nanoseconds until it wants to be called
	 * again (sooner than a quarter of a second: then), or UINT64_MAX. */
	uint64_t (*tick)(void *ctx, bool switch_asked);
};

enum hs_stop_cause {
	HS_CAUSE_NONE = 0,
	HS_CAUSE_COMMAND_EXITED,
	HS_CAUSE_TARGETS_EXITED,
	HS_CAUSE_DURATION,
	HS_CAUSE_SIGNAL,
	HS_CAUSE_ASKED, /* hs_record_stop() */
};

/* A thread's name read when it was attached (-p): a process that ends before the recording
 * starts reading /proc still has its threads named. */
struct hs_attach_comm {
	int32_t pid, tid;
	char comm[16];
};

struct hs_capture {
	int32_t pid;
	uint64_t start, end, time;
	int fd;
};

/* A record drained from a ring, on its way from the reader thread to the main thread: a copy
 * (rec), or a reference to a record left in its ring (ref, see held.c); neither marks the end of
 * a drain round. */
struct hs_drained {
	uint64_t time;
	struct perf_event_header *rec;
	uint64_t ref;
};

/* A record left in its ring for the main thread to copy when it comes to it (held.c). */
struct hs_held {
	uint64_t pos;
	uint32_t size;
	uint8_t state;                  /* HS_HELD_* */
	struct perf_event_header *copy; /* the reader's, when spilled */
};

enum { HS_HELD_WAITING, HS_HELD_TAKEN, HS_HELD_SPILLED, HS_HELD_DONE };

struct hs_record_ring {
	int fd;
	int cpu;
	void *base;
	size_t len;
	struct hs_ring ring;
	/* the records scanned and not yet given back, in ring order (a circular list): the reader
	 * adds, the main thread takes, either may give space back; under lock */
	pthread_mutex_t lock;
	struct hs_held *held;
	size_t held_first, held_n, held_cap, held_released;
	uint64_t held_seq; /* the sequence number of held[held_first] */
	bool sideband;     /* a side-band ring (sideband.c): its records copied out as read */
};

struct hs_record {
	struct hs_record_opts o;
	struct perf_event_attr attr;
	struct perf_event_attr attr_off_cpu; /* o.off_cpu: same layout as attr */
	/* side-band records (mmap, comm, task) on an event of their own, a dummy: where the kernel
	 * counts the records each event lost (PERF_FORMAT_LOST), the sampling events' counts are
	 * then samples alone (lost.c); with -a, on rings of their own (sideband.c) */
	struct perf_event_attr attr_side;
	bool side_apart;                     /* the side-band comes from attr_side */
	bool lost_counted;                   /* each event's lost records counted (PERF_FORMAT_LOST) */
	HS_VEC(int) side_fds;                /* in fds too */
	uint64_t lost_seen;                  /* lost_records when the counts were last read */
	uint64_t lost_samples, lost_side;    /* ... and what they said */
	struct hs_u64map off_cpu_ids;        /* sample ids of the off-CPU events */
	struct hs_perf_layout layout;
	int time_pos; /* of a sample's time in the layout (hs_perf_time_pos_sample()) */
	struct hs_record_cpus cpus;
	HS_VEC(int) fds;
	HS_VEC(struct hs_record_ring) rings;
	HS_VEC(int32_t) tids; /* threads with events of their own (-p) */
	HS_VEC(struct hs_attach_comm) attach_comms;
	HS_VEC(int) pidfds;   /* one per -p target, -1 once it exited */
	HS_VEC(struct hs_capture) captures; /* under lock */
	struct hs_queue queue;
	int epfd, sigfd, timerfd;
	/* A reader thread drains the rings into inbox, so that slow processing on the main
	 * thread (loading a large symbol table) never lets a ring overflow. */
	pthread_t reader;
	bool reader_running;
	pthread_mutex_t lock;
	HS_VEC(struct hs_drained) inbox;    /* under lock */
	int ring_epfd;                      /* the reader's: ring fds and stop_fd */
	int wake_fd;                        /* eventfd: the reader has put records in inbox */
	int stop_fd;                        /* eventfd: the reader drains once more and ends */
	struct hs_error reader_perr;
	uint8_t *take_buf;                  /* the main thread's copy of a record left in its ring */
	size_t take_cap;
	struct {                            /* a sample being handed on from where it is (held.c) */
		bool active;
		struct hs_record_ring *ring;
		uint64_t seq;
		const struct perf_event_header *rec;
		struct hs_perf_event *ev;
	} taking;
	uint64_t spilled;                   /* records the reader copied out of a filling ring */
	pid_t child;
	int child_status;
	bool child_exited;
	bool child_killed_by_us;
	int go_fd, err_fd;
	bool user_only;       /* kernel samples were refused: recording user space only */
	bool pages_explicit;  /* the ring size was asked for (-m) */
	enum hs_stop_cause cause;
	int stop_signal;
	uint64_t records, bytes, lost_records, bad_records; /* written by the reader thread */
	uint64_t backlog;     /* bytes drained and not yet handed on (atomic) */
	uint64_t start_ns;
	uint64_t stop_ns; /* when the events were disabled (CLOCK_MONOTONIC, as event times) */
	struct hs_tsc_conv tsc; /* the TSC to our clock (jitdump architecture timestamps), when known */
	const struct hs_record_sink *sink;
	struct hs_error perr;
	struct hs_record_rt *rt; /* o.rt_names: runtimes.c */
	struct hs_record_fair *fair; /* the reader's budgets per process: fair.c */
	uint64_t left_out, resyncs;  /* records fair.c left out, processes it had read again (atomic) */
	uint64_t sideband_lost;      /* side-band records the kernel could not write (atomic) */
};

/* Sets up everything (starts the command, stopped before exec; opens the events). Returns 0 or
 * a negative errno with err filled in. r must be closed with hs_record_close() either way. */
int hs_record_open(struct hs_record *r, const struct hs_record_opts *o, struct hs_error *err);
/* Runs until the targets end, the duration passes, or SIGINT/SIGTERM arrive (which the caller
 * must have blocked: see hs_record_block_signals()). Every record is handed to sink. Returns 0
 * or a negative errno with err filled in. */
int hs_record_run(struct hs_record *r, const struct hs_record_sink *sink, struct hs_error *err);
void hs_record_close(struct hs_record *r);
/* From the sink's tick (the main thread): the recording ends after it, as at its duration. */
void hs_record_stop(struct hs_record *r);

/* A copy (owned by the caller: free()) of rec, parsed into ev, as the recording keeps records
 * it reads from the rings: a sample's stack copy cut to what the kernel filled of it and a word
 * more (its dynamic size stays below its size when the kernel ended the copy early). */
struct perf_event_header *hs_record_copy(const struct perf_event_header *rec, const struct hs_perf_event *ev);
/* The same copy into *buf (grown as needed, *cap its size); with no_stack, without the user
 * stack at all (an empty one). */
struct perf_event_header *hs_record_copy_into(const struct perf_event_header *rec, const struct hs_perf_event *ev,
					      uint8_t **buf, size_t *cap, bool no_stack);

/* Blocks SIGINT, SIGTERM and SIGCHLD (and SIGUSR2 with switch_signal) so that hs_record_run()
 * receives them on a signalfd.
 * Call before hs_record_open(). */
void hs_record_block_signals(bool switch_signal);

/* A descriptor on the file mapped at [start, end) in pid, taken from what was captured while
 * the mapping existed, or opened now through /proc/PID/map_files; -1 if neither works. The
 * caller owns it. Signature fits struct hs_builder_opts.capture. */
int hs_record_capture(void *record, int32_t pid, uint64_t start, uint64_t end);

/* Whether the events' times are CLOCK_MONOTONIC, the clock other sources (jitdump) stamp their
 * records with: the kernel may refuse to be asked for a clock. */
bool hs_record_times_monotonic(const struct hs_record *r);

/* The event a sample with this id (PERF_SAMPLE_IDENTIFIER) belongs to. */
enum hs_record_event hs_record_event_index(const struct hs_record *r, uint64_t id);
/* Says how -d ended the recording, in words for a person ("stopped after 2 s (-d), and
 * stopped the command (pid 12) as perf does"): false where it ended otherwise. */
struct hs_strbuf;
bool hs_record_duration_words(const struct hs_record *r, struct hs_strbuf *sb);

/* The status a recording ends with, as a shell reports a command's: 128 + the signal when
 * SIGINT or SIGTERM ended it (130 for Ctrl-C, 143 for kill; the command, if any, is ended
 * too), else the command's own (0 when the duration ended it, or there is none). */
int hs_record_command_status(const struct hs_record *r);

/* Whether the samples the kernel could not write are counted apart from the side-band records
 * (Linux 6.0 on: each event's count, PERF_FORMAT_LOST, with the side-band on an event of its
 * own): then the sink was handed them as PERF_RECORD_LOST_SAMPLES events as the recording went,
 * the last at its end, and hs_record_lost_side() is the side-band records lost. Otherwise only
 * the PERF_RECORD_LOST records say how many records of any kind were lost. */
bool hs_record_counts_lost(const struct hs_record *r);
uint64_t hs_record_lost_side(const struct hs_record *r);

/* The ring size (data pages per CPU, a power of two) to suggest when samples were lost: twice
 * what the recording had, and at least the default for its call graph (room for 256 samples,
 * hs_callgraph_ring_pages()), at most HS_RECORD_MAX_RING_PAGES, and at most what this user may
 * lock (hs_record_ring_fit()); 0 when no ring bigger than the recording's fits. */
#define HS_RECORD_MAX_RING_PAGES (1UL << 20)
size_t hs_record_bigger_ring(const struct hs_record *r);

/* What perf_mmap() lets this process lock for rings: nothing limits it with CAP_IPC_LOCK or
 * kernel.perf_event_paranoid -1, or RLIMIT_MEMLOCK unlimited; else kernel.perf_event_mlock_kb
 * on each online CPU (for all of the user's rings together) and, past it, RLIMIT_MEMLOCK. */
struct hs_ring_limit {
	bool limited;
	uint64_t mlock_kb;   /* kernel.perf_event_mlock_kb */
	unsigned cpus;       /* online */
	uint64_t memlock_kb; /* RLIMIT_MEMLOCK */
	uint64_t pages;      /* both, in pages */
};
void hs_record_ring_limit(struct hs_ring_limit *ret);
/* The most data pages (a power of two, 0 for none) each of rings rings may have within l, no
 * other ring of the user's being mapped. */
size_t hs_record_ring_fit(const struct hs_ring_limit *l, size_t rings);
/* kernel.perf_event_paranoid (2 where it cannot be read). */
int hs_record_paranoid(void);

/* The frames of runtime id (HS_RT_*, o.rt_names): whether its frame reader runs (it is loaded
 * when the first process of it is found), and the same in words for a person ("frame reader not
 * loaded: no Python process seen"; NULL when the runtime is not read); the next line for a
 * person about what a reader could not do (no permission, an unsupported version) not returned
 * before, or NULL, both valid until hs_record_close(); and the stacks it had no room for. */
bool hs_record_runtime_active(const struct hs_record *r, unsigned id);
const char *hs_record_runtime_reader(const struct hs_record *r, unsigned id);
const char *hs_record_runtime_note(const struct hs_record *r);
uint64_t hs_record_runtime_dropped(const struct hs_record *r, unsigned id);
/* Whether runtime id's reader reads the frames of process pid now. */
bool hs_record_runtime_reads(const struct hs_record *r, unsigned id, int32_t pid);

#endif
