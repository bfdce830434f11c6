/* JIT code of processes over time: what runtimes say they generated, from their jitdump files
 * (read while they are written: CODE_LOAD, CODE_MOVE, CODE_DEBUG_INFO, CODE_UNWINDING_INFO) and
 * their perf maps (/tmp/perf-PID.map, read on demand, through the process's own root and under
 * the pid it has in its own namespace). Answers "which code was at address A in pid P at time T"
 * for jitdump code (a re-JIT, moved code, reused memory each resolve to the code there at T),
 * and "which name does the perf map give A" (perf maps have no time: later lines win). Part of
 * the model (struct hs_model embeds one); reads files but prints nothing: what a person should
 * know ends up in warnings. Not thread-safe. */
#ifndef HS_JIT_H
#define HS_JIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/jitdump.h"
#include "util/hashmap.h"
#include "util/util.h"

/* Caps on what runtimes' files can make the model hold, all processes together: a profiled
 * process writes these files, and can write gigabytes. Real runtimes stay far below (a JVM's or
 * node's perf map: a few hundred thousand lines, 10 to 50 MiB). Past a cap the rest is not read,
 * and hs_jit_end() says what was left out. */
#define HS_JIT_MAX_CODES (2u << 20)           /* code entries */
#define HS_JIT_MAX_RECORDS (64u << 20)        /* jitdump records read per file */
#define HS_JIT_MAX_LINES (8u << 20)           /* debug line entries */
#define HS_JIT_MAX_UNWIND_BYTES ((size_t)64 << 20)
#define HS_JIT_MAX_PERFMAP_ENTRIES (2u << 20) /* perf map lines held */
#define HS_JIT_MAX_PERFMAP_BYTES ((uint64_t)256 << 20) /* perf map bytes read */
#define HS_JIT_MAX_WARNINGS 64

/* Source lines of one piece of code (CODE_DEBUG_INFO), by offset from the code's start. */
struct hs_jit_line {
	uint64_t off;
	uint32_t line;
	uint32_t file; /* string id */
};

/* The unwinding information of one piece of code (CODE_UNWINDING_INFO): .eh_frame then
 * .eh_frame_hdr, laid out as perf's genelf.c places them, the .eh_frame at the code's start plus
 * its size rounded up to 8. Shared by the code's moved copies: placement is relative. */
struct hs_jit_unwind {
	uint8_t *data;
	size_t eh_frame_size, hdr_size;
	uint64_t code_size;
	void *table; /* the unwinder's compiled table, owned and freed by the unwinder */
	bool tried;  /* the unwinder tried to compile it */
};

struct hs_jit_code {
	uint64_t start, end;             /* [start, end) */
	uint64_t load_time, end_time;    /* valid during [load_time, end_time) (the recording's
	                                  * clock); end_time is UINT64_MAX until the code moves */
	uint64_t seq;                    /* order of appearance */
	uint64_t code_index;             /* the runtime's id for it */
	uint32_t id;                     /* non-zero, unique in the store: what the code is */
	uint32_t name;                   /* string id */
	uint32_t line0, nlines;          /* its source lines in the store's lines */
	uint32_t unwind;                 /* index + 1 in the store's unwinds, 0 for none */
	bool timed;                      /* times comparable with samples' (else: latest wins) */
};

struct hs_jit_source; /* a jitdump file being read, defined in jit.c */
struct hs_jit_proc;   /* a process's JIT code, defined in jit.c */

struct hs_jit_opts {
	bool live;      /* files may still grow: records are read when a lookup's time needs them,
	                 * and the processes are alive (their /proc is asked about them) */
	bool timed;     /* sample times are CLOCK_MONOTONIC, as jitdump timestamps (else lookups
	                 * take the latest code) */
	struct hs_tsc_conv tsc; /* for files with architecture timestamps, when valid */
};

struct hs_jit_stats {
	uint64_t files;           /* jitdump files read */
	uint64_t records, code_loads, code_moves, debug_infos, unwinding_infos;
	uint64_t skipped_records; /* unknown types, over a cap, or malformed */
	uint64_t perf_maps;       /* perf map files read */
	uint64_t perf_map_entries;
	/* what the caps left out */
	uint64_t codes_over_cap, lines_over_cap, unwind_over_cap; /* jitdump records not taken in */
	uint64_t perf_map_bytes_unread; /* perf map bytes not read past HS_JIT_MAX_PERFMAP_* */
	uint64_t perf_maps_cut;         /* ... in this many files */
};

struct hs_jit {
	struct hs_jit_opts opts;
	HS_VEC(struct hs_jit_proc *) procs;
	struct hs_u64map proc_ix; /* pid -> index in procs */
	HS_VEC(char) str_pool;    /* strings, each NUL-terminated */
	HS_VEC(uint32_t) str_off; /* string id -> offset in str_pool; 0 is "" */
	struct hs_index str_ix;
	HS_VEC(struct hs_jit_line) lines;
	HS_VEC(struct hs_jit_unwind) unwinds;
	size_t unwind_bytes;
	uint64_t ncodes, seq;
	uint32_t next_id;
	HS_VEC(uint8_t) buf;      /* reading buffer */
	uint64_t pm_entries, pm_bytes; /* perf map lines held, bytes read, all processes */
	HS_VEC(char) pm_names;    /* perf map names, each NUL-terminated */
	HS_VEC(char *) warnings;  /* one line each, for a person; at most HS_JIT_MAX_WARNINGS */
	/* the unwinder's compiled tables of code hs_jit_forget() forgot, for it to free */
	HS_VEC(void *) dropped_tables;
	struct hs_jit_stats stats;
};

void hs_jit_init(struct hs_jit *j, const struct hs_jit_opts *opts);
void hs_jit_release(struct hs_jit *j);

/* A jitdump file that process pid mapped (the runtime's marker mapping): fd, when not -1, is a
 * descriptor on it that the store takes over (a live recording captures the very file mapped);
 * else path is opened, inside the process's own root when it has one. Each file is read once
 * per process however often it is mapped. Without opts.live it is read whole now. */
void hs_jit_add_jitdump(struct hs_jit *j, int32_t pid, int fd, const char *path);

/* Remembers what reading the process's perf map later needs (its user, its pid in its own pid
 * namespace, whether it has its own root), while it is alive. Done once per process; live only. */
void hs_jit_note_process(struct hs_jit *j, int32_t pid);

/* Forgets the processes in gone (pid -> anything): their code, perf map entries, jitdump
 * files (closed), and what only they used of the store's strings, lines and unwinding
 * information, which are packed again; the caps count what is held. The compiled tables of
 * the unwinding information dropped go to dropped_tables. Ids of code kept stay. Returns how
 * many processes were forgotten. */
size_t hs_jit_forget(struct hs_jit *j, const struct hs_u64map *gone);

/* Whether pid has jitdump files. */
bool hs_jit_has_jitdump(const struct hs_jit *j, int32_t pid);

/* The jitdump code at addr in pid at time (the recording's clock): among the code that covers
 * addr, the newest loaded at or before time and not moved away by then; when no code was at addr
 * before time, the first loaded after it (a runtime that logs code just after it started running
 * it). Code whose
 * times are not comparable with samples' is taken latest first. Live, records written since the
 * last read are read first when time is past it. NULL when no jitdump code covers addr. The
 * pointer lives until the next call into the store. */
const struct hs_jit_code *hs_jit_find(struct hs_jit *j, int32_t pid, uint64_t addr, uint64_t time);

/* Reads every jitdump file of pid (all processes when pid is -1) to its current end. */
void hs_jit_read_all(struct hs_jit *j, int32_t pid);

/* Adds to the warnings what the caps left out of the files read (once, at the end). */
void hs_jit_end(struct hs_jit *j);

/* The source line of addr in code: returns false when the code has no line there. *file is
 * borrowed from the store. */
bool hs_jit_code_line(const struct hs_jit *j, const struct hs_jit_code *c, uint64_t addr, const char **file,
		      uint32_t *line);
/* The pointer lives until the next call that reads more into the store. */
static inline const char *hs_jit_str(const struct hs_jit *j, uint32_t id)
{
	return j->str_pool.v + j->str_off.v[id];
}

/* Reads (or re-reads, when it grew or was replaced) the perf map of pid:
 * /proc/PID/root/tmp/perf-NSPID.map for a process with its own root, else /tmp/perf-NSPID.map,
 * NSPID being the pid it has in its own namespace. A file that is not a regular file (a
 * symbolic link), or not owned by the process's user or root, is refused with a warning. Without
 * final, only complete lines are taken (the runtime may be writing the last one); with
 * min_interval_ns, nothing is done when the last try was less than that long ago (the
 * recording's clock, time). Returns 0, -ENOENT when there is none, -EPERM when refused. */
int hs_jit_perfmap_read(struct hs_jit *j, int32_t pid, uint64_t time, uint64_t min_interval_ns, bool final);

/* The perf map of pid was written anew in place (a JVM's, each time it is asked: the file is
 * truncated and written again, in the code cache's order): the next read starts from its
 * beginning rather than after what was read of it. */
void hs_jit_perfmap_rewritten(struct hs_jit *j, int32_t pid);

/* Takes perf map lines of pid from text (what hs_jit_perfmap_read() does with the file's bytes):
 * every complete line, and with final the last one without its newline too. Returns the bytes
 * taken. */
size_t hs_jit_perfmap_feed(struct hs_jit *j, int32_t pid, const char *text, size_t len, bool final);

/* The name the perf map of pid gives addr (the last line whose range holds it), borrowed from
 * the store (as hs_jit_str()); NULL when none. *start is the start of that line's range. */
const char *hs_jit_perfmap_find(struct hs_jit *j, int32_t pid, uint64_t addr, uint64_t *start);

#endif
