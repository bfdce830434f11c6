/* The unwind loop: a frame's table (unwind/tables.c), remembered by its PC in a memo, then a
 * step by its CFI row (here: the CFA, the return address, the saved frame pointer and the other
 * saved registers from the stack copy; once a frame, so in the loop's file, where it is inlined)
 * or by the frame pointer (unwind/fp-step.c), until the bottom of the stack or a stop reason.
 * Also the unwinder's life and a sample's registers. */
#include "unwind/unwinder-internal.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_BITS 12

struct hs_unwind_memo {
	uint64_t pc;   /* the address looked up */
	uint64_t gen;  /* the model's, when made */
	uint32_t evicted; /* tables evicted, when made (the low bits: 64 bytes an entry) */
	int32_t pid;
	struct hs_map *map;
	struct hs_unwind_file *file;
	const struct hs_cfi_table *table; /* file's, kept while no table is evicted */
	uint64_t vaddr;
	const struct hs_cfi_row *row; /* NULL: no CFI there */
};

void hs_unwinder_init(struct hs_unwinder *u, struct hs_model *model, const struct hs_unwinder_opts *opts)
{
	memset(u, 0, sizeof(*u));
	u->model = model;
	if (opts)
		u->opts = *opts;
	if (!u->opts.max_depth)
		u->opts.max_depth = 1024;
	if (!u->opts.cache_bytes)
		u->opts.cache_bytes = (size_t)256 << 20;
}

/* The tables of JIT code the store forgot (hs_jit_forget()) */
static void free_dropped_jit(struct hs_unwinder *u)
{
	struct hs_jit *j = &u->model->jit;

	for (size_t i = 0; i < j->dropped_tables.n; i++)
		hs_cfi_table_free(j->dropped_tables.v[i]);
	j->dropped_tables.n = 0;
}

void hs_unwinder_release(struct hs_unwinder *u)
{
	if (!u)
		return;
	if (u->model) {
		free_dropped_jit(u);
		for (size_t i = 0; i < u->model->dsos.n; i++)
			u->model->dsos.v[i]->unwind = NULL;
		for (size_t i = 0; i < u->model->jit.unwinds.n; i++) {
			struct hs_jit_unwind *w = &u->model->jit.unwinds.v[i];
			hs_cfi_table_free(w->table);
			w->table = NULL;
			w->tried = false;
		}
	}
	for (size_t i = 0; i < u->files.n; i++) {
		hs_cfi_table_free(u->files.v[i]->table);
		free(u->files.v[i]);
	}
	hs_vec_free(&u->files);
	hs_u64map_release(&u->by_key);
	hs_u64map_release(&u->ret_kinds);
	hs_u64map_release(&u->tramps);
	free(u->memo);
	u->memo = NULL;
}

void hs_unwinder_drop_pages(struct hs_unwinder *u)
{
	for (size_t i = 0; i < u->files.n; i++)
		hs_cfi_table_drop_pages(u->files.v[i]->table);
}

void hs_unwinder_forget(struct hs_unwinder *u, const uint32_t *renumber)
{
	struct hs_model *m = u->model;
	size_t kept = 0;

	free_dropped_jit(u);
	if (!renumber)
		return;
	for (size_t i = 0; i < u->files.n; i++)
		u->files.v[i]->dso = NULL;
	/* a file stays while a dso kept maps it, and is built again from that one */
	for (size_t i = 0; i < m->dsos.n; i++) {
		struct hs_dso *d = m->dsos.v[i];
		struct hs_unwind_file *f = d->unwind;
		if (renumber[i] == UINT32_MAX)
			d->unwind = NULL;
		else if (f && f != (void *)&hs_unwind_dso_failed && !f->dso)
			f->dso = d;
	}
	hs_u64map_release(&u->by_key);
	for (size_t i = 0; i < u->files.n; i++) {
		struct hs_unwind_file *f = u->files.v[i];
		if (!f->dso) {
			if (f->table)
				u->bytes -= hs_cfi_table_bytes(f->table);
			hs_cfi_table_free(f->table);
			free(f);
			continue;
		}
		hs_u64map_put(&u->by_key, f->key, kept);
		u->files.v[kept++] = f;
	}
	u->files.n = kept;
}

/* perf's x86-64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) to DWARF's. */
static const int8_t perf_to_dwarf[24] = {
	0,  /* AX */ 3, /* BX */ 2, /* CX */ 1, /* DX */ 4, /* SI */ 5, /* DI */
	6,  /* BP */ 7, /* SP */ 16, /* IP */
	-1, /* FLAGS */ -1, -1, -1, -1, -1, -1, /* CS SS DS ES FS GS */
	8,  9, 10, 11, 12, 13, 14, 15, /* R8-R15 */
};

void hs_regs_from_perf(struct hs_regs *ret, const void *values, uint32_t n, uint64_t mask)
{
	uint32_t k = 0;

	memset(ret, 0, sizeof(*ret));
	for (int bit = 0; bit < 64 && k < n; bit++) {
		uint64_t v;
		if (!(mask >> bit & 1))
			continue;
		memcpy(&v, (const char *)values + 8 * k++, 8);
		if (bit < 24 && perf_to_dwarf[bit] >= 0) {
			ret->r[perf_to_dwarf[bit]] = v;
			ret->valid |= 1u << perf_to_dwarf[bit];
		}
	}
}

/* Loads lazy register r. Returns HS_STOP_COUNT, or why its value cannot be had. */
static enum hs_stop resolve(struct hs_unwinder *u, int32_t pid, const struct hs_stack_copy *stack, struct hs_regs *regs,
			    uint32_t *lazy, int r)
{
	uint64_t slot = regs->r[r];

	*lazy &= ~(1u << r);
	if (hs_unwind_load(stack, slot, &regs->r[r]))
		return HS_STOP_COUNT;
	regs->valid &= ~(1u << r);
	return hs_unwind_beyond_copy(u, pid, stack, slot, HS_STOP_BAD_FRAME);
}

/* The caller's registers other than rsp, rbp and the return address, by the row's rules (from
 * the callee's registers and the CFA), in regs and lazy, whose caller-saved registers the caller
 * drops afterwards but for those the rules name. As libdw does: a register saved in a slot gets
 * the slot's value, one without a rule keeps its value when callee-saved; one whose rule the
 * table cannot express becomes unknown. The general case, for the rare rules and the frame that
 * was interrupted; cfi_step() has the common one inline. */
static void restore_regs(const struct hs_cfi_regs *e, uint64_t cfa, struct hs_regs *regs, uint32_t *lazy)
{
	uint32_t ok = 0, lz = 0;
	uint64_t v[16];

	/* all values first: a rule may read a register another rule replaces */
	for (uint32_t m = e->mask; m; m &= m - 1) {
		int r = __builtin_ctz(m), src;

		switch (e->kind[r]) {
		case HS_RULE_CFA_OFF:
			v[r] = cfa + (uint64_t)(int64_t)e->off[r];
			if (HAVE(*regs, HS_DWARF_RSP) && v[r] < regs->r[HS_DWARF_RSP]) {
				/* a slot below the stack pointer is dead: the register was restored
				 * already, by an epilogue whose CFI does not say so (ld.so's _dl_fixup
				 * pops rbx, r12, ... with no DW_CFA_restore), as for rbp in
				 * cfi_step() */
				v[r] = regs->r[r];
				ok |= regs->valid & (1u << r);
				lz |= *lazy & (1u << r);
				break;
			}
			ok |= 1u << r;
			lz |= 1u << r;
			break;
		case HS_RULE_SAME:
			v[r] = regs->r[r];
			ok |= regs->valid & (1u << r);
			lz |= *lazy & (1u << r);
			break;
		case HS_RULE_VAL_CFA_OFF:
			v[r] = cfa + (uint64_t)(int64_t)e->off[r];
			ok |= 1u << r;
			break;
		case HS_RULE_RSP_OFF:
			v[r] = regs->r[HS_DWARF_RSP] + (uint64_t)(int64_t)e->off[r];
			ok |= (regs->valid >> HS_DWARF_RSP & 1) << r;
			lz |= 1u << r;
			break;
		case HS_RULE_REGISTER:
			src = e->off[r];
			if (src >= 0 && src < HS_DWARF_NREGS && HAVE(*regs, src)) {
				v[r] = regs->r[src];
				ok |= 1u << r;
				lz |= (*lazy >> src & 1) << r;
			}
			break;
		default:
			break;
		}
	}
	for (uint32_t m = ok; m; m &= m - 1) {
		int r = __builtin_ctz(m);
		regs->r[r] = v[r];
	}
	regs->valid = (regs->valid & ~(uint32_t)e->mask) | ok;
	*lazy = (*lazy & ~(uint32_t)e->mask) | (lz & ok);
}

/* One CFI step. Returns HS_STOP_COUNT to go on, or why to stop. interrupted: the frame is the
 * sampled one, or one a signal interrupted (it may be in its epilogue), not one at a call. */
static enum hs_stop cfi_step(struct hs_unwinder *u, int32_t pid, const struct hs_cfi_table *t,
			     const struct hs_cfi_row *row, struct hs_regs *regs, uint32_t *lazy,
			     const struct hs_stack_copy *stack, bool interrupted)
{
	const struct hs_cfi_regs *e;
	uint64_t cfa, ra, rbp = 0, base;
	uint32_t keep;
	bool rbp_ok = HAVE(*regs, HS_DWARF_RBP);
	enum hs_stop stop;

	switch (row->cfa_kind) {
	case HS_CFA_REG:
	case HS_CFA_DEREF:
		/* any register: the leaf frame has them all, the callers those restored */
		if (row->cfa_reg >= HS_DWARF_NREGS || !HAVE(*regs, row->cfa_reg))
			return HS_STOP_NO_INFO;
		if ((*lazy >> row->cfa_reg & 1) &&
		    (stop = resolve(u, pid, stack, regs, lazy, row->cfa_reg)) != HS_STOP_COUNT)
			return stop;
		base = regs->r[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_off;
		if (row->cfa_kind == HS_CFA_REG)
			cfa = base;
		else if (!hs_unwind_load(stack, base, &cfa))
			return hs_unwind_beyond_copy(u, pid, stack, base, HS_STOP_BAD_FRAME);
		break;
	case HS_CFA_PLT:
		if (!HAVE(*regs, HS_DWARF_RSP))
			return HS_STOP_NO_INFO;
		cfa = regs->r[HS_DWARF_RSP] + (uint64_t)(int64_t)row->cfa_off +
		      ((regs->r[HS_DWARF_RA] & 15) >= row->cfa_reg ? 8 : 0);
		break;
	default:
		u->stats.unsupported_rows_hit++;
		return HS_STOP_NO_INFO;
	}
	switch (row->ra_kind) {
	case HS_RULE_CFA_OFF:
		base = cfa + (uint64_t)(int64_t)row->ra_off;
		if (!hs_unwind_load(stack, base, &ra))
			return hs_unwind_beyond_copy(u, pid, stack, base, HS_STOP_BAD_FRAME);
		break;
	case HS_RULE_RSP_OFF:
		if (!HAVE(*regs, HS_DWARF_RSP))
			return HS_STOP_NO_INFO;
		base = regs->r[HS_DWARF_RSP] + (uint64_t)(int64_t)row->ra_off;
		if (!hs_unwind_load(stack, base, &ra))
			return hs_unwind_beyond_copy(u, pid, stack, base, HS_STOP_BAD_FRAME);
		break;
	case HS_RULE_UNDEFINED:
		return HS_STOP_END;
	default:
		u->stats.unsupported_rows_hit++;
		return HS_STOP_NO_INFO;
	}
	switch (row->rbp_kind) {
	case HS_RULE_SAME:
		rbp = regs->r[HS_DWARF_RBP];
		break;
	case HS_RULE_CFA_OFF:
		base = cfa + (uint64_t)(int64_t)row->rbp_off;
		if (HAVE(*regs, HS_DWARF_RSP) && base < regs->r[HS_DWARF_RSP]) {
			/* a save slot below the stack pointer is dead: the register was restored
			 * already, by an epilogue whose CFI does not say so (V8's optimized code
			 * pops rbp and still describes it as saved) */
			rbp = regs->r[HS_DWARF_RBP];
			break;
		}
		rbp_ok = hs_unwind_load(stack, base, &rbp);
		break;
	case HS_RULE_VAL_CFA_OFF:
		rbp = cfa + (uint64_t)(int64_t)row->rbp_off;
		rbp_ok = true;
		break;
	case HS_RULE_RSP_OFF:
		rbp_ok = HAVE(*regs, HS_DWARF_RSP) &&
			 hs_unwind_load(stack, regs->r[HS_DWARF_RSP] + (uint64_t)(int64_t)row->rbp_off, &rbp);
		break;
	default:
		rbp_ok = false;
		break;
	}
	/* the stack must move up, except out of a signal frame (the interrupted code's stack may
	 * be an alternate one) */
	if (!(row->flags & HS_CFI_SIGNAL) && HAVE(*regs, HS_DWARF_RSP) && cfa <= regs->r[HS_DWARF_RSP])
		return HS_STOP_BAD_FRAME;
	/* caller-saved registers are not preserved across calls, unless a rule says where they are
	 * (signal frames) */
	keep = HS_CFI_CALLEE_SAVED | (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RA);
	e = &t->regs[row->regs];
	if (e->mask == e->at_cfa && !interrupted) {
		/* none, or only slots at the CFA, which a frame that is not the interrupted one
		 * has all filled: what nearly every row has */
		regs->valid &= keep;
		for (uint32_t m = e->at_cfa; m; m &= m - 1) {
			int r = __builtin_ctz(m);
			regs->r[r] = cfa + (uint64_t)(int64_t)e->off[r];
		}
		regs->valid |= e->at_cfa;
		*lazy |= e->at_cfa;
	} else {
		restore_regs(e, cfa, regs, lazy);
		regs->valid &= keep | e->mask;
	}
	regs->r[HS_DWARF_RSP] = cfa;
	regs->r[HS_DWARF_RA] = ra;
	regs->r[HS_DWARF_RBP] = rbp;
	regs->valid |= (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RA);
	if (rbp_ok)
		regs->valid |= 1u << HS_DWARF_RBP;
	else
		regs->valid &= ~(1u << HS_DWARF_RBP);
	return HS_STOP_COUNT;
}

static struct hs_unwind_memo *memo_of(struct hs_unwinder *u, int32_t pid, uint64_t pc)
{
	if (!u->memo) {
		/* an entry to a cache line */
		u->memo = aligned_alloc(64, sizeof(*u->memo) << MEMO_BITS);
		if (!u->memo)
			hs_die_oom();
		memset(u->memo, 0, sizeof(*u->memo) << MEMO_BITS);
	}
	/* one multiply: the lookup is on the walk's critical path, a frame after another */
	return &u->memo[((pc ^ (uint64_t)(uint32_t)pid << 40) * 0x9e3779b97f4a7c15ULL) >> (64 - MEMO_BITS)];
}

/* A memo is made only of a file's table (never JIT code's), and holds while the model's mappings
 * are as they were and no table has been evicted (its table is still the file's). */
static bool memo_valid(const struct hs_unwinder *u, const struct hs_unwind_memo *m, int32_t pid, uint64_t pc)
{
	return m->pc == pc && m->pid == pid && m->file && m->gen == u->model->gen &&
	       m->evicted == (uint32_t)u->stats.tables_evicted;
}

/* The walk reads the stack upwards, each frame's place known only from the frame before: the
 * bytes the kernel wrote on another CPU are asked for (to the first-level cache: 2 KiB of it)
 * this far ahead of the frame at hand, so that they arrive while the frames below are walked, and
 * no further than the walk goes. */
#define PREFETCH_AHEAD 2048

static void prefetch_to(const struct hs_stack_copy *s, uint64_t *done, uint64_t upto)
{
	if (upto > s->size)
		upto = s->size;
	for (; *done < upto; *done += 64)
		__builtin_prefetch(s->data + *done, 0, 3);
}

void hs_unwind_user(struct hs_unwinder *u, int32_t pid, const struct hs_regs *start, const struct hs_stack_copy *stack,
		    struct hs_callchain *cc)
{
	struct hs_regs regs = *start;
	uint32_t lazy = 0; /* registers whose r[] is the address of their save slot */
	bool exact = true; /* the PC is the interrupted instruction, not a return address */
	uint32_t depth = 0;
	uint64_t fetched = 0; /* the stack's bytes prefetched */
	enum hs_stop stop = HS_STOP_END;

	u->stats.samples++;
	u->stack = (struct hs_stack_copy *)stack; /* only its data and detach change */
	if (!HAVE(regs, HS_DWARF_RA)) {
		u->stack = NULL;
		cc->stop = HS_STOP_NO_INFO;
		u->stats.stops[HS_STOP_NO_INFO]++;
		return;
	}
	prefetch_to(stack, &fetched, PREFETCH_AHEAD);
	for (;;) {
		uint64_t pc = regs.r[HS_DWARF_RA], lookup = exact ? pc : pc - 1, vaddr;
		struct hs_map *map;
		const struct hs_cfi_row *row = NULL;
		const struct hs_cfi_table *t = NULL;
		struct hs_unwind_file *f;
		struct hs_unwind_memo *memo;
		bool tramp = false, anon = false;

		if (pc == 0 && depth > 0) {
			stop = HS_STOP_END;
			break;
		}
		if (depth == u->opts.max_depth) {
			stop = HS_STOP_DEPTH;
			break;
		}
		memo = memo_of(u, pid, lookup);
		if (memo_valid(u, memo, pid, lookup)) {
			map = memo->map;
			memo->file->last_use = ++u->clock;
			t = memo->table;
			vaddr = memo->vaddr;
			row = memo->row;
			u->stats.memo_hits++;
			goto found;
		}
		map = hs_model_find_map(u->model, pid, lookup);
		if (!map) {
			/* the first frame is shown even when unmapped (the builder names it [unknown]) */
			if (depth == 0)
				hs_callchain_push(cc, pc, false, false);
			stop = HS_STOP_UNMAPPED;
			break;
		}
		if (map->dso->kind == HS_DSO_ANON) {
			/* JIT code: CFI where its runtime gave some, else a trampoline's */
			anon = true;
			t = hs_unwind_jit_table(u, pid, lookup, &vaddr);
			if (!t && (t = hs_unwind_tramp_table(u, pid, map, lookup, &vaddr))) {
				u->stats.tramp_steps++;
				tramp = true;
			}
		} else {
			f = hs_unwind_file_of(u, map->dso);
			t = hs_unwind_file_table(u, f);
			if (t && !hs_unwind_file_vaddr(f, lookup - map->start + map->pgoff, &vaddr))
				t = NULL;
			if (t) {
				row = hs_cfi_table_find(t, vaddr);
				*memo = (struct hs_unwind_memo){lookup, u->model->gen, (uint32_t)u->stats.tables_evicted, pid, map, f, t,
								vaddr, row};
			}
		}
found:
		if (t) {
			if (anon)
				row = hs_cfi_table_find(t, vaddr);
			/* a sample taken during a system call whose instruction ends its function (the
			 * signal trampoline's rt_sigreturn) has its PC just past the function's CFI */
			if (depth == 0 && (!row || row->cfa_kind == HS_CFA_NONE)) {
				const struct hs_cfi_row *before = hs_cfi_table_find(t, vaddr - 1);
				if (before && before->cfa_kind != HS_CFA_NONE)
					row = before;
			}
		}
		if (row && (row->flags & HS_CFI_SIGNAL) && row->cfa_kind != HS_CFA_NONE) {
			hs_callchain_push_signal(cc, pc);
			u->stats.signal_frames++;
		} else {
			hs_vec_reserve(&cc->frames, cc->frames.n + 1);
			cc->frames.v[cc->frames.n++] = (struct hs_cc_frame){.addr = pc, .ret = !exact, .tramp = tramp};
		}
		depth++;
		u->stats.frames++;
		if (row && row->cfa_kind != HS_CFA_NONE) {
			stop = cfi_step(u, pid, t, row, &regs, &lazy, stack, exact);
			u->stats.cfi_steps++;
			exact = (row->flags & HS_CFI_SIGNAL) != 0;
		} else if (u->opts.fp_fallback) {
			stop = hs_unwind_fp_step(u, pid, &regs, stack);
			u->stats.fp_steps++;
			exact = false;
		} else {
			stop = HS_STOP_NO_INFO;
		}
		if (stop != HS_STOP_COUNT)
			break;
		if (HAVE(regs, HS_DWARF_RSP) && regs.r[HS_DWARF_RSP] >= stack->start)
			prefetch_to(stack, &fetched, regs.r[HS_DWARF_RSP] - stack->start + PREFETCH_AHEAD);
	}
	cc->stop = stop;
	u->stats.stops[stop]++;
	u->stack = NULL;
}
