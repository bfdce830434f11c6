/* Symbol lookup with per-file caching. */
#include "symbolizer.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "format/elf.h"
#include "model/dso-file.h"
#include "symbolize/debug-cache.h"
#include "symbolize/dwarf-lines.h"
#include "symbolize/fde-names.h"

/* The DWARF of one file: from the file itself, or from its separate debug file. */
struct hs_sym_dwarf {
	struct hs_dso_elf elf; /* kept open while dw is used */
	Dwarf *dw;
	/* its supplementary file (dwz), given to libdw before it looks itself: alt_dw is dw's
	 * alternate, which dwarf_end(dw) leaves to us */
	struct hs_dso_elf alt;
	Dwarf *alt_dw;
	struct hs_dwarf_file df;
	/* opened in a thread of its own (hs_symbolizer_prefetch_dwarf): dw and df are set once
	 * it is joined */
	bool loading;
	int ready; /* set by the thread when it is done (atomic) */
	pthread_t thread;
};

/* dso->sym for a dso whose file could not be used; distinct from NULL (not tried yet). */
static char dso_failed;

#define NO_DWARF (UINT64_MAX - 1)

static void prefetch_join(struct hs_symbolizer *s);

void hs_symbolizer_init(struct hs_symbolizer *s, const struct hs_symbolizer_opts *opts)
{
	memset(s, 0, sizeof(*s));
	if (opts)
		s->opts = *opts;
	elf_version(EV_CURRENT);
}

static void dwarf_join(struct hs_symbolizer *s, struct hs_sym_dwarf *d);

static void dwarf_free(struct hs_sym_dwarf *d)
{
	hs_dwarf_file_release(&d->df);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->alt_dw)
		dwarf_end(d->alt_dw);
	hs_dso_elf_close(&d->alt);
	hs_dso_elf_close(&d->elf);
	free(d);
}

void hs_symbolizer_release(struct hs_symbolizer *s, struct hs_model *m)
{
	if (!s)
		return;
	prefetch_join(s);
	for (size_t i = 0; i < s->dwarfs.n; i++)
		dwarf_join(s, s->dwarfs.v[i]);
	if (m)
		for (size_t i = 0; i < m->dsos.n; i++)
			m->dsos.v[i]->sym = NULL;
	for (size_t i = 0; i < s->tables.n; i++)
		hs_elf_symtab_free(s->tables.v[i]);
	hs_vec_free(&s->tables);
	hs_u64map_release(&s->by_key);
	for (size_t i = 0; i < s->dwarfs.n; i++)
		dwarf_free(s->dwarfs.v[i]);
	hs_vec_free(&s->dwarfs);
	hs_u64map_release(&s->dwarf_by_key);
	hs_u64map_release(&s->dwarf_by_dso);
	for (size_t i = 0; i < s->mismatched.n; i++)
		free(s->mismatched.v[i]);
	hs_vec_free(&s->mismatched);
	hs_kallsyms_free(s->kallsyms);
	s->kallsyms = NULL;
}

/* Keeps the entries of map (key -> index in a table) whose index newix maps to a new one
 * (not UINT64_MAX), with that index. */
static void rekey(struct hs_u64map *map, const uint64_t *newix)
{
	struct hs_u64map kept = {0};

	for (size_t i = 0; i < map->cap; i++)
		if (hs_u64map_used(map, i) && newix[map->vals[i]] != UINT64_MAX)
			hs_u64map_put(&kept, map->keys[i], newix[map->vals[i]]);
	hs_u64map_release(map);
	*map = kept;
}

/* Keeps the entries v[i] whose newix[i] is not UINT64_MAX, in order, with newix[i] set to
 * where each went; drops the others. Returns how many are kept. */
static size_t pack(void **v, size_t n, uint64_t *newix, void (*drop)(void *))
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		if (newix[i] == UINT64_MAX) {
			drop(v[i]);
			continue;
		}
		newix[i] = kept;
		v[kept++] = v[i];
	}
	return kept;
}

static void drop_table(void *t)
{
	hs_elf_symtab_free(t);
}

static void drop_dwarf(void *d)
{
	dwarf_free(d);
}

void hs_symbolizer_forget(struct hs_symbolizer *s, struct hs_model *m, const uint32_t *renumber)
{
	uint64_t *newtab = hs_xmalloc((s->tables.n + 1) * sizeof(*newtab));
	uint64_t *newdw = hs_xmalloc((s->dwarfs.n + 1) * sizeof(*newdw));
	struct hs_u64map by_dso = {0}, by_ptr = {0};
	HS_VEC(size_t) kept = {0}; /* slots of dwarf_by_dso of the dsos kept */

	/* the threads opening DWARF use the entries: done with first */
	for (size_t i = 0; i < s->dwarfs.n; i++)
		dwarf_join(s, s->dwarfs.v[i]);
	/* tables: those a dso kept still points to */
	for (size_t i = 0; i < s->tables.n; i++) {
		newtab[i] = UINT64_MAX;
		hs_u64map_put(&by_ptr, (uintptr_t)s->tables.v[i], i);
	}
	for (size_t i = 0; i < m->dsos.n; i++) {
		uint64_t t;
		if (renumber[i] != UINT32_MAX && hs_u64map_get(&by_ptr, (uintptr_t)m->dsos.v[i]->sym, &t))
			newtab[t] = 0;
	}
	hs_u64map_release(&by_ptr);
	s->tables.n = pack((void **)s->tables.v, s->tables.n, newtab, drop_table);
	rekey(&s->by_key, newtab);
	/* DWARF: the entries a dso kept is found with */
	for (size_t i = 0; i < s->dwarfs.n; i++)
		newdw[i] = UINT64_MAX;
	for (size_t i = 0; i < s->dwarf_by_dso.cap; i++) {
		uint64_t id = s->dwarf_by_dso.keys[i];
		if (hs_u64map_used(&s->dwarf_by_dso, i) && id < m->dsos.n && renumber[id] != UINT32_MAX) {
			hs_vec_push(&kept, i);
			if (s->dwarf_by_dso.vals[i] != NO_DWARF)
				newdw[s->dwarf_by_dso.vals[i]] = 0;
		}
	}
	s->dwarfs.n = pack((void **)s->dwarfs.v, s->dwarfs.n, newdw, drop_dwarf);
	rekey(&s->dwarf_by_key, newdw);
	s->dwarf_cost = 0;
	for (size_t i = 0; i < s->dwarfs.n; i++)
		s->dwarf_cost += s->dwarfs.v[i]->df.cost;
	for (size_t k = 0; k < kept.n; k++) {
		uint64_t id = s->dwarf_by_dso.keys[kept.v[k]], ix = s->dwarf_by_dso.vals[kept.v[k]];
		hs_u64map_put(&by_dso, renumber[id], ix == NO_DWARF ? NO_DWARF : newdw[ix]);
	}
	hs_vec_free(&kept);
	hs_u64map_release(&s->dwarf_by_dso);
	s->dwarf_by_dso = by_dso;
	for (size_t i = 0; i < m->dsos.n; i++)
		if (renumber[i] == UINT32_MAX)
			m->dsos.v[i]->sym = NULL;
	free(newtab);
	free(newdw);
}

/* A file libelf maps: its identity and size, to find its mapping */
struct mapped_file {
	uint64_t dev, ino, size;
};

/* Whether e was opened from a file (ELF_C_READ_MMAP), not a memory image: then *ret is set. */
static bool mapped_file_of(const struct hs_dso_elf *e, struct mapped_file *ret)
{
	struct stat st;

	if (!e->elf || e->fd < 0 || e->image || fstat(e->fd, &st))
		return false;
	*ret = (struct mapped_file){st.st_dev, st.st_ino, (uint64_t)st.st_size};
	return true;
}

void hs_symbolizer_drop_pages(struct hs_symbolizer *s)
{
	HS_VEC(struct mapped_file) files = {0};
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char line[512];
	FILE *maps;

	if (s->kallsyms && s->kallsyms->map && !s->kallsyms_loading)
		madvise(s->kallsyms->map, s->kallsyms->map_len, MADV_DONTNEED); /* PROT_READ, private */
	for (size_t i = 0; i < s->dwarfs.n; i++) {
		struct mapped_file f;
		if (s->dwarfs.v[i]->loading)
			continue;
		if (mapped_file_of(&s->dwarfs.v[i]->elf, &f))
			hs_vec_push(&files, f);
		if (mapped_file_of(&s->dwarfs.v[i]->alt, &f))
			hs_vec_push(&files, f);
	}
	if (!files.n || !(maps = fopen("/proc/self/maps", "re"))) {
		hs_vec_free(&files);
		return;
	}
	/* libelf's mapping of a whole file: read-only, private, from offset 0, the file's size; the
	 * loader's mappings of a library are its segments, one of them written (relro) */
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[5];
		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu", &start, &end, perms, &off, &maj, &min, &ino) != 7 ||
		    strcmp(perms, "r--p") || off)
			continue;
		for (size_t i = 0; i < files.n; i++)
			if (files.v[i].ino == ino && files.v[i].dev == makedev(maj, min) &&
			    end - start == (files.v[i].size + page - 1) / page * page) {
				madvise((void *)(uintptr_t)start, end - start, MADV_DONTNEED);
				break;
			}
	}
	fclose(maps);
	hs_vec_free(&files);
}

/* The kernel's symbols: from the file the options name, else the running kernel's, through the
 * cache unless fresh. */
static int read_kernel(const struct hs_symbolizer *s, bool fresh, struct hs_kallsyms **ret)
{
	if (s->opts.kallsyms_path && !(fresh && s->opts.kallsyms_running))
		return hs_kallsyms_load(s->opts.kallsyms_path, ret);
	return hs_kallsyms_load_kernel(s->opts.kernel ? s->opts.kernel : &hs_running_kernel, fresh, ret);
}

static void *prefetch_main(void *arg)
{
	struct hs_symbolizer *s = arg;

	s->kallsyms_pending_rc = read_kernel(s, false, &s->kallsyms_pending);
	return NULL;
}

void hs_symbolizer_prefetch_kernel(struct hs_symbolizer *s)
{
	if (s->kallsyms_state || s->kallsyms_loading || (s->opts.kallsyms_path && !*s->opts.kallsyms_path))
		return;
	s->kallsyms_pending = NULL;
	if (pthread_create(&s->kallsyms_thread, NULL, prefetch_main, s) == 0)
		s->kallsyms_loading = true;
}

/* Takes what the prefetch thread read, once it is done. */
static void prefetch_join(struct hs_symbolizer *s)
{
	if (!s->kallsyms_loading)
		return;
	pthread_join(s->kallsyms_thread, NULL);
	s->kallsyms_loading = false;
	if (s->kallsyms_pending_rc == 0) {
		hs_kallsyms_free(s->kallsyms);
		s->kallsyms = s->kallsyms_pending;
		s->kallsyms_state = 1;
	} else if (!s->kallsyms) {
		s->kallsyms_state = s->kallsyms_pending_rc;
	}
	s->kallsyms_pending = NULL;
}

static int load_kernel(struct hs_symbolizer *s, bool fresh)
{
	struct hs_kallsyms *k = NULL;
	int rc;

	prefetch_join(s);
	if (s->opts.kallsyms_path && !*s->opts.kallsyms_path) {
		s->kallsyms_state = -ENOENT; /* told there are none for this kernel */
		return -ENOENT;
	}
	rc = read_kernel(s, fresh, &k);

	if (rc) {
		if (!s->kallsyms)
			s->kallsyms_state = rc;
		return rc;
	}
	hs_kallsyms_free(s->kallsyms);
	s->kallsyms = k;
	s->kallsyms_state = 1;
	return 0;
}

int hs_symbolizer_load_kernel(struct hs_symbolizer *s)
{
	return load_kernel(s, false);
}

bool hs_symbolize_kernel(struct hs_symbolizer *s, uint64_t addr, struct hs_sym *ret)
{
	const struct hs_ksym *k;

	if (s->kallsyms_loading)
		prefetch_join(s);
	if (!s->kallsyms_state)
		load_kernel(s, false);
	/* only the kernel can name what the cache left out or did not know of: asked once, its
	 * table answers from then on */
	if (s->kallsyms && !s->kallsyms_reread && !hs_kallsyms_covers(s->kallsyms, addr)) {
		s->kallsyms_reread = true;
		load_kernel(s, true);
	}
	if (!s->kallsyms)
		return false;
	k = hs_kallsyms_covers(s->kallsyms, addr) ? hs_kallsyms_lookup(s->kallsyms, addr) : NULL;
	/* in no symbol: a BPF program loaded since the table was read (a fresh read names it), or
	 * past the end of a section's text */
	if (!k && !s->kallsyms_reread && (!s->opts.kallsyms_path || s->opts.kallsyms_running)) {
		s->kallsyms_reread = true;
		load_kernel(s, true);
		k = s->kallsyms && hs_kallsyms_covers(s->kallsyms, addr) ? hs_kallsyms_lookup(s->kallsyms, addr) : NULL;
	}
	if (!k) {
		ret->name = HS_KERNEL_UNKNOWN;
		ret->offset = 0;
		ret->module = NULL;
		return true;
	}
	ret->name = s->kallsyms->names + k->name;
	ret->offset = addr - k->addr;
	ret->module = k->module ? s->kallsyms->names + k->module : NULL;
	return true;
}

/* Opens the dso's file (or image), and returns its table: the one already loaded for the same
 * file, or a new one. */
static struct hs_elf_symtab *load(struct hs_symbolizer *s, struct hs_dso *dso)
{
	struct hs_dso_elf e;
	struct hs_elf_symtab *st = NULL;
	uint64_t key, ix;
	int rc = hs_dso_elf_open(dso, &e);

	if (rc) {
		if (rc == -ESTALE) {
			s->stats.files_mismatched++;
			if (s->mismatched.n < 64)
				hs_vec_push(&s->mismatched, hs_xstrdup(dso->path));
		}
		else if (dso->kind != HS_DSO_ANON)
			s->stats.files_unreadable++;
		return NULL;
	}
	key = hs_dso_elf_key(&e);
	if (hs_u64map_get(&s->by_key, key, &ix)) {
		st = s->tables.v[ix];
	} else if (hs_elf_symtab_load(e.elf, &st) == 0) {
		/* a stripped file keeps its full symbol table in a separate debug file */
		struct hs_dso_elf dbg;
		struct hs_elf_symtab *full = NULL;
		if (!st->from_symtab && dso->kind == HS_DSO_FILE && !hs_dso_debug_open(&e, dso->path, &dbg)) {
			/* its .symtab, with the file's own .dynsym, PLT entries, program headers and
			 * build-id: a debug file's .plt and .rela.plt hold no bytes, its program
			 * headers no file offsets */
			if (hs_elf_symtab_load_extra(e.elf, dbg.elf, &full) == 0 && full->from_symtab) {
				hs_elf_symtab_free(st);
				st = full;
				full = NULL;
			}
			hs_elf_symtab_free(full);
			full = NULL;
			hs_dso_elf_close(&dbg);
		}
		/* else the local functions its MiniDebugInfo names (Fedora), with its .dynsym */
		if (!st->from_symtab && dso->kind == HS_DSO_FILE && !hs_dso_minidebug_open(&e, &dbg)) {
			if (hs_elf_symtab_load_extra(e.elf, dbg.elf, &full) == 0 && full->from_symtab) {
				hs_elf_symtab_free(st);
				st = full;
				s->stats.files_minidebuginfo++;
			} else {
				hs_elf_symtab_free(full);
			}
			hs_dso_elf_close(&dbg);
		}
		/* else each function its .eh_frame describes, named by its address */
		if (!st->from_symtab && dso->kind == HS_DSO_FILE)
			hs_elf_symtab_add_fde_functions(st, e.elf, dso->path);
		hs_u64map_put(&s->by_key, key, s->tables.n);
		hs_vec_push(&s->tables, st);
		s->stats.files_loaded++;
	} else {
		s->stats.files_unreadable++;
		st = NULL;
	}
	hs_dso_elf_close(&e);
	return st;
}

const struct hs_elf_symtab *hs_symbolizer_table(struct hs_symbolizer *s, struct hs_dso *dso)
{
	struct hs_elf_symtab *st = NULL;

	if (dso->sym == &dso_failed)
		return NULL;
	if (dso->sym)
		return dso->sym;
	if (dso->kind == HS_DSO_VDSO || dso->kind == HS_DSO_FILE)
		st = load(s, dso);
	dso->sym = st ? (void *)st : (void *)&dso_failed;
	return st;
}

bool hs_symbolize_user(struct hs_symbolizer *s, struct hs_dso *dso, uint64_t file_offset, struct hs_sym *ret)
{
	const struct hs_elf_symtab *st = hs_symbolizer_table(s, dso);
	const struct hs_elf_sym *sym;
	uint64_t vaddr;

	if (!st || !hs_elf_symtab_offset_to_vaddr(st, file_offset, &vaddr) || !(sym = hs_elf_symtab_lookup(st, vaddr)))
		return false;
	ret->name = hs_elf_sym_name(st, sym);
	ret->offset = vaddr - sym->addr;
	ret->module = NULL;
	return true;
}

/* An ELF image in memory with one DWARF section of one byte: enough for dwarf_begin_elf(), and
 * nothing a lookup in it can find. */
static int empty_alt(struct hs_dso_elf *ret)
{
	static const char names[] = "\0.shstrtab\0.debug_info";
	const size_t names_off = sizeof(Elf64_Ehdr) + 3 * sizeof(Elf64_Shdr), info_off = names_off + sizeof(names);
	Elf64_Ehdr eh = {0};
	Elf64_Shdr sh[3] = {{0}};
	unsigned char *img = hs_xcalloc(1, info_off + 1);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 1;
	sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = names_off, .sh_size = sizeof(names),
			     .sh_addralign = 1};
	sh[2] = (Elf64_Shdr){.sh_name = 11, .sh_type = SHT_PROGBITS, .sh_offset = info_off, .sh_size = 1,
			     .sh_addralign = 1};
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), sh, sizeof(sh));
	memcpy(img + names_off, names, sizeof(names));
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	ret->image = img;
	ret->elf = elf_memory((char *)img, info_off + 1);
	if (!ret->elf) {
		hs_dso_elf_close(ret);
		return -EBADMSG;
	}
	return 0;
}

/* A file made with dwz names its supplementary file (.gnu_debugaltlink), and libdw, asked for a
 * name or a DIE kept there, opens it itself with a blocking open() of that path: a FIFO there
 * (the path is the file's to choose) would stop us for ever. libdw is given the file first, as
 * found by hs_dso_alt_open(), or an empty one, so that it never looks. Without that, the DWARF
 * is not used at all. from is the file d->dw was read from, or the file its cache entry is of:
 * a relative name is beside that. */
static void set_alt(struct hs_sym_dwarf *d, const struct hs_dso_elf *from)
{
	const char *name;
	const void *id;
	ssize_t n;

	if (!d->dw || (n = dwelf_dwarf_gnu_debugaltlink(d->dw, &name, &id)) <= 0)
		return;
	if (!hs_dso_alt_open(from, name, id, (size_t)n, &d->alt)) {
		d->alt_dw = dwarf_begin_elf(d->alt.elf, DWARF_C_READ, NULL);
		if (!d->alt_dw)
			hs_dso_elf_close(&d->alt);
	}
	if (!d->alt_dw && !empty_alt(&d->alt)) {
		d->alt_dw = dwarf_begin_elf(d->alt.elf, DWARF_C_READ, NULL);
		if (!d->alt_dw)
			hs_dso_elf_close(&d->alt);
	}
	if (d->alt_dw) {
		dwarf_setalt(d->dw, d->alt_dw);
	} else {
		dwarf_end(d->dw);
		d->dw = NULL;
	}
}

/* d's DWARF is dw, read from the cache entry: the file itself is closed (what of it the
 * supplementary file needs kept) */
static void use_entry(struct hs_sym_dwarf *d, Dwarf *dw, const struct hs_dso_elf *entry)
{
	struct hs_dso_elf orig = d->elf;

	d->dw = dw;
	d->elf = *entry;
	set_alt(d, &orig);
	hs_dso_elf_close(&orig);
}

/* Begins d's DWARF: from its cache entry when there is one made of this very file, else from
 * the file itself (libdw decompressing its compressed sections), then writing the entry for the
 * next run out of what libdw decompressed. */
static void begin_dwarf(struct hs_sym_dwarf *d)
{
	struct hs_debug_cache_key key;
	struct hs_dso_elf entry;
	bool keyed = !hs_debug_cache_key(&d->elf, &key);
	Dwarf *dw;

	if (keyed && !hs_debug_cache_open(&key, &d->elf, &entry)) {
		if ((dw = dwarf_begin_elf(entry.elf, DWARF_C_READ, NULL))) {
			use_entry(d, dw, &entry);
			return;
		}
		hs_dso_elf_close(&entry);
	}
	d->dw = dwarf_begin_elf(d->elf.elf, DWARF_C_READ, NULL);
	if (d->dw && keyed && !hs_debug_cache_write(&key, &d->elf) && !hs_debug_cache_open(&key, &d->elf, &entry)) {
		/* read in place from the entry just written rather than from the sections libdw
		 * inflated onto the heap (all of a file's DWARF, hundreds of megabytes for some):
		 * only the pages looked up are resident */
		if ((dw = dwarf_begin_elf(entry.elf, DWARF_C_READ, NULL))) {
			dwarf_end(d->dw);
			use_entry(d, dw, &entry);
			return;
		}
		hs_dso_elf_close(&entry);
	}
	set_alt(d, &d->elf);
}

/* The DWARF for a dso's file (opened once per file), or NULL. */
/* Opening a file's DWARF decompresses and indexes its sections (tens of milliseconds for a
 * distribution's libc): the part a prefetch thread does. */
static void *dwarf_main(void *arg)
{
	struct hs_sym_dwarf *d = arg;

	begin_dwarf(d);
	hs_dwarf_file_init(&d->df, d->dw);
	hs_dwarf_file_index(&d->df);
	__atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void dwarf_join(struct hs_symbolizer *s, struct hs_sym_dwarf *d)
{
	if (!d->loading)
		return;
	pthread_join(d->thread, NULL);
	d->loading = false;
	s->dwarf_threads--;
}

/* The dso's DWARF entry: found, or opened (the file, or its separate debug file) without its
 * DWARF begun yet; NULL when it has none. */
static struct hs_sym_dwarf *dso_dwarf_entry(struct hs_symbolizer *s, struct hs_dso *dso, bool *fresh)
{
	struct hs_dso_elf e, dbg;
	struct hs_sym_dwarf *d;
	uint64_t ix, key;

	*fresh = false;
	if (hs_u64map_get(&s->dwarf_by_dso, dso->id, &ix))
		return ix == NO_DWARF ? NULL : s->dwarfs.v[ix];
	hs_u64map_put(&s->dwarf_by_dso, dso->id, NO_DWARF);
	if (dso->kind != HS_DSO_FILE || hs_dso_elf_open(dso, &e))
		return NULL;
	key = hs_dso_elf_key(&e);
	if (hs_u64map_get(&s->dwarf_by_key, key, &ix)) {
		hs_dso_elf_close(&e);
		hs_u64map_put(&s->dwarf_by_dso, dso->id, ix);
		return s->dwarfs.v[ix];
	}
	d = hs_xcalloc(1, sizeof(*d));
	d->alt.fd = -1;
	if (hs_elf_has_section(e.elf, ".debug_info")) {
		d->elf = e;
	} else if (!hs_dso_debug_open(&e, dso->path, &dbg) && hs_elf_has_section(dbg.elf, ".debug_info")) {
		hs_dso_elf_close(&e);
		d->elf = dbg;
	} else {
		hs_dso_elf_close(&e);
		free(d);
		return NULL;
	}
	ix = s->dwarfs.n;
	hs_vec_push(&s->dwarfs, d);
	hs_u64map_put(&s->dwarf_by_key, key, ix);
	hs_u64map_put(&s->dwarf_by_dso, dso->id, ix);
	*fresh = true;
	return d;
}

/* d's DWARF begun again from the same ELF, what libdw kept of its units (freed only by
 * dwarf_end()) and the indexes made of them forgotten. The ELF stays open: names found before
 * point into its sections, and are still good. */
static void dwarf_restart(struct hs_symbolizer *s, struct hs_sym_dwarf *d)
{
	s->dwarf_cost -= d->df.cost;
	hs_dwarf_file_release(&d->df);
	dwarf_end(d->dw);
	d->dw = dwarf_begin_elf(d->elf.elf, DWARF_C_READ, NULL);
	if (d->dw && d->alt_dw)
		dwarf_setalt(d->dw, d->alt_dw);
	hs_dwarf_file_init(&d->df, d->dw);
	s->stats.dwarf_restarts++;
}

/* Over the budget: the files that hold the most begun again until under half of it, and the
 * pages of the files read in place given back (they stay in the page cache) */
static void dwarf_shrink(struct hs_symbolizer *s)
{
	while (s->dwarf_cost > HS_SYM_DWARF_BUDGET / 2) {
		struct hs_sym_dwarf *big = NULL;
		for (size_t i = 0; i < s->dwarfs.n; i++) {
			struct hs_sym_dwarf *d = s->dwarfs.v[i];
			if (!d->loading && d->dw && d->df.cost && (!big || d->df.cost > big->df.cost))
				big = d;
		}
		if (!big)
			break;
		dwarf_restart(s, big);
	}
	hs_symbolizer_drop_pages(s);
}

static struct hs_dwarf_file *dso_dwarf(struct hs_symbolizer *s, struct hs_dso *dso)
{
	bool fresh;
	struct hs_sym_dwarf *d = dso_dwarf_entry(s, dso, &fresh);

	if (!d)
		return NULL;
	if (fresh) {
		begin_dwarf(d);
		hs_dwarf_file_init(&d->df, d->dw);
	}
	dwarf_join(s, d);
	return &d->df;
}

void hs_symbolizer_prefetch_dwarf(struct hs_symbolizer *s, struct hs_dso *dso)
{
	bool fresh;
	struct hs_sym_dwarf *d;

	if (s->opts.no_dwarf || s->dwarf_threads >= HS_SYM_MAX_DWARF_THREADS)
		return;
	d = dso_dwarf_entry(s, dso, &fresh);
	if (!d || !fresh)
		return;
	if (pthread_create(&d->thread, NULL, dwarf_main, d) == 0) {
		d->loading = true;
		s->dwarf_threads++;
	} else {
		begin_dwarf(d);
		hs_dwarf_file_init(&d->df, d->dw);
	}
}

bool hs_symbolizer_dwarf_pending(struct hs_symbolizer *s, struct hs_dso *dso)
{
	uint64_t ix;
	struct hs_sym_dwarf *d;

	if (s->opts.no_dwarf || !s->dwarf_threads || !hs_u64map_get(&s->dwarf_by_dso, dso->id, &ix) || ix == NO_DWARF)
		return false;
	d = s->dwarfs.v[ix];
	return d->loading && !__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE);
}

int hs_symbolize_user_frames(struct hs_symbolizer *s, struct hs_dso *dso, uint64_t file_offset,
			     struct hs_sym_frame *out, int max, uint64_t *sym_off)
{
	const struct hs_elf_symtab *st = hs_symbolizer_table(s, dso);
	const struct hs_elf_sym *sym = NULL;
	struct hs_src_frame src[HS_DWARF_MAX_INLINE];
	struct hs_dwarf_file *dw = NULL;
	uint64_t vaddr;
	int n = 0;

	if (!st || max <= 0 || !hs_elf_symtab_offset_to_vaddr(st, file_offset, &vaddr))
		return 0;
	sym = hs_elf_symtab_lookup(st, vaddr);
	if (sym)
		*sym_off = vaddr - sym->addr;
	/* before the lookup: what the last one returned points into what is forgotten */
	if (s->dwarf_cost > HS_SYM_DWARF_BUDGET)
		dwarf_shrink(s);
	if (!s->opts.no_dwarf && (dw = dso_dwarf(s, dso))) {
		uint64_t cost = dw->cost;
		n = hs_dwarf_frames(dw, vaddr, src, HS_MIN(max, HS_DWARF_MAX_INLINE));
		s->dwarf_cost += dw->cost - cost;
	}
	for (int i = 0; i < n; i++) {
		/* a linkage name says more (namespace, class, parameters) than DW_AT_name */
		out[i].name = src[i].linkage ? src[i].linkage : src[i].name;
		out[i].file = src[i].file;
		out[i].line = src[i].line;
	}
	if (n && sym) {
		/* the function the code belongs to is named as the symbol table names it */
		out[n - 1].name = hs_elf_sym_name(st, sym);
	} else if (!n && sym) {
		out[0].name = hs_elf_sym_name(st, sym);
		out[0].file = NULL;
		out[0].line = 0;
		if (dw && hs_dwarf_frames(dw, vaddr, src, 1) == 0 && src[0].file) {
			out[0].file = src[0].file; /* a line without a function scope */
			out[0].line = src[0].line;
		}
		n = 1;
	}
	return n;
}

bool hs_symbolize_jit(struct hs_symbolizer *s, struct hs_model *m, int32_t pid, uint64_t addr, uint64_t time,
		      bool perf_maps, struct hs_jit_sym *ret)
{
	const struct hs_jit_code *c = hs_jit_find(&m->jit, pid, addr, time);
	const char *name;
	uint64_t start;

	memset(ret, 0, sizeof(*ret));
	if (c) {
		ret->name = hs_jit_str(&m->jit, c->name);
		ret->offset = addr - c->start;
		ret->code = c->id;
		hs_jit_code_line(&m->jit, c, addr, &ret->file, &ret->line);
		s->stats.jit_jitdump++;
		return true;
	}
	if (perf_maps && (name = hs_jit_perfmap_find(&m->jit, pid, addr, &start))) {
		ret->name = name;
		ret->offset = addr - start;
		s->stats.jit_perf_map++;
		return true;
	}
	if (perf_maps)
		s->stats.jit_unnamed++;
	return false;
}

size_t hs_running_kernel_build_id(uint8_t *buf, size_t cap)
{
	FILE *f = fopen("/sys/kernel/notes", "re");
	uint8_t notes[4096];
	size_t n, off = 0;

	if (!f)
		return 0;
	n = fread(notes, 1, sizeof(notes), f);
	fclose(f);
	/* a sequence of ELF notes: namesz, descsz, type, name (padded to 4), desc (padded to 4) */
	while (n - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + ((namesz + 3u) & ~3u);
		if (namesz > n || descsz > n || desc_off > n || descsz > n - desc_off)
			break;
		if (type == 3 && namesz == 4 && !memcmp(notes + name_off, "GNU", 4)) {
			size_t k = HS_MIN((size_t)descsz, cap);
			memcpy(buf, notes + desc_off, k);
			return k;
		}
		off = desc_off + ((descsz + 3u) & ~3u);
	}
	return 0;
}
