/* The CFI table compiler: finds an ELF file's call frame information, has its FDEs run into rows
 * (unwind/cfi-program.c, which also keeps the rows), then sorts the rows (when they do not come
 * sorted), marks the gaps between FDEs "no CFI" and merges runs of identical rows; the register
 * rules rows share are kept once each. Also the table's lookup. */
#include "cfi.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind/cfi-internal.h"
#include "util/hashmap.h"
#include "util/util.h"

/* ---- finding the sections ---- */

static bool load_section(Elf *elf, const char *name, struct hs_cfi_section *s, size_t shstrndx, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(nm = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(nm, name))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return false;
		if (sh.sh_flags & SHF_COMPRESSED)
			elf_compress(scn, 0, 0);
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			return false;
		s->data = d->d_buf;
		s->size = d->d_size;
		s->vaddr = sh.sh_addr;
		if (shdr)
			*shdr = sh;
		return true;
	}
	return false;
}

/* The loadable bytes at a virtual address, up to the end of their segment. */
static bool vaddr_bytes(Elf *elf, uint64_t vaddr, struct hs_cfi_section *s)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr >= ph.p_vaddr + ph.p_filesz)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (vaddr - ph.p_vaddr)),
					 (size_t)(ph.p_filesz - (vaddr - ph.p_vaddr)), ELF_T_BYTE);
		if (!d || !d->d_buf)
			return false;
		s->data = d->d_buf;
		s->size = d->d_size;
		s->vaddr = vaddr;
		return true;
	}
	return false;
}

/* ---- the table ---- */

static int row_cmp(const void *a, const void *b)
{
	const struct hs_cfi_pending_row *x = a, *y = b;
	bool xn = x->row.cfa_kind == HS_CFA_NONE, yn = y->row.cfa_kind == HS_CFA_NONE;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* at one address a function's first row wins over the end marker of the one before */
	if (xn != yn)
		return xn ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool sorted(const struct hs_cfi_pending_row *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (row_cmp(&v[i - 1], &v[i]) > 0)
			return false;
	return true;
}

static bool same_rule(const struct hs_cfi_row *a, const struct hs_cfi_row *b)
{
	return a->cfa_off == b->cfa_off && a->cfa_reg == b->cfa_reg && a->cfa_kind == b->cfa_kind &&
	       a->ra_kind == b->ra_kind && a->rbp_kind == b->rbp_kind && a->ra_off == b->ra_off &&
	       a->rbp_off == b->rbp_off && a->flags == b->flags && a->regs == b->regs;
}

static int finish(struct hs_cfi_builder *b, struct hs_cfi_table *t, struct hs_error *err)
{
	struct hs_cfi_pending_row *v = b->rows.v;
	size_t n = b->rows.n, k = 0;

	if (!n)
		return 0;
	/* .eh_frame_hdr's table lists the FDEs by address, and each FDE's rows come in address
	 * order: already sorted then, and a sort of n rows costs more than the rest of the build */
	if (!sorted(v, n))
		qsort(v, n, sizeof(*v), row_cmp);
	/* at equal addresses the last row stands */
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].pc == v[i].pc)
			v[k - 1] = v[i];
		else
			v[k++] = v[i];
	}
	n = k;
	t->base = v[0].pc;
	if (v[n - 1].pc - t->base > UINT32_MAX) {
		hs_error_at(err, 0, "call frame information spans more than 4 GiB of addresses");
		return -EOVERFLOW;
	}
	t->rows = hs_xmalloc(n * sizeof(*t->rows));
	k = 0;
	for (size_t i = 0; i < n; i++) {
		struct hs_cfi_row row = v[i].row;
		row.pc = (uint32_t)(v[i].pc - t->base);
		if (k && same_rule(&t->rows[k - 1], &row))
			continue;
		t->rows[k++] = row;
		if (row.cfa_kind == HS_CFA_UNSUPPORTED || (row.cfa_kind != HS_CFA_NONE && (row.ra_kind == HS_RULE_UNSUPPORTED)))
			t->stats.unsupported++;
	}
	t->n = k;
	t->stats.rows = (uint32_t)k;
	return 0;
}

/* The end of a build: the rows sorted into t (or the error), the builder's memory freed. */
static int conclude(struct hs_cfi_builder *b, struct hs_cfi_table *t, struct hs_cfi_table **ret,
		    struct hs_error *err)
{
	int rc = b->err;

	if (rc)
		hs_error_at(err, 0, "more than %u rows of call frame information", HS_CFI_MAX_ROWS);
	else
		rc = finish(b, t, err);
	t->regs = b->regs.v;
	t->nregs = b->regs.n;
	b->regs.v = NULL;
	hs_index_release(&b->regs_ix);
	hs_vec_free(&b->rows);
	if (rc) {
		hs_cfi_table_free(t);
		return rc;
	}
	*ret = t;
	return 0;
}

/* Finds elf's .eh_frame and .eh_frame_hdr, by section name or, without section headers, by
 * PT_GNU_EH_FRAME; sets *shstrndx (0 without section headers). */
static void find_eh_frame(Elf *elf, const GElf_Ehdr *ehdr, struct hs_cfi_section *eh, bool *have_eh,
			  struct hs_cfi_section *hdr, bool *have_hdr, size_t *shstrndx)
{
	eh->addr_size = hdr->addr_size = ehdr->e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	eh->eh = hdr->eh = true;
	*have_eh = *have_hdr = false;
	if (elf_getshdrstrndx(elf, shstrndx) == 0) {
		*have_eh = load_section(elf, ".eh_frame", eh, *shstrndx, NULL);
		*have_hdr = load_section(elf, ".eh_frame_hdr", hdr, *shstrndx, NULL);
	} else {
		*shstrndx = 0;
	}
	if (!*have_hdr) {
		/* no section headers (a memory image): PT_GNU_EH_FRAME still leads to the CFI */
		size_t phnum;
		if (elf_getphdrnum(elf, &phnum) == 0) {
			for (size_t i = 0; i < phnum; i++) {
				GElf_Phdr ph;
				if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
					*have_hdr = vaddr_bytes(elf, ph.p_vaddr, hdr);
					if (*have_hdr)
						hdr->size = HS_MIN(hdr->size, (size_t)ph.p_filesz);
				}
			}
		}
	}
	if (*have_hdr && !*have_eh) {
		uint64_t ptr;
		*have_eh = hs_cfi_eh_frame_hdr_ptr(hdr, &ptr) && vaddr_bytes(elf, ptr, eh);
	}
}

int hs_cfi_table_build(Elf *elf, Elf *debug_elf, struct hs_cfi_table **ret, struct hs_error *err)
{
	struct hs_cfi_table *t;
	struct hs_cfi_builder b;
	struct hs_cfi_section eh = {0}, hdr = {0};
	size_t shstrndx = 0;
	GElf_Ehdr ehdr;
	bool have_eh = false, have_hdr = false;

	if (!gelf_getehdr(elf, &ehdr)) {
		hs_error_at(err, 0, "not an ELF file");
		return -EBADMSG;
	}
	t = hs_xcalloc(1, sizeof(*t));
	hs_cfi_builder_init(&b, &t->stats);
	find_eh_frame(elf, &ehdr, &eh, &have_eh, &hdr, &have_hdr, &shstrndx);
	if (have_eh)
		hs_cfi_walk_eh_frame(&b, &eh, have_hdr ? &hdr : NULL);
	/* .debug_frame too: code built without unwind tables (-fno-asynchronous-unwind-tables -g)
	 * has its CFI there, beside the .eh_frame of the C runtime's start-up code */
	{
		struct hs_cfi_section df = {0};
		size_t dstr;
		bool have_df = false;

		df.addr_size = eh.addr_size;
		if (shstrndx && load_section(elf, ".debug_frame", &df, shstrndx, NULL))
			have_df = true;
		else if (debug_elf && elf_getshdrstrndx(debug_elf, &dstr) == 0 &&
			 load_section(debug_elf, ".debug_frame", &df, dstr, NULL))
			have_df = true;
		if (have_df && !b.err) {
			df.vaddr = 0;
			hs_cfi_walk_debug_frame(&b, &df);
			t->stats.from_debug_frame = true;
		}
	}
	return conclude(&b, t, ret, err);
}

static int function_cmp(const void *a, const void *b)
{
	const struct hs_cfi_function *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

int hs_cfi_functions(Elf *elf, struct hs_cfi_function **ret, size_t *n)
{
	struct hs_cfi_function_vec fns = {0};
	struct hs_cfi_stats stats = {0};
	struct hs_cfi_builder b;
	struct hs_cfi_section eh = {0}, hdr = {0};
	size_t shstrndx = 0, k = 0;
	GElf_Ehdr ehdr;
	bool have_eh, have_hdr;
	int rc;

	*ret = NULL;
	*n = 0;
	if (!gelf_getehdr(elf, &ehdr))
		return 0;
	hs_cfi_builder_init(&b, &stats);
	b.functions = &fns;
	find_eh_frame(elf, &ehdr, &eh, &have_eh, &hdr, &have_hdr, &shstrndx);
	if (have_eh)
		hs_cfi_walk_eh_frame(&b, &eh, have_hdr ? &hdr : NULL);
	rc = b.err;
	hs_vec_free(&b.regs);
	hs_index_release(&b.regs_ix);
	hs_vec_free(&b.rows);
	if (rc) {
		hs_vec_free(&fns);
		return rc;
	}
	/* in address order already when .eh_frame_hdr lists them; at one start (a table that
	 * lists an FDE twice), the largest */
	if (fns.n) /* (none: no array at all) */
		qsort(fns.v, fns.n, sizeof(*fns.v), function_cmp);
	for (size_t i = 0; i < fns.n; i++)
		if (!k || fns.v[k - 1].start != fns.v[i].start)
			fns.v[k++] = fns.v[i];
	if (!k)
		hs_vec_free(&fns);
	*ret = fns.v;
	*n = k;
	return 0;
}

int hs_cfi_table_build_eh_frame(const void *eh_frame, size_t eh_frame_size, uint64_t eh_frame_vaddr,
				const void *hdr, size_t hdr_size, uint64_t hdr_vaddr, struct hs_cfi_table **ret,
				struct hs_error *err)
{
	struct hs_cfi_table *t = hs_xcalloc(1, sizeof(*t));
	struct hs_cfi_builder b;
	struct hs_cfi_section eh = {eh_frame, eh_frame_size, eh_frame_vaddr, true, 0, 8};
	struct hs_cfi_section hs = {hdr, hdr_size, hdr_vaddr, true, 0, 8};

	hs_cfi_builder_init(&b, &t->stats);
	if (eh_frame_size)
		hs_cfi_walk_eh_frame(&b, &eh, hdr_size ? &hs : NULL);
	return conclude(&b, t, ret, err);
}

void hs_cfi_table_free(struct hs_cfi_table *t)
{
	if (!t)
		return;
	if (t->map) {
		munmap(t->map, t->map_len);
	} else {
		free(t->rows);
		free(t->regs);
	}
	free(t);
}

void hs_cfi_table_drop_pages(const struct hs_cfi_table *t)
{
	if (t && t->map)
		madvise(t->map, t->map_len, MADV_DONTNEED); /* PROT_READ, private: nothing is lost */
}

const struct hs_cfi_row *hs_cfi_table_find(const struct hs_cfi_table *t, uint64_t vaddr)
{
	uint64_t off;
	size_t n;

	if (!t->n || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	off = vaddr - t->base;
	n = hs_upper_bound(t->rows, t->n, pc, off);
	return n ? &t->rows[n - 1] : NULL;
}

size_t hs_cfi_table_bytes(const struct hs_cfi_table *t)
{
	if (t->map)
		return sizeof(*t);
	return sizeof(*t) + t->n * sizeof(*t->rows) + t->nregs * sizeof(*t->regs);
}
