/* The unwind loop. One step: find the mapping of the PC (the return address - 1 after the first
 * frame), its file's CFI row, compute the CFA, load the return address, the saved frame pointer
 * and the other saved registers from the stack copy. */
#include "unwinder.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <sys/uio.h>

#include "format/elf.h"
#include "model/dso-file.h"
#include "unwind/cfi-cache.h"
#include "unwind/trampoline.h"

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

/* dso->unwind for a dso whose file cannot be opened */
static char dso_failed;

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
		else if (f && f != (void *)&dso_failed && !f->dso)
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

/* ---- tables ---- */

static void evict(struct hs_unwinder *u, const struct hs_unwind_file *keep)
{
	while (u->bytes > u->opts.cache_bytes) {
		struct hs_unwind_file *lru = NULL;
		for (size_t i = 0; i < u->files.n; i++) {
			struct hs_unwind_file *f = u->files.v[i];
			if (f->table && f != keep && (!lru || f->last_use < lru->last_use))
				lru = f;
		}
		if (!lru)
			return;
		u->bytes -= hs_cfi_table_bytes(lru->table);
		hs_cfi_table_free(lru->table);
		lru->table = NULL;
		u->stats.tables_evicted++;
	}
}

static void read_segments(struct hs_unwind_file *f, Elf *elf)
{
	size_t phnum;

	f->nsegs = 0;
	if (elf_getphdrnum(elf, &phnum))
		return;
	for (size_t i = 0; i < phnum && f->nsegs < MAX_SEGS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			f->segs[f->nsegs].offset = ph.p_offset;
			f->segs[f->nsegs].vaddr = ph.p_vaddr;
			f->segs[f->nsegs].size = HS_MAX(ph.p_filesz, ph.p_memsz);
			f->nsegs++;
		}
	}
}

/* A table compiled and stored this large has the memory its compiling took given back at once. */
#define TRIM_AFTER_BYTES ((size_t)4 << 20)

/* Builds (or rebuilds after eviction) a file's table. */
static bool build(struct hs_unwinder *u, struct hs_unwind_file *f, struct hs_dso_elf *opened)
{
	/* milliseconds, or more for a large file: the stack is moved out of the way first */
	if (u->stack && u->stack->detach) {
		u->stack->detach(u->stack->detach_ctx, u->stack);
		u->stack->detach = NULL;
	}
	struct hs_dso_elf e;
	struct hs_error err = {0};
	struct hs_cfi_cache_key key = {0};
	bool cached;
	int rc = 0;

	if (!opened) {
		if (hs_dso_elf_open(f->dso, &e)) {
			f->failed = true;
			u->stats.tables_failed++;
			return false;
		}
		opened = &e;
	}
	read_segments(f, opened->elf);
	{
		/* CFI in a separate debug file, for code built without unwind tables: its
		 * .debug_frame, when the file has none of its own (the entry's key names it) */
		struct hs_dso_elf dbg;
		bool have_dbg = !hs_elf_has_section(opened->elf, ".debug_frame") && !hs_dso_debug_open(opened, f->dso->path, &dbg);
		bool dbg_cfi = have_dbg && hs_elf_has_section(dbg.elf, ".debug_frame");

		cached = hs_cfi_cache_key(opened, dbg_cfi ? &dbg : NULL, &key) == 0 && hs_cfi_cache_load(&key, &f->table) == 0;
		if (!cached) {
			struct hs_cfi_table *mapped;
			rc = hs_cfi_table_build(opened->elf, dbg_cfi ? dbg.elf : NULL, &f->table, &err);
			/* stored, then read in place from the store rather than kept on the heap */
			if (!rc && f->table->n && key.name[0] && !hs_cfi_cache_store(&key, f->table) &&
			    !hs_cfi_cache_load(&key, &mapped)) {
				bool large = hs_cfi_table_bytes(f->table) > TRIM_AFTER_BYTES;
				hs_cfi_table_free(f->table);
				f->table = mapped;
#ifdef __GLIBC__
				/* compiling took about three times the table: given back now, not at
				 * the period's end */
				if (large)
					malloc_trim(0);
#endif
			}
		}
		if (have_dbg)
			hs_dso_elf_close(&dbg);
	}
	if (opened == &e)
		hs_dso_elf_close(&e);
	if (rc || !f->table->n) {
		hs_cfi_table_free(rc ? NULL : f->table);
		f->table = NULL;
		f->failed = true;
		u->stats.tables_failed++;
		return false;
	}
	if (cached)
		u->stats.tables_cached++;
	else
		u->stats.tables_built++;
	u->bytes += hs_cfi_table_bytes(f->table);
	evict(u, f);
	return true;
}

static struct hs_unwind_file *file_of(struct hs_unwinder *u, struct hs_dso *dso)
{
	struct hs_unwind_file *f;
	struct hs_dso_elf e;
	uint64_t key, ix;

	if (dso->unwind == &dso_failed)
		return NULL;
	if (dso->unwind)
		return dso->unwind;
	if (dso->kind == HS_DSO_ANON || hs_dso_elf_open(dso, &e)) {
		dso->unwind = &dso_failed;
		return NULL;
	}
	key = hs_dso_elf_key(&e);
	if (hs_u64map_get(&u->by_key, key, &ix)) {
		hs_dso_elf_close(&e);
		dso->unwind = u->files.v[ix];
		return dso->unwind;
	}
	f = hs_xcalloc(1, sizeof(*f));
	f->key = key;
	f->dso = dso;
	hs_u64map_put(&u->by_key, key, u->files.n);
	hs_vec_push(&u->files, f);
	build(u, f, &e);
	hs_dso_elf_close(&e);
	dso->unwind = f;
	return f;
}

static const struct hs_cfi_table *file_table(struct hs_unwinder *u, struct hs_unwind_file *f)
{
	if (!f || f->failed)
		return NULL;
	f->last_use = ++u->clock;
	if (!f->table && !build(u, f, NULL))
		return NULL;
	return f->table;
}

static bool file_vaddr(const struct hs_unwind_file *f, uint64_t off, uint64_t *ret)
{
	for (uint32_t i = 0; i < f->nsegs; i++) {
		if (off >= f->segs[i].offset && off - f->segs[i].offset < f->segs[i].size) {
			*ret = f->segs[i].vaddr + (off - f->segs[i].offset);
			return true;
		}
	}
	return false;
}

const struct hs_cfi_table *hs_unwinder_table(struct hs_unwinder *u, struct hs_dso *dso, uint64_t file_offset,
					     uint64_t *vaddr)
{
	struct hs_unwind_file *f = file_of(u, dso);
	const struct hs_cfi_table *t = file_table(u, f);

	if (!t || !file_vaddr(f, file_offset, vaddr))
		return NULL;
	return t;
}

/* Where JIT code is placed to compile its unwinding information: anywhere but 0, which marks
 * discarded functions in FDEs. */
#define JIT_BASE 0x10000

/* The compiled unwinding information of the JIT code at pc in pid now (jitdump
 * CODE_UNWINDING_INFO), and pc's address in it: the table is compiled with the code at
 * JIT_BASE, the .eh_frame after it as perf's genelf.c places it, so that moved copies share it. */
static const struct hs_cfi_table *jit_table(struct hs_unwinder *u, int32_t pid, uint64_t pc, uint64_t *vaddr)
{
	struct hs_jit *j = &u->model->jit;
	const struct hs_jit_code *c = hs_jit_find(j, pid, pc, u->model->now);
	struct hs_jit_unwind *w;

	if (!c || !c->unwind)
		return NULL;
	w = &j->unwinds.v[c->unwind - 1];
	if (!w->tried) {
		uint64_t eh = JIT_BASE + ((w->code_size + 7) & ~7ULL);
		struct hs_cfi_table *t = NULL;
		struct hs_error err = {0};

		w->tried = true;
		if (!hs_cfi_table_build_eh_frame(w->data, w->eh_frame_size, eh, w->data + w->eh_frame_size, w->hdr_size,
						 eh + w->eh_frame_size, &t, &err)) {
			if (t->n) {
				w->table = t;
				u->stats.jit_tables++;
			} else {
				hs_cfi_table_free(t);
			}
		}
	}
	if (!w->table)
		return NULL;
	*vaddr = JIT_BASE + (pc - c->start);
	return w->table;
}

/* ---- trampolines ---- */

#define TRAMP_NONE 0xff
#define TRAMPS_MAX (1u << 16)

/* The trampoline at pc by its JIT symbol, for code that cannot be read: the jitdump's code
 * there at the sample's time, else the perf map's line (read again now and then: a recording
 * read from a file has it read only at the end otherwise). Returns pc's offset in template 0,
 * or TRAMP_NONE. */
static uint32_t tramp_by_name(struct hs_unwinder *u, int32_t pid, uint64_t pc)
{
	struct hs_jit *j = &u->model->jit;
	const struct hs_jit_code *c = hs_jit_find(j, pid, pc, u->model->now);
	uint32_t len = hs_tramp_len(0);
	uint64_t start;

	if (c)
		return hs_tramp_named(hs_jit_str(j, c->name)) && c->end - c->start == len ? (uint32_t)(pc - c->start)
											  : TRAMP_NONE;
	hs_jit_perfmap_read(j, pid, u->model->now, 1000000000ULL, false);
	if (hs_tramp_named(hs_jit_perfmap_find(j, pid, pc, &start)) && pc - start < len)
		return (uint32_t)(pc - start);
	return TRAMP_NONE;
}

/* The CFI of the trampoline at pc (anonymous memory of pid, no unwinding information of its
 * own), and pc's address in it; NULL when pc is in no trampoline. Its code is read from the
 * process while it runs: the perf map and the jitdump may come later than the code runs
 * (3.13's -X perf_jit buffers its jitdump writes 4 KiB at a time: the trampolines compiled
 * last are in no file until more fill it). Cached: the same return addresses come back. */
static const struct hs_cfi_table *tramp_table(struct hs_unwinder *u, int32_t pid, const struct hs_map *map, uint64_t pc,
					      uint64_t *vaddr)
{
	uint64_t key = hs_hash_combine(hs_hash_u64((uint32_t)pid) ^ 0x7472616d70, pc), v;
	uint64_t lo = pc - map->start < HS_TRAMP_MAX_LEN ? map->start : pc - (HS_TRAMP_MAX_LEN - 1);
	uint64_t hi = HS_MIN(map->end, pc + HS_TRAMP_MAX_LEN);
	uint8_t b[2 * HS_TRAMP_MAX_LEN];
	struct iovec local = {b, hi - lo}, remote = {(void *)(uintptr_t)lo, hi - lo};
	uint32_t code = TRAMP_NONE, off;
	int ix;

	if (key == UINT64_MAX)
		key--;
	if (hs_u64map_get(&u->tramps, key, &v) && v >> 8 == pc) {
		code = v & 0xff;
	} else if (u->opts.live && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)(hi - lo)) {
		u->stats.code_reads++;
		if ((ix = hs_tramp_match(b, hi - lo, pc - lo, &off)) >= 0)
			code = (uint32_t)ix << 4 | off;
		if (u->tramps.n >= TRAMPS_MAX)
			hs_u64map_release(&u->tramps);
		hs_u64map_put(&u->tramps, key, pc << 8 | code);
	} else if ((off = tramp_by_name(u, pid, pc)) != TRAMP_NONE) {
		/* not cached: a name may come later, and code at the address then too */
		u->stats.tramp_by_name++;
		code = off;
	}
	if (code == TRAMP_NONE)
		return NULL;
	*vaddr = code & 15;
	return hs_tramp_table((int)(code >> 4));
}

/* ---- the walk ---- */

static bool load(const struct hs_stack_copy *s, uint64_t addr, uint64_t *ret)
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
static enum hs_stop beyond_copy(struct hs_unwinder *u, int32_t pid, const struct hs_stack_copy *s, uint64_t addr,
				enum hs_stop bad)
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

/* Loads lazy register r. Returns HS_STOP_COUNT, or why its value cannot be had. */
static enum hs_stop resolve(struct hs_unwinder *u, int32_t pid, const struct hs_stack_copy *stack, struct hs_regs *regs,
			    uint32_t *lazy, int r)
{
	uint64_t slot = regs->r[r];

	*lazy &= ~(1u << r);
	if (load(stack, slot, &regs->r[r]))
		return HS_STOP_COUNT;
	regs->valid &= ~(1u << r);
	return beyond_copy(u, pid, stack, slot, HS_STOP_BAD_FRAME);
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
		else if (!load(stack, base, &cfa))
			return beyond_copy(u, pid, stack, base, HS_STOP_BAD_FRAME);
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
		if (!load(stack, base, &ra))
			return beyond_copy(u, pid, stack, base, HS_STOP_BAD_FRAME);
		break;
	case HS_RULE_RSP_OFF:
		if (!HAVE(*regs, HS_DWARF_RSP))
			return HS_STOP_NO_INFO;
		base = regs->r[HS_DWARF_RSP] + (uint64_t)(int64_t)row->ra_off;
		if (!load(stack, base, &ra))
			return beyond_copy(u, pid, stack, base, HS_STOP_BAD_FRAME);
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
		rbp_ok = load(stack, base, &rbp);
		break;
	case HS_RULE_VAL_CFA_OFF:
		rbp = cfa + (uint64_t)(int64_t)row->rbp_off;
		rbp_ok = true;
		break;
	case HS_RULE_RSP_OFF:
		rbp_ok = HAVE(*regs, HS_DWARF_RSP) &&
			 load(stack, regs->r[HS_DWARF_RSP] + (uint64_t)(int64_t)row->rbp_off, &rbp);
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

/* ---- checking frame-pointer steps ---- */

/* Reads the n bytes of code before addr in map (of pid): anonymous (JIT) code from the
 * process's memory while it runs, file-backed code from the file. Never a file's pages through
 * the process: a fault on a FUSE file whose daemon does not answer would wait until SIGKILL. */
static bool read_code(struct hs_unwinder *u, int32_t pid, const struct hs_map *map, uint64_t addr, uint8_t *buf,
		      size_t n)
{
	struct hs_dso_elf e;
	const char *raw;
	size_t size = 0;
	uint64_t off;
	bool ok = false;

	if (addr - map->start < n)
		return false;
	if (map->dso->kind == HS_DSO_ANON) {
		struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)(addr - n), n};
		return u->opts.live && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
	}
	if (hs_dso_elf_open(map->dso, &e))
		return false;
	raw = elf_rawfile(e.elf, &size);
	off = map->pgoff + (addr - map->start) - n;
	if (raw && off <= size && size - off >= n) {
		memcpy(buf, raw + off, n);
		ok = true;
	}
	hs_dso_elf_close(&e);
	return ok;
}

/* Whether the n bytes at b end with a call: call rel32, or an indirect call (FF /2, through a
 * register or memory, with or without a REX prefix), or with jmp also an indirect jump (FF /4).
 * Read backwards, an instruction of every length that could end there is tried. */
static bool ends_with_call(const uint8_t *b, size_t n, bool jmp)
{
	if (n >= 5 && b[n - 5] == 0xe8)
		return true;
	for (size_t len = 2; len <= 8 && len <= n; len++) {
		const uint8_t *p = b + n - len;
		size_t k = (p[0] & 0xf0) == 0x40, need;
		uint8_t mod, op, rm;

		if (k + 2 > len || p[k] != 0xff)
			continue;
		mod = p[k + 1] >> 6;
		op = p[k + 1] >> 3 & 7;
		rm = p[k + 1] & 7;
		if (op != 2 && !(jmp && op == 4))
			continue;
		need = k + 2;
		if (mod != 3) {
			if (rm == 4) {
				if (k + 2 >= len)
					continue;
				need += 1 + (mod == 0 && (p[k + 2] & 7) == 5 ? 4 : 0); /* SIB, no base */
			} else if (mod == 0 && rm == 5) {
				need += 4; /* rip-relative */
			}
			need += mod == 1 ? 1 : mod == 2 ? 4 : 0;
		}
		if (need == len)
			return true;
	}
	return false;
}

enum ret_kind { RET_CALL = 1, RET_OTHER, RET_UNREADABLE };

#define RET_KINDS_MAX (1u << 16)

/* What precedes addr, a return address in map of pid: a call, something else, or unknown (the
 * code cannot be read: a process gone, JIT code of a recording read from a file). Cached: the
 * same return addresses come back sample after sample. */
static enum ret_kind ret_kind(struct hs_unwinder *u, int32_t pid, const struct hs_map *map, uint64_t addr)
{
	uint64_t key = hs_hash_combine(hs_hash_u64((uint32_t)pid), addr), v;
	uint8_t b[8];
	enum ret_kind k;

	if (key == UINT64_MAX)
		key--;
	if (hs_u64map_get(&u->ret_kinds, key, &v) && v >> 2 == addr)
		return (enum ret_kind)(v & 3);
	u->stats.code_reads++;
	if (!read_code(u, pid, map, addr, b, sizeof(b))) {
		u->stats.code_unreadable++;
		k = RET_UNREADABLE;
	} else {
		/* runtimes push return addresses by hand too: HotSpot's template interpreter pushes
		 * the return entry of an invoke bytecode, which follows the indirect jump that
		 * dispatches the bytecode before it, and jumps to the method */
		k = ends_with_call(b, sizeof(b), map->dso->kind == HS_DSO_ANON) ? RET_CALL : RET_OTHER;
	}
	if (u->ret_kinds.n >= RET_KINDS_MAX)
		hs_u64map_release(&u->ret_kinds);
	hs_u64map_put(&u->ret_kinds, key, addr << 2 | k);
	return k;
}

/* The frame-pointer step reads past this much of a frame for its own frame record. */
#define FP_SCAN_MAX 4096

/* The frame record (saved rbp, return address) of a frame that saved rbp without making it its
 * frame pointer, between the stack pointer and rbp: a word equal to rbp, the frame pointer of
 * a caller further up, followed by a return address into code after a call. HotSpot's compiled
 * Java methods without -XX:+PreserveFramePointer save rbp that way beside their return address
 * (leaving rbp to the interpreter frame that called them: a step through rbp skips them all, and
 * their callers show the JVM's generated entry code calling a method directly); so does any function
 * sampled between its "push %rbp" and its "mov %rsp, %rbp". Returns its address, or 0. */
static uint64_t own_record(struct hs_unwinder *u, int32_t pid, const struct hs_stack_copy *stack, uint64_t rsp,
			   uint64_t rbp)
{
	uint64_t end = rbp - rsp > FP_SCAN_MAX ? rsp + FP_SCAN_MAX : rbp;

	for (uint64_t a = (rsp + 7) & ~7ULL; a + 8 < end; a += 8) {
		uint64_t w, ra;
		struct hs_map *m;

		if (!load(stack, a, &w))
			break;
		if (w != rbp || !load(stack, a + 8, &ra) || !ra)
			continue;
		m = hs_model_find_map(u->model, pid, ra - 1);
		if (m && ret_kind(u, pid, m, ra) != RET_OTHER)
			return a;
	}
	return 0;
}

/* The frame-pointer step: [rbp] holds the caller's rbp, [rbp+8] the return address. Code
 * without unwind information is walked that way (JIT code), so each step is checked: rbp must be
 * on the thread's stack, above the stack pointer, the frame pointer of this frame rather than a
 * caller's, and the return address code after a call. */
static enum hs_stop fp_step(struct hs_unwinder *u, int32_t pid, struct hs_regs *regs, const struct hs_stack_copy *stack)
{
	uint64_t rbp = regs->r[HS_DWARF_RBP], rsp = regs->r[HS_DWARF_RSP], next_rbp, ra = 0, rec;
	struct hs_map *map;
	enum ret_kind k;

	if (!HAVE(*regs, HS_DWARF_RBP))
		return HS_STOP_NO_INFO;
	if (rbp == 0)
		return HS_STOP_END;
	if ((rbp & 7) || (HAVE(*regs, HS_DWARF_RSP) && rbp < rsp)) {
		u->stats.fp_outside_stack++;
		return HS_STOP_BAD_FP;
	}
	if (HAVE(*regs, HS_DWARF_RSP) && (rec = own_record(u, pid, stack, rsp, rbp))) {
		/* this frame's own record: its caller is there, and rbp is the caller's already (it
		 * may even lie past the copy) */
		load(stack, rec + 8, &ra);
		next_rbp = rbp;
		rbp = rec;
		u->stats.fp_own_records++;
	} else if (!load(stack, rbp, &next_rbp) || !load(stack, rbp + 8, &ra)) {
		enum hs_stop stop = beyond_copy(u, pid, stack, rbp + 8, HS_STOP_BAD_FP);
		if (stop == HS_STOP_BAD_FP)
			u->stats.fp_outside_stack++;
		return stop;
	} else if (ra) {
		map = hs_model_find_map(u->model, pid, ra - 1);
		if (!map) {
			u->stats.fp_not_code++;
			return HS_STOP_BAD_FP;
		}
		k = ret_kind(u, pid, map, ra);
		if (k == RET_OTHER) {
			u->stats.fp_not_after_call++;
			return HS_STOP_BAD_FP;
		}
	}
	regs->valid &= (1u << HS_DWARF_RBP) | (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RA);
	regs->r[HS_DWARF_RSP] = rbp + 16;
	regs->r[HS_DWARF_RBP] = next_rbp;
	regs->r[HS_DWARF_RA] = ra;
	regs->valid |= (1u << HS_DWARF_RSP) | (1u << HS_DWARF_RA);
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
			t = jit_table(u, pid, lookup, &vaddr);
			if (!t && (t = tramp_table(u, pid, map, lookup, &vaddr))) {
				u->stats.tramp_steps++;
				tramp = true;
			}
		} else {
			f = file_of(u, map->dso);
			t = file_table(u, f);
			if (t && !file_vaddr(f, lookup - map->start + map->pgoff, &vaddr))
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
			stop = fp_step(u, pid, &regs, stack);
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
