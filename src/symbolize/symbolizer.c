/* Symbol lookup with per-file caching. */
#include "symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* dso->sym for a dso whose file could not be used; distinct from NULL (not tried yet). */
static char dso_failed;

#define VDSO_MAX_SIZE (1u << 20)

void hs_symbolizer_init(struct hs_symbolizer *s, const struct hs_symbolizer_opts *opts)
{
	memset(s, 0, sizeof(*s));
	if (opts)
		s->opts = *opts;
	elf_version(EV_CURRENT);
}

void hs_symbolizer_release(struct hs_symbolizer *s, struct hs_model *m)
{
	if (!s)
		return;
	if (m)
		for (size_t i = 0; i < m->dsos.n; i++)
			m->dsos.v[i]->sym = NULL;
	for (size_t i = 0; i < s->tables.n; i++)
		hs_elf_symtab_free(s->tables.v[i]);
	hs_vec_free(&s->tables);
	hs_u64map_release(&s->by_build_id);
	hs_u64map_release(&s->by_inode);
	hs_kallsyms_free(s->kallsyms);
	s->kallsyms = NULL;
}

int hs_symbolizer_load_kernel(struct hs_symbolizer *s)
{
	struct hs_kallsyms *k = NULL;
	int rc = hs_kallsyms_load(s->opts.kallsyms_path ? s->opts.kallsyms_path : "/proc/kallsyms", &k);

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

bool hs_symbolize_kernel(struct hs_symbolizer *s, uint64_t addr, struct hs_sym *ret)
{
	const struct hs_ksym *k;

	if (!s->kallsyms_state)
		hs_symbolizer_load_kernel(s);
	if (!s->kallsyms || !(k = hs_kallsyms_lookup(s->kallsyms, addr)))
		return false;
	ret->name = s->kallsyms->names + k->name;
	ret->offset = addr - k->addr;
	ret->module = k->module ? s->kallsyms->names + k->module : NULL;
	return true;
}

static uint64_t build_id_key(const uint8_t *id, size_t n)
{
	return hs_hash_bytes(id, n, 0xb1d) & ~1ULL; /* never UINT64_MAX, the map's empty key */
}

static uint64_t inode_key(dev_t dev, ino_t ino)
{
	return hs_hash_combine(hs_hash_u64((uint64_t)dev), (uint64_t)ino) & ~1ULL;
}

static struct hs_elf_symtab *cached(struct hs_symbolizer *s, struct hs_u64map *m, uint64_t key)
{
	uint64_t ix;
	return hs_u64map_get(m, key, &ix) ? s->tables.v[ix] : NULL;
}

static struct hs_elf_symtab *remember(struct hs_symbolizer *s, struct hs_elf_symtab *st, bool have_inode, dev_t dev,
				      ino_t ino)
{
	uint64_t ix = s->tables.n;

	hs_vec_push(&s->tables, st);
	if (st->build_id_size)
		hs_u64map_put(&s->by_build_id, build_id_key(st->build_id, st->build_id_size), ix);
	if (have_inode)
		hs_u64map_put(&s->by_inode, inode_key(dev, ino), ix);
	s->stats.files_loaded++;
	return st;
}

/* The vdso is the same image in every process of one ABI: read it from the process that mapped
 * it if possible, else from our own. */
static struct hs_elf_symtab *load_vdso(struct hs_symbolizer *s, struct hs_dso *dso)
{
	unsigned char *img = NULL;
	size_t size = 0;
	struct hs_elf_symtab *st = NULL;
	Elf *elf;

	if (dso->pid_hint > 0) {
		char path[64];
		int fd;
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)dso->pid_hint);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			GElf_Ehdr eh;
			unsigned char hdr[64];
			if (pread(fd, hdr, sizeof(hdr), (off_t)dso->start_hint) == (ssize_t)sizeof(hdr) &&
			    !memcmp(hdr, ELFMAG, SELFMAG) && hdr[EI_CLASS] == ELFCLASS64) {
				memcpy(&eh, hdr, sizeof(hdr) < sizeof(eh) ? sizeof(hdr) : sizeof(eh));
				size = (size_t)(eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize);
				if (size > 0 && size <= VDSO_MAX_SIZE) {
					img = hs_xmalloc(size);
					if (pread(fd, img, size, (off_t)dso->start_hint) != (ssize_t)size) {
						free(img);
						img = NULL;
					}
				}
			}
			close(fd);
		}
	}
	if (!img) {
		const unsigned char *own = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
		GElf_Ehdr eh;
		if (!own)
			return NULL;
		memcpy(&eh, own, sizeof(eh) < 64 ? sizeof(eh) : 64);
		size = (size_t)(eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize);
		if (!size || size > VDSO_MAX_SIZE)
			return NULL;
		img = hs_xmalloc(size);
		memcpy(img, own, size);
	}
	elf = elf_memory((char *)img, size);
	if (elf) {
		uint8_t bid[20];
		size_t n = hs_elf_build_id(elf, bid, sizeof(bid));
		st = n ? cached(s, &s->by_build_id, build_id_key(bid, n)) : NULL;
		if (!st && hs_elf_symtab_load(elf, &st) == 0)
			st = remember(s, st, false, 0, 0);
		elf_end(elf);
	}
	free(img);
	return st;
}

static struct hs_elf_symtab *load_file(struct hs_symbolizer *s, struct hs_dso *dso)
{
	struct hs_elf_symtab *st = NULL;
	struct stat sb;
	bool captured = dso->fd >= 0;
	int fd = captured ? dup(dso->fd) : open(dso->path, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0) {
		s->stats.files_unreadable++;
		return NULL;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		s->stats.files_unreadable++;
		return NULL;
	}
	/* A file found by its path must be the one the process mapped. */
	if (!captured && !dso->build_id_size && dso->ino &&
	    (sb.st_ino != dso->ino || major(sb.st_dev) != dso->maj || minor(sb.st_dev) != dso->min)) {
		close(fd);
		s->stats.files_mismatched++;
		return NULL;
	}
	if (dso->build_id_size && (st = cached(s, &s->by_build_id, build_id_key(dso->build_id, dso->build_id_size)))) {
		close(fd);
		return st;
	}
	if ((st = cached(s, &s->by_inode, inode_key(sb.st_dev, sb.st_ino)))) {
		close(fd);
		if (dso->build_id_size && (st->build_id_size != dso->build_id_size ||
					   memcmp(st->build_id, dso->build_id, dso->build_id_size))) {
			s->stats.files_mismatched++;
			return NULL;
		}
		return st;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		s->stats.files_unreadable++;
		return NULL;
	}
	if (hs_elf_symtab_load(elf, &st) != 0) {
		s->stats.files_unreadable++;
		st = NULL;
	} else if (dso->build_id_size && (st->build_id_size != dso->build_id_size ||
					  memcmp(st->build_id, dso->build_id, dso->build_id_size))) {
		hs_elf_symtab_free(st);
		st = NULL;
		s->stats.files_mismatched++;
	} else {
		st = remember(s, st, true, sb.st_dev, sb.st_ino);
	}
	elf_end(elf);
	close(fd);
	return st;
}

const struct hs_elf_symtab *hs_symbolizer_table(struct hs_symbolizer *s, struct hs_dso *dso)
{
	struct hs_elf_symtab *st = NULL;

	if (dso->sym == &dso_failed)
		return NULL;
	if (dso->sym)
		return dso->sym;
	if (dso->kind == HS_DSO_VDSO)
		st = load_vdso(s, dso);
	else if (dso->kind == HS_DSO_FILE)
		st = load_file(s, dso);
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
