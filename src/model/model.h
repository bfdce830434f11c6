/* Processes, threads and their mappings as they change over time, fed in time order by
 * side-band events (mmap, comm, fork, exit). Answers "what was mapped at address A in pid P
 * now", where now is the time of the event being processed. Not thread-safe. */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/jit.h"
#include "util/hashmap.h"
#include "util/util.h"

enum hs_dso_kind {
	HS_DSO_FILE = 0, /* an ELF file on disk */
	HS_DSO_VDSO,     /* [vdso]: an ELF image in memory */
	HS_DSO_ANON,     /* anonymous or special memory ([heap], //anon, [stack], memfd ...) */
};

/* A file (or memory image) code is mapped from. Shared by every mapping of the same object. */
struct hs_dso {
	uint32_t id;              /* index in the model's table */
	enum hs_dso_kind kind;
	char *path;               /* as the kernel names it */
	uint8_t build_id[20];
	uint8_t build_id_size;    /* 0 when the recording names none: a perf.data's header or its
	                           * events' MMAP2 records may, a live recording never does (its
	                           * files' own are read from them) */
	uint32_t maj, min;        /* device and inode, when known: identity without a build-id */
	uint64_t ino;
	uint64_t ino_generation;  /* the inode's generation from an MMAP2 record, 0 when unknown;
	                           * not part of the identity */
	int fd;                   /* descriptor on the very file that was mapped, captured while a
	                           * process had it mapped; -1 when none. Owned by the dso. */
	int32_t pid_hint;         /* a process that mapped it, to read memory images and its own
	                           * root (containers) through */
	uint64_t start_hint;      /* ... and where */
	void *sym;                /* the symbolizer's per-dso data, owned by the symbolizer */
	void *unwind;             /* the unwinder's per-dso data, owned by the unwinder */
	const char *symfs;        /* the model's symfs when the dso was made (borrowed) */
	uint32_t period;          /* the model's period of its last frame (its user's to set) */
};

struct hs_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;      /* file offset of start */
	uint32_t prot;
	struct hs_dso *dso;
	uint32_t profile_mapping; /* id of the profile mapping made for it, 0 until asked */
};

struct hs_process {
	int32_t pid;
	bool exited;
	bool stale; /* records of it were left out (HS_RECORD_RESYNC): read it again from /proc */
	/* A forked process shares its parent's mappings (lazy, parent) until either changes them
	 * or it is sampled: most children exec at once, and a copy of each parent's mappings per
	 * fork was most of what a process churn cost. lazy_children: some child shares its own. */
	bool lazy, lazy_children;
	int32_t parent;
	HS_VEC(struct hs_map) maps; /* sorted by start, non-overlapping (none of its own while lazy) */
	/* its program: the first file it mapped code from since its exec (the kernel maps the
	 * program before its interpreter), or its parent's; from /proc, the lowest file mapping.
	 * NULL until known. */
	struct hs_dso *exe;
};

struct hs_thread {
	int32_t tid, pid;
	char comm[32];
	uint64_t stack_lo, stack_hi; /* the mapping its stack pointer was last found in; 0, 0: none */
	uint8_t stack_reads;         /* /proc/PID/maps reads for it (hs_model_thread_stack) */
	bool exited;                 /* forgotten with the exited processes (hs_model_forget_exited) */
};

struct hs_model {
	HS_VEC(struct hs_process *) procs;
	struct hs_u64map proc_ix; /* pid -> index in procs */
	HS_VEC(struct hs_thread) threads;
	struct hs_u64map thread_ix; /* tid -> index in threads */
	HS_VEC(struct hs_dso *) dsos;
	struct hs_index dso_ix;     /* identity -> index in dsos */
	/* A directory the recording's paths are looked up under first (another machine's or an
	 * image's files: perf --symfs), or NULL. Borrowed: must outlive the model. Set before the
	 * first dso is made; each dso keeps it. */
	const char *symfs;
	/* The time of the event being processed (the recording's clock), set by whoever feeds the
	 * model: what is mapped "now" includes which JIT code is at an address now. */
	uint64_t now;
	/* JIT code the processes' runtimes describe (jitdump files, perf maps). Its options may
	 * be set after hs_model_init(), before the first event. */
	struct hs_jit jit;
	/* /proc/PID/maps reads hs_model_thread_stack() may still make (a token bucket refilled
	 * with time), and when it was last refilled */
	uint32_t stack_read_tokens;
	uint64_t stack_read_refill_ns;
	/* Bumped by every change to a process's mappings (a map added, replaced or dropped, an
	 * exec, a fork): what is cached by (pid, address) - its map, its CFI row, its location -
	 * holds while it stays the same. */
	uint64_t gen;
	/* The recording's period (hs_model_unmapped_dsos()): what was used in the last one is
	 * kept even when no process maps it now. */
	uint32_t period;
	size_t nstale; /* processes marked stale: none, and a sample need not look */
	/* records of processes unknown were lost (hs_model_stale_all()): a process first met at a
	 * sample is read from /proc */
	bool unknown_stale;
};

/* Identity of a mapping's object, as an mmap record or /proc/PID/maps gives it. */
struct hs_dso_ident {
	const char *path;
	const uint8_t *build_id;
	uint8_t build_id_size;
	uint32_t maj, min;
	uint64_t ino;
	uint64_t ino_generation; /* kept by the dso made for it (not compared) */
};

void hs_model_init(struct hs_model *m);
/* Closes every captured descriptor; the symbolizer must have released dso->sym before. */
void hs_model_release(struct hs_model *m);

/* The dso for this identity, created on first use. */
struct hs_dso *hs_model_dso(struct hs_model *m, const struct hs_dso_ident *id);

/* A new mapping in pid: replaces whatever overlapped it. Returns the map (valid until the next
 * change to this process). */
struct hs_map *hs_model_mmap(struct hs_model *m, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
			     uint32_t prot, struct hs_dso *dso);
/* A thread's name; exec marks a new program image in the process (its mappings are dropped). */
void hs_model_comm(struct hs_model *m, int32_t pid, int32_t tid, const char *comm, bool exec);
/* A new thread (pid == ppid) or a new process (which inherits the parent's mappings and name). */
void hs_model_fork(struct hs_model *m, int32_t pid, int32_t ppid, int32_t tid, int32_t ptid);
void hs_model_exit(struct hs_model *m, int32_t pid, int32_t tid);
/* Forgets the processes that have exited (hs_model_exit()) and their threads, and the threads
 * that exited from processes still running: their mappings and names are freed, what was cached by (pid, address) no longer holds (gen). For a
 * recording that runs for months: what it holds stays that of the processes alive. Returns
 * how many were forgotten; their pids are put in gone (pid -> 1) when it is not NULL. */
size_t hs_model_forget_exited(struct hs_model *m, struct hs_u64map *gone);
/* Ends the model's period (m->period), and returns the dsos no process maps now (no mapping,
 * not a program) and none had a frame in during the period (dso->period): a table of
 * m->dsos.n entries, by id, where each of those is UINT32_MAX and each other its id once they
 * are gone (the order kept); NULL when none is. The caller frees it. A file that short-lived
 * processes map again and again stays while they have frames in it. For the stages that keep
 * data per dso, to forget theirs (with the renumbering) before hs_model_drop_dsos(). */
uint32_t *hs_model_unmapped_dsos(struct hs_model *m);
/* Frees the dsos renumber marks UINT32_MAX (their captured descriptors closed) and gives the
 * others their new ids. A file mapped again later is a new dso, found and read afresh. Every
 * per-dso pointer (sym, unwind) of those freed must have been dropped. */
void hs_model_drop_dsos(struct hs_model *m, const uint32_t *renumber);

struct hs_process *hs_model_process(struct hs_model *m, int32_t pid);
/* The mapping that holds addr in pid, or NULL. */
struct hs_map *hs_model_find_map(struct hs_model *m, int32_t pid, uint64_t addr);
/* The thread's name, "swapper" for tid 0 (the idle task) unless told otherwise, or NULL when
 * nothing is known of it. */
const char *hs_model_comm_of(const struct hs_model *m, int32_t tid);

/* The bounds [*lo, *hi) of the mapping that holds sp, a stack pointer of thread tid of pid: its
 * stack. Read from /proc/PID/maps when the thread has none that holds sp yet (at most 4 times a
 * thread), so for live processes only. Returns false when not known. */
bool hs_model_thread_stack(struct hs_model *m, int32_t pid, int32_t tid, uint64_t sp, uint64_t *lo, uint64_t *hi);

/* Reads /proc/PID: the process's mappings and its threads' names, for processes that were
 * running before the recording started. Returns 0 or a negative errno (-ESRCH: gone). Each
 * executable file mapping is passed to capture(ctx, pid, map) so the caller can hold on to the
 * mapped file while it still exists. */
int hs_model_from_proc(struct hs_model *m, int32_t pid,
		       void (*capture)(void *ctx, int32_t pid, struct hs_map *map), void *ctx);

/* A live recording left records of pid out from now on (hs_model_stale()): until it is read
 * again from /proc (hs_model_resync(), at its next sample), its mappings are as they were.
 * hs_model_resync() replaces its mappings with those of /proc/PID/maps and the name of thread
 * tid with /proc's, passing each file mapping to capture as hs_model_from_proc() does; a
 * process that is not stale is left as it is. Returns 0 or a negative errno (-ESRCH: gone: it
 * stays as it was, and is no longer stale). */
void hs_model_stale(struct hs_model *m, int32_t pid);
/* Records of any process may have been lost: every process is stale, and so is one first met at
 * a sample from now on (hs_model_resync() reads it from /proc). */
void hs_model_stale_all(struct hs_model *m);
int hs_model_resync(struct hs_model *m, int32_t pid, int32_t tid,
		    void (*capture)(void *ctx, int32_t pid, struct hs_map *map), void *ctx);

/* Adds the executable mappings of maps text buf[0 .. len) (borrowed for the call) to process
 * pid, skipping lines that do not parse. Each file mapping added is passed to capture(ctx,
 * pid, map) (may be NULL), as hs_model_from_proc() does. Returns the count of mappings added. */
size_t hs_model_add_proc_maps(struct hs_model *m, int32_t pid, const char *buf, size_t len,
			      void (*capture)(void *ctx, int32_t pid, struct hs_map *map), void *ctx);

/* Whether a kernel-given mapping name denotes anonymous/special memory rather than a file. */
bool hs_model_path_is_anon(const char *path);

#endif
