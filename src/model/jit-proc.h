/* Inside the JIT code store (model/jit.h), shared by its two readers: jit.c (jitdump files, the
 * code entries) and jit-perfmap.c (perf maps). A process's state, the warnings, and the checks
 * both make before they believe a file a process wrote. Not for use outside src/model/. */
#ifndef HS_JIT_PROC_H
#define HS_JIT_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/jit.h"
#include "util/hashmap.h"
#include "util/util.h"

#define HS_JIT_READ_CHUNK ((size_t)1 << 20) /* bytes of a file read at a time */

/* One perf map line: [start, end) named by the string at name in the store's pm_names. */
struct hs_jit_pm_entry {
	uint64_t start, end;
	uint32_t name; /* offset in the store's pm_names */
};

/* A range of the flattened perf map, owned by one line. */
struct hs_jit_pm_seg {
	uint64_t start, end;
	uint32_t entry; /* the line that owns the range */
};

struct hs_jit_proc {
	int32_t pid;
	HS_VEC(struct hs_jit_source *) sources;
	HS_VEC(struct hs_jit_code) codes; /* in order of appearance */
	HS_VEC(uint32_t) by_start;        /* indexes into codes, sorted by start */
	HS_VEC(uint64_t) max_end;         /* running maximum of end along by_start */
	struct hs_u64map by_index;        /* code_index -> index of its newest entry */
	/* what finding its perf map needs, taken while it is alive */
	bool noted, known;
	uint32_t uid, euid;
	int32_t nspid;
	bool own_root;
	/* its perf map */
	bool pm_tried;
	uint64_t pm_last_try;
	bool pm_refused;
	dev_t pm_dev;
	ino_t pm_ino;
	uint64_t pm_consumed;
	HS_VEC(struct hs_jit_pm_entry) pm_entries;
	HS_VEC(struct hs_jit_pm_seg) pm_segs;
	bool pm_dirty;
	bool pm_skip;          /* the rest of a line longer than a read is being skipped */
	uint64_t pm_names_cut; /* names longer than HS_PERF_MAP_MAX_NAME, cut */
	uint64_t pm_unread;    /* bytes of it the caps left unread (at the last read) */
	char *pm_path;         /* its path, for messages */
};

/* The process's state, NULL when there is none; hs_jit_proc_get() creates it. Owned by j. */
struct hs_jit_proc *hs_jit_proc_find(const struct hs_jit *j, int32_t pid);
struct hs_jit_proc *hs_jit_proc_get(struct hs_jit *j, int32_t pid);

/* Adds a line to j->warnings, up to HS_JIT_MAX_WARNINGS; hs_jit_warn_always() past it too (the
 * summaries of what the caps left out). */
void hs_jit_warn(struct hs_jit *j, const char *fmt, ...) HS_PRINTF(2, 3);
void hs_jit_warn_always(struct hs_jit *j, const char *fmt, ...) HS_PRINTF(2, 3);

/* Reads up to want bytes of fd at off into j->buf; returns how many. */
size_t hs_jit_read_at(struct hs_jit *j, int fd, uint64_t off, size_t want);

/* Whether rc, what hs_infile_open() returned for path, refuses the file for what it is (a
 * symbolic link, not a regular file): then a warning says so. */
bool hs_jit_open_refused(struct hs_jit *j, int rc, const char *path);

/* Whether a file of process p owned by uid may be believed: owned by root, by the process's
 * user, or by us when the process is not known. When not, a warning names path. */
bool hs_jit_owner_ok(struct hs_jit *j, const struct hs_jit_proc *p, const char *path, uid_t uid);

/* The perf maps' part of hs_jit_end(): warnings on names cut, and on what the caps left
 * unread (jit-perfmap.c). */
void hs_jit_perfmap_end(struct hs_jit *j);

#endif
