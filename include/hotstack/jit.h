/* libhotstack-jit: a small library for JIT runtimes to describe the code they generate in a
 * jitdump file (tools/perf/Documentation/jitdump-specification.txt in the Linux tree), which
 * hotstack reads while it records and `perf inject --jit` turns into ELF files for perf.
 *
 *   struct hsjit_options o = {sizeof(o)};
 *   struct hsjit *j;
 *   if (hsjit_open(&j, &o) == 0) {            // ./jit-PID.dump, mapped as perf expects
 *           hsjit_code_load(j, "add_one", code, code_size, NULL, NULL);
 *           ...
 *           hsjit_close(j);
 *   }
 *
 * Every function returns 0 or a negative errno and never prints or exits. A handle may be used
 * by several threads at once: records are written whole, one at a time, and a code load's debug
 * and unwinding information stay right before it. The library is one C file with no dependency
 * besides libc and POSIX threads: `cc -c src/libjit/jit.c -Iinclude` builds it, so that runtimes
 * can carry a copy. All names start with hsjit_. */
#ifndef HOTSTACK_JIT_H
#define HOTSTACK_JIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open jitdump file. Opaque. */
struct hsjit;

/* Timestamps from the CPU's counter (the TSC on x86-64) instead of CLOCK_MONOTONIC: cheaper to
 * read; readers convert them (perf with the recording's TIME_CONV, hotstack by measuring). */
#define HSJIT_ARCH_TIMESTAMP 1u

struct hsjit_options {
	size_t size;      /* sizeof(struct hsjit_options), set first: later versions append fields */
	const char *path; /* the file to write; NULL for DIR/jit-PID.dump (the name perf looks for) */
	const char *dir;  /* DIR when path is NULL; NULL for $JITDUMPDIR when set, else "." */
	int32_t pid;      /* the process the code runs in, 0 for getpid() */
	uint32_t flags;   /* HSJIT_ARCH_TIMESTAMP */
};

/* One source line: the code from addr (an address in the code as loaded) on comes from
 * file:line, up to the next entry's address. */
struct hsjit_line {
	uint64_t addr;
	uint32_t line;    /* from 1 */
	uint32_t discrim; /* 0 by default */
	const char *file;
};

/* Optional details of a code load; every member may be left zero. */
struct hsjit_code_info {
	size_t size; /* sizeof(struct hsjit_code_info), set first */
	/* source lines, by address (CODE_DEBUG_INFO) */
	const struct hsjit_line *lines;
	size_t nlines;
	/* call frame information (CODE_UNWINDING_INFO): a .eh_frame section (CIEs and FDEs, as
	 * compilers emit it) as if placed right after the code, at the code's address plus its size
	 * rounded up to 8, with the FDEs' addresses relative to that place (DW_EH_PE_pcrel), so that
	 * it stays true when the code moves. The .eh_frame_hdr that indexes it is built by the
	 * library unless given. */
	const void *eh_frame;
	size_t eh_frame_size;
	const void *eh_frame_hdr;
	size_t eh_frame_hdr_size;
};

/* Creates the jitdump file and maps its first page executable, the marker profilers notice in
 * the process's mappings (perf record, hotstack record). opts may be NULL for the defaults.
 * Returns 0 (*ret set), -EINVAL (a size field too small), -ENOMEM, or the errno of the file's
 * creation (-ELOOP: the path is a symbolic link, which is never followed). */
int hsjit_open(struct hsjit **ret, const struct hsjit_options *opts);

/* Describes code_size bytes of machine code at code, just generated (and about to run): a
 * CODE_LOAD record carrying name and a copy of the code, preceded by the information in info
 * (may be NULL). *ret (when ret is not NULL) receives the code's index, for hsjit_code_move().
 * Returns 0, -EINVAL, -ENOMEM, -E2BIG (a record over 4 GiB), or a write's errno. */
int hsjit_code_load(struct hsjit *j, const char *name, const void *code, size_t code_size,
		    const struct hsjit_code_info *info, uint64_t *ret);

/* The code of index index, code_size bytes, now runs at new_addr instead of old_addr
 * (CODE_MOVE): its name, lines and unwinding information move with it. */
int hsjit_code_move(struct hsjit *j, uint64_t index, const void *old_addr, const void *new_addr, size_t code_size);

/* The time now on the file's clock (CLOCK_MONOTONIC nanoseconds, or the TSC with
 * HSJIT_ARCH_TIMESTAMP): what records are stamped with. */
uint64_t hsjit_timestamp(const struct hsjit *j);

/* Writes CODE_CLOSE, unmaps the marker and closes the file; frees j in any case (j may be
 * NULL). Returns 0 or the first error writing met since the file was opened. */
int hsjit_close(struct hsjit *j);

#ifdef __cplusplus
}
#endif

#endif
