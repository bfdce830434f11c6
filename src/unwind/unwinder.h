/* The user-space unwinder: a sample's registers and its copy of the user stack, walked frame by
 * frame with the best method that applies — a CFI row of the code's ELF file (tables compiled
 * lazily, cached by build-id, bounded in memory) or of JIT code (the unwinding information of
 * its jitdump, at the time of the sample: the model's now), else (in auto mode) a frame-pointer
 * step —
 * until the real bottom of the stack or a stop reason. Not thread-safe. */
#ifndef HS_UNWINDER_H
#define HS_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "unwind/callchain.h"
#include "unwind/cfi.h"
#include "util/hashmap.h"

/* Registers in DWARF numbering (x86-64: 0-15, 16 the instruction pointer). */
struct hs_regs {
	uint64_t r[HS_DWARF_NREGS];
	uint32_t valid; /* bit i: r[i] is known */
};

/* A copy of user memory from start (the stack pointer at the sample) on. */
struct hs_stack_copy {
	uint64_t start;
	const uint8_t *data; /* may be unaligned */
	uint64_t size;
	/* where the kernel stopped a copy shorter than asked for (the first address it could not
	 * read: the end of the thread's stack, or a page not present), else 0 */
	uint64_t end;
	int32_t tid;         /* the sampled thread, 0 when not known */
	/* When set, called before the unwinder does something slow (compiles a file's tables):
	 * the stack is in memory that must be given back soon, and detach moves it to a copy
	 * (data updated). */
	void (*detach)(void *ctx, struct hs_stack_copy *s);
	void *detach_ctx;
};

struct hs_unwinder_opts {
	bool fp_fallback;    /* auto mode: a frame-pointer step where no CFI covers the PC */
	uint32_t max_depth;  /* frames per stack; 0 = 1024 */
	size_t cache_bytes;  /* bound on compiled tables kept; 0 = 256 MiB */
	/* the processes are running now (a recording): their memory and /proc/PID/maps may be
	 * read, to check frame-pointer steps against their code and their threads' stacks */
	bool live;
};

struct hs_unwinder_stats {
	uint64_t samples, frames;
	uint64_t cfi_steps, fp_steps, signal_frames;
	uint64_t stops[HS_STOP_COUNT];
	uint64_t tables_built, tables_evicted, tables_failed;
	uint64_t tables_cached; /* taken from the user's cache (cfi-cache.h) instead of compiled */
	uint64_t memo_hits; /* lookups answered by the memo */
	uint64_t unsupported_rows_hit;
	uint64_t jit_tables;   /* JIT code unwinding information compiled */
	/* steps through a runtime's trampoline (unwind/trampoline.h), and those of them whose
	 * trampoline was known by its JIT symbol, its code being unreadable */
	uint64_t tramp_steps, tramp_by_name;
	/* frame-pointer steps refused (HS_STOP_BAD_FP), by what was wrong; and steps that took the
	 * frame record of a frame that saved rbp without setting it */
	uint64_t fp_outside_stack, fp_not_code, fp_not_after_call, fp_own_records;
	uint64_t code_reads, code_unreadable; /* bytes before return addresses read, and failed */
};

struct hs_unwind_file; /* per-file state, defined in unwinder-internal.h */

struct hs_unwinder {
	struct hs_unwinder_opts opts;
	struct hs_model *model; /* borrowed */
	HS_VEC(struct hs_unwind_file *) files;
	struct hs_u64map by_key; /* hs_dso_elf_key -> index in files */
	size_t bytes;            /* held in compiled tables */
	uint64_t clock;          /* for least-recently-used eviction */
	/* what precedes return addresses met by frame-pointer steps: a hash of (pid, address) ->
	 * address << 2 | what (a call, something else, unreadable); bounded */
	struct hs_u64map ret_kinds;
	/* the trampoline code at addresses in anonymous memory: a hash of (pid, address) ->
	 * address << 8 | template << 4 | offset, or address << 8 | TRAMP_NONE; bounded */
	struct hs_u64map tramps;
	/* the last lookups of file-backed code, by (pid, address): a sample's frames are mostly
	 * those of the samples before it, and a hit skips the map, file and row searches. An entry
	 * holds while the model's mappings and the tables stay as they were (gen, evicted). */
	struct hs_unwind_memo *memo;
	struct hs_stack_copy *stack; /* the one being walked, during hs_unwind_user() */
	struct hs_unwinder_stats stats;
};

void hs_unwinder_init(struct hs_unwinder *u, struct hs_model *model, const struct hs_unwinder_opts *opts);
/* Frees every table and clears dso->unwind of the model's dsos. */
void hs_unwinder_release(struct hs_unwinder *u);
/* Forgets the files only the dsos renumber marks gone (hs_model_unmapped_dsos()) map: their
 * tables are freed (renumber may be NULL: none). Frees the tables of the JIT code the model's
 * store forgot. Call before hs_model_drop_dsos(). */
void hs_unwinder_forget(struct hs_unwinder *u, const uint32_t *renumber);
/* The pages of the tables read in place from the cache given back (hs_cfi_table_drop_pages()). */
void hs_unwinder_drop_pages(struct hs_unwinder *u);

/* Converts PERF_SAMPLE_REGS_USER values (in the order of the bits of mask, x86-64 perf register
 * numbering) to DWARF numbering. */
void hs_regs_from_perf(struct hs_regs *ret, const void *values, uint32_t n, uint64_t mask);

/* Appends the user frames of pid found from regs and stack to cc (leaf first) and sets
 * cc->stop. The first frame is regs' instruction pointer. */
void hs_unwind_user(struct hs_unwinder *u, int32_t pid, const struct hs_regs *regs, const struct hs_stack_copy *stack,
		    struct hs_callchain *cc);

/* The compiled table of the file a dso maps (built on first use), and the ELF virtual address
 * of a file offset in it; NULL when the dso has no usable CFI. For tests and tools. */
const struct hs_cfi_table *hs_unwinder_table(struct hs_unwinder *u, struct hs_dso *dso, uint64_t file_offset,
					     uint64_t *vaddr);

#endif
