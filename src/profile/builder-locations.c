/* The builder's locations: each frame of a chain (a kernel or user address, a return address or
 * not) made into a location of the profile once, named from the symbolizer, the JIT store or a
 * placeholder, and pseudo-frames named as they are shown. Used by builder.c and by the runtimes'
 * merges. */
#include "profile/builder-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "symbolize/dwarf-lines.h"
#include "util/strbuf.h"

/* Each (mapping, address, return address or not) is resolved once; in JIT code, once per piece
 * of code that was there (jit: its id, 0 for none). */
struct loc_key {
	const struct hs_builder *b;
	uint32_t mapping;
	uint64_t addr;
	uint32_t jit;
	bool ret;
};

static bool loc_key_eq(const void *ctx, uint32_t id)
{
	const struct loc_key *k = ctx;
	const struct hs_loc_cache_entry *e = &k->b->loc_cache.v[id];
	return e->mapping == k->mapping && e->addr == k->addr && e->ret == k->ret && e->jit == k->jit;
}

static uint64_t loc_hash(uint32_t mapping, uint64_t addr, bool ret, uint32_t jit)
{
	return hs_hash_combine(hs_hash_u64(addr ^ ((uint64_t)jit << 40)), ((uint64_t)mapping << 1) | ret);
}

static uint32_t cached_jit_loc(struct hs_builder *b, uint32_t mapping, uint64_t addr, bool ret, uint32_t jit)
{
	struct loc_key k = {b, mapping, addr, jit, ret};
	uint32_t id = hs_index_find(&b->loc_ix, loc_hash(mapping, addr, ret, jit), loc_key_eq, &k);
	return id == UINT32_MAX ? 0 : b->loc_cache.v[id].loc;
}

static uint32_t cached_loc(struct hs_builder *b, uint32_t mapping, uint64_t addr, bool ret)
{
	return cached_jit_loc(b, mapping, addr, ret, 0);
}

static void cache_jit_loc(struct hs_builder *b, uint32_t mapping, uint64_t addr, bool ret, uint32_t jit, uint32_t loc)
{
	struct hs_loc_cache_entry e = {mapping, loc, addr, jit, ret};
	hs_index_insert(&b->loc_ix, loc_hash(mapping, addr, ret, jit), (uint32_t)b->loc_cache.n);
	hs_vec_push(&b->loc_cache, e);
}

static void cache_loc(struct hs_builder *b, uint32_t mapping, uint64_t addr, bool ret, uint32_t loc)
{
	cache_jit_loc(b, mapping, addr, ret, 0, loc);
}

uint32_t hs_builder_named_location(struct hs_builder *b, uint32_t mapping, uint64_t addr, uint8_t kind, const char *name)
{
	uint32_t nm = hs_profile_intern_str(b->p, name);
	struct hs_line ln = {hs_profile_function(b->p, nm, nm, 0, 0), 0};
	return hs_profile_location(b->p, mapping, addr, kind, &ln, 1);
}

/* A function named after a symbol or a DWARF linkage name: shown demangled, with the name as
 * it is kept as the system name. Those names live as long as the symbolizer: each is demangled
 * once. */
uint32_t hs_builder_symbol_function(struct hs_builder *b, const char *sym, const char *file)
{
	uint32_t sys = hs_profile_intern_str(b->p, sym), nm = sys;
	uint64_t cached;

	if (!b->opts.no_demangle && sym[0] == '_') {
		if (hs_u64map_get(&b->demangled, (uintptr_t)sym, &cached)) {
			nm = (uint32_t)cached;
		} else {
			char *d = hs_demangle(sym);
			if (d)
				nm = hs_profile_intern_str(b->p, d);
			free(d);
			hs_u64map_put(&b->demangled, (uintptr_t)sym, nm);
		}
	}
	return hs_profile_function(b->p, nm, sys, file ? hs_profile_intern_str(b->p, file) : 0, 0);
}

/* A location with the inline chain the symbolizer found, innermost first. */
static uint32_t frames_location(struct hs_builder *b, uint32_t mapping, uint64_t addr, uint8_t kind,
				const struct hs_sym_frame *f, int n)
{
	struct hs_line lines[HS_DWARF_MAX_INLINE];

	for (int i = 0; i < n; i++) {
		lines[i].function = hs_builder_symbol_function(b, f[i].name, f[i].file);
		lines[i].line = f[i].line;
	}
	return hs_profile_location(b->p, mapping, addr, kind, lines, (uint32_t)n);
}

static void hex(char *out, const uint8_t *id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = '\0';
}

/* "[libc.so.6]" for a module without a symbol at that address. */
static void module_placeholder(struct hs_strbuf *sb, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	if (!*base)
		base = "unknown";
	n = strlen(base);
	hs_strbuf_reset(sb);
	if (base[0] == '[' && base[n - 1] == ']')
		hs_strbuf_add(sb, base, n);
	else
		hs_strbuf_addf(sb, "[%s]", base);
}

static uint32_t user_mapping(struct hs_builder *b, struct hs_map *map)
{
	struct hs_dso *d = map->dso;
	struct hs_mapping m = {0};
	char bid[41];

	if (map->profile_mapping)
		return map->profile_mapping;
	d->period = b->model.period; /* its first frame in this period */
	m.start = map->start;
	m.limit = map->end;
	m.offset = map->pgoff;
	m.file = hs_profile_intern_str(b->p, d->path);
	if (d->build_id_size) {
		hex(bid, d->build_id, d->build_id_size);
		m.build_id = hs_profile_intern_str(b->p, bid);
	} else if (d->kind != HS_DSO_ANON) {
		/* the recording names none (a live one never does): the file's own, once loaded. Not
		 * kept in the dso, whose identity is its device and inode, which find it again */
		const struct hs_elf_symtab *st = hs_symbolizer_table(&b->sym, d);
		if (st && st->build_id_size) {
			hex(bid, st->build_id, st->build_id_size);
			m.build_id = hs_profile_intern_str(b->p, bid);
		}
	}
	m.kind = d->kind == HS_DSO_ANON ? HS_KIND_JIT : HS_KIND_USER;
	if (d->kind == HS_DSO_FILE) {
		/* where the file's own addresses start: pprof's tools need them (see pprof.c) */
		const struct hs_elf_symtab *st = hs_symbolizer_table(&b->sym, d);
		uint64_t va;
		if (st && hs_elf_symtab_offset_to_vaddr(st, map->pgoff, &va) && va <= map->start)
			m.elf_base = map->start - va;
	}
	map->profile_mapping = hs_profile_mapping(b->p, &m);
	return map->profile_mapping;
}

/* A JIT function: its name, and its source line when the jitdump gives one. */
static uint32_t jit_named_location(struct hs_builder *b, uint32_t mapping, uint64_t addr, const struct hs_jit_sym *js)
{
	uint32_t nm = hs_profile_intern_str(b->p, js->name), file = js->file ? hs_profile_intern_str(b->p, js->file) : 0;
	struct hs_line ln = {hs_profile_function(b->p, nm, nm, file, 0), js->line};
	uint32_t loc = hs_profile_location(b->p, mapping, addr, HS_KIND_JIT, &ln, 1);

	b->p->locations.v[loc].sym_off = js->offset;
	return loc;
}

/* A frame in anonymous executable memory: JIT code. Named now when the jitdump knows the code
 * that is there at this sample's time (the cache key is that code, so a re-JIT at the same
 * address is another location); else a placeholder location, named by hs_builder_finish(). */
static uint32_t jit_location(struct hs_builder *b, int32_t pid, struct hs_map *map, uint32_t mapping, uint64_t addr,
			     bool ret)
{
	struct hs_jit *j = &b->model.jit;
	uint64_t at = addr - ret, now = b->model.now;
	const struct hs_jit_code *c;
	struct hs_jit_sym js;
	struct hs_strbuf sb = {0};
	uint32_t loc, id;

	hs_jit_note_process(j, pid);
	c = hs_jit_find(j, pid, at, now);
	id = c ? c->id : 0;
	loc = cached_jit_loc(b, mapping, addr, ret, id);
	if (!loc && c && hs_symbolize_jit(&b->sym, &b->model, pid, at, now, false, &js)) {
		loc = jit_named_location(b, mapping, addr, &js);
		cache_jit_loc(b, mapping, addr, ret, id, loc);
	} else if (!loc) {
		struct hs_jit_pending pd = {0, pid, at, now};
		module_placeholder(&sb, map->dso->path);
		loc = hs_builder_named_location(b, mapping, addr, HS_KIND_JIT, hs_strbuf_str(&sb));
		hs_strbuf_release(&sb);
		cache_jit_loc(b, mapping, addr, ret, 0, loc);
		pd.loc = loc;
		hs_vec_push(&b->jit_pending, pd);
	}
	/* perf maps grow as the runtime compiles: read it again now and then while the process
	 * lives, in case it is gone (or its container) at the end */
	if (!id && b->opts.live)
		hs_jit_perfmap_read(j, pid, now, 1000000000ULL, false);
	return loc;
}

/* stable: the answer holds while the process's mappings stay (not JIT code, which the
 * runtime's maps name as they change, nor an address outside every mapping, which is counted) */
static uint32_t user_location(struct hs_builder *b, int32_t pid, uint64_t addr, bool ret, bool *stable)
{
	struct hs_map *map = hs_model_find_map(&b->model, pid, addr);
	struct hs_strbuf sb = {0};
	struct hs_sym_frame frames[HS_DWARF_MAX_INLINE];
	uint64_t sym_off = 0;
	int nf;
	uint32_t mapping, loc;
	uint8_t kind;

	if (!map) {
		b->stats.unmapped_frames++;
		loc = cached_loc(b, 0, addr, ret);
		if (!loc) {
			loc = hs_builder_named_location(b, 0, addr, HS_KIND_PSEUDO, "[unknown]");
			cache_loc(b, 0, addr, ret, loc);
		}
		return loc;
	}
	mapping = user_mapping(b, map);
	if (map->dso->kind == HS_DSO_ANON)
		return jit_location(b, pid, map, mapping, addr, ret);
	*stable = true;
	loc = cached_loc(b, mapping, addr, ret);
	if (loc)
		return loc;
	kind = HS_KIND_USER;
	if (b->opts.prefetch_dwarf)
		hs_symbolizer_prefetch_dwarf(&b->sym, map->dso); /* nothing when started already */
	if (b->opts.prefetch_dwarf && hs_symbolizer_dwarf_pending(&b->sym, map->dso)) {
		/* named at the end, when its DWARF is open: a placeholder now */
		struct hs_user_pending pd = {0, map->dso, addr - ret - map->start + map->pgoff, addr, ret};
		uint32_t nm;
		struct hs_line ln;

		module_placeholder(&sb, map->dso->path);
		/* a location of its own for a return address (line 1 until named): the same address
		 * as a leaf is named with other frames, and the two must not share one */
		nm = hs_profile_intern_str(b->p, hs_strbuf_str(&sb));
		ln = (struct hs_line){hs_profile_function(b->p, nm, nm, 0, 0), ret};
		pd.loc = hs_profile_location(b->p, mapping, addr, kind, &ln, 1);
		hs_strbuf_release(&sb);
		hs_vec_push(&b->user_pending, pd);
		cache_loc(b, mapping, addr, ret, pd.loc);
		return pd.loc;
	}
	if (
	    (nf = hs_symbolize_user_frames(&b->sym, map->dso, addr - ret - map->start + map->pgoff, frames,
					   HS_DWARF_MAX_INLINE, &sym_off)) > 0) {
		loc = frames_location(b, mapping, addr, kind, frames, nf);
		b->p->locations.v[loc].sym_off = sym_off + ret;
	} else {
		module_placeholder(&sb, map->dso->path);
		loc = hs_builder_named_location(b, mapping, addr, kind, hs_strbuf_str(&sb));
		hs_strbuf_release(&sb);
	}
	cache_loc(b, mapping, addr, ret, loc);
	return loc;
}

static uint32_t kernel_mapping(struct hs_builder *b, const char *module)
{
	struct hs_strbuf sb = {0};
	uint32_t file;
	uint64_t id;
	struct hs_mapping m = {0};

	if (module)
		hs_strbuf_addf(&sb, "[%s]", module);
	else
		hs_strbuf_adds(&sb, "[kernel.kallsyms]");
	file = hs_profile_intern_str(b->p, hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
	if (hs_u64map_get(&b->kernel_maps, file, &id))
		return (uint32_t)id;
	m.start = KERNEL_START;
	m.limit = UINT64_MAX;
	m.file = file;
	m.kind = HS_KIND_KERNEL;
	id = hs_profile_mapping(b->p, &m);
	hs_u64map_put(&b->kernel_maps, file, id);
	return (uint32_t)id;
}

static uint32_t kernel_location(struct hs_builder *b, uint64_t addr, bool ret)
{
	struct hs_sym sym;
	uint32_t loc = cached_loc(b, UINT32_MAX, addr, ret), mapping;

	if (loc)
		return loc;
	if (hs_symbolize_kernel(&b->sym, addr - ret, &sym)) {
		mapping = kernel_mapping(b, sym.module);
		loc = hs_builder_named_location(b, mapping, addr, HS_KIND_KERNEL, sym.name);
		b->p->locations.v[loc].sym_off = sym.offset + ret;
	} else {
		mapping = kernel_mapping(b, NULL);
		loc = hs_builder_named_location(b, mapping, addr, HS_KIND_KERNEL, "[kernel.kallsyms]");
	}
	cache_loc(b, UINT32_MAX, addr, ret, loc);
	return loc;
}

#define FRAME_MEMO_BITS 13

struct hs_frame_memo {
	uint64_t addr;
	uint64_t gen;  /* the model's, when made */
	int32_t pid;   /* INT32_MIN for the kernel */
	uint32_t loc;  /* 0: empty */
	bool ret;
};

/* A frame's location, by way of the memo; *stable is cleared when it may change before the
 * model does (and cannot be remembered). */
uint32_t hs_builder_frame_location(struct hs_builder *b, int32_t pid, const struct hs_cc_frame *f, bool *stable_ret)
{
	int32_t key = f->kernel ? INT32_MIN : pid;
	struct hs_frame_memo *m;
	bool stable = f->kernel;
	uint32_t loc;

	if (!b->frame_memo)
		b->frame_memo = hs_xcalloc(1u << FRAME_MEMO_BITS, sizeof(*b->frame_memo));
	m = &b->frame_memo[hs_hash_combine(hs_hash_u64(f->addr), (uint32_t)key * 2 + f->ret) >> (64 - FRAME_MEMO_BITS)];
	if (m->loc && m->addr == f->addr && m->pid == key && m->ret == f->ret && m->gen == b->model.gen)
		return m->loc;
	loc = f->kernel ? kernel_location(b, f->addr, f->ret) : user_location(b, pid, f->addr, f->ret, &stable);
	if (stable)
		*m = (struct hs_frame_memo){f->addr, b->model.gen, key, loc, f->ret};
	else
		*stable_ret = false;
	return loc;
}

