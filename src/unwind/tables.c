/* The unwinding table of a frame's code: its ELF file's (compiled lazily, cached by build-id,
 * evicted least recently used past the memory bound), its JIT code's (jitdump unwinding
 * information), or its runtime trampoline's. */
#include "unwind/unwinder-internal.h"

#include <gelf.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/uio.h>

#include "format/elf.h"
#include "model/dso-file.h"
#include "unwind/cfi-cache.h"
#include "unwind/trampoline.h"

char hs_unwind_dso_failed;

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

struct hs_unwind_file *hs_unwind_file_of(struct hs_unwinder *u, struct hs_dso *dso)
{
	struct hs_unwind_file *f;
	struct hs_dso_elf e;
	uint64_t key, ix;

	if (dso->unwind == &hs_unwind_dso_failed)
		return NULL;
	if (dso->unwind)
		return dso->unwind;
	if (dso->kind == HS_DSO_ANON || hs_dso_elf_open(dso, &e)) {
		dso->unwind = &hs_unwind_dso_failed;
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

const struct hs_cfi_table *hs_unwind_file_table(struct hs_unwinder *u, struct hs_unwind_file *f)
{
	if (!f || f->failed)
		return NULL;
	f->last_use = ++u->clock;
	if (!f->table && !build(u, f, NULL))
		return NULL;
	return f->table;
}

const struct hs_cfi_table *hs_unwinder_table(struct hs_unwinder *u, struct hs_dso *dso, uint64_t file_offset,
					     uint64_t *vaddr)
{
	struct hs_unwind_file *f = hs_unwind_file_of(u, dso);
	const struct hs_cfi_table *t = hs_unwind_file_table(u, f);

	if (!t || !hs_unwind_file_vaddr(f, file_offset, vaddr))
		return NULL;
	return t;
}

/* Where JIT code is placed to compile its unwinding information: anywhere but 0, which marks
 * discarded functions in FDEs. */
#define JIT_BASE 0x10000

/* The compiled unwinding information of the JIT code at pc in pid now (jitdump
 * CODE_UNWINDING_INFO), and pc's address in it: the table is compiled with the code at
 * JIT_BASE, the .eh_frame after it as perf's genelf.c places it, so that moved copies share it. */
const struct hs_cfi_table *hs_unwind_jit_table(struct hs_unwinder *u, int32_t pid, uint64_t pc, uint64_t *vaddr)
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
const struct hs_cfi_table *hs_unwind_tramp_table(struct hs_unwinder *u, int32_t pid, const struct hs_map *map,
						 uint64_t pc, uint64_t *vaddr)
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
