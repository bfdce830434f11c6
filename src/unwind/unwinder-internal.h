/* What the files of the unwinder share: unwind/unwinder.c (the loop and its CFI step) takes a
 * frame's table from unwind/tables.c, and steps by the frame pointer in unwind/fp-step.c where
 * there is none. Not for use outside them. */
#ifndef HS_UNWINDER_INTERNAL_H
#define HS_UNWINDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "unwind/unwinder.h"

#define MAX_SEGS 16

struct hs_unwind_file {
	uint64_t key;
	struct hs_dso *dso;         /* one dso of this file, to build the table again after eviction */
	struct hs_cfi_table *table; /* NULL: not built, or evicted */
	struct {
		uint64_t offset, vaddr, size;
	} segs[MAX_SEGS];
	uint32_t nsegs;
	bool failed;                /* no file to read, or no CFI at all */
	uint64_t last_use;
};

/* dso->unwind for a dso whose file cannot be opened (unwind/tables.c) */
extern char hs_unwind_dso_failed;

static inline bool hs_unwind_load(const struct hs_stack_copy *s, uint64_t addr, uint64_t *ret)
{
	if (addr < s->start || addr - s->start > s->size || s->size - (addr - s->start) < 8)
		return false;
	memcpy(ret, s->data + (addr - s->start), 8);
	return true;
}

#define HAVE(regs, i) ((regs).valid >> (i) & 1)

/* Why the walk cannot read addr, which it needs and the copy does not hold: on the thread's
 * stack above the copy, the copy is short; anywhere else, the frame is bad (bad says how). While
 * recording, the stack is the mapping that holds the stack pointer. Else, for a frame pointer,
 * a copy the kernel ended early ends where the stack does: the kernel copies up to the first
 * address it cannot read, the end of the stack or a page not present (as in a sample taken in a
 * page fault that grows the stack). CFI does not give addresses off the stack unless a register
 * held another value than it says (rare), so past such a copy its frames are a short copy's. */
static inline enum hs_stop hs_unwind_beyond_copy(struct hs_unwinder *u, int32_t pid, const struct hs_stack_copy *s,
						 uint64_t addr, enum hs_stop bad)
{
	uint64_t lo, hi, end = bad == HS_STOP_BAD_FP ? s->end : 0;

	if (addr < s->start)
		return bad;
	if (u->opts.live && s->tid > 0 && hs_model_thread_stack(u->model, pid, s->tid, s->start, &lo, &hi))
		end = hi;
	if (end && (addr >= end || end - addr < 8))
		return bad;
	return HS_STOP_STACK_COPY;
}

static inline bool hs_unwind_file_vaddr(const struct hs_unwind_file *f, uint64_t off, uint64_t *ret)
{
	for (uint32_t i = 0; i < f->nsegs; i++) {
		if (off >= f->segs[i].offset && off - f->segs[i].offset < f->segs[i].size) {
			*ret = f->segs[i].vaddr + (off - f->segs[i].offset);
			return true;
		}
	}
	return false;
}

/* unwind/tables.c: the table of a dso's file (built, or built again after eviction, when
 * needed: NULL when it has none), and of JIT code and of a trampoline at pc of pid with pc's
 * address in it in *vaddr (NULL when none) */
struct hs_unwind_file *hs_unwind_file_of(struct hs_unwinder *u, struct hs_dso *dso);
const struct hs_cfi_table *hs_unwind_file_table(struct hs_unwinder *u, struct hs_unwind_file *f);
const struct hs_cfi_table *hs_unwind_jit_table(struct hs_unwinder *u, int32_t pid, uint64_t pc, uint64_t *vaddr);
const struct hs_cfi_table *hs_unwind_tramp_table(struct hs_unwinder *u, int32_t pid, const struct hs_map *map,
						 uint64_t pc, uint64_t *vaddr);

/* unwind/fp-step.c: one checked frame-pointer step. Returns HS_STOP_COUNT to go on, or why
 * to stop. */
enum hs_stop hs_unwind_fp_step(struct hs_unwinder *u, int32_t pid, struct hs_regs *regs,
			       const struct hs_stack_copy *stack);

#endif
