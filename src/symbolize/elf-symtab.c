/* ELF symbol tables through libelf. Among aliases, the name perf would show (see cand_cmp). */
#include "elf-symtab.h"

#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "format/elf.h"
#include "util/util.h"

struct cand {
	uint64_t addr, size;
	const char *name;
	uint16_t len;    /* strlen(name), at most HS_ELF_MAX_NAME + 4 */
	uint16_t unders; /* leading underscores of name */
	int32_t rank;    /* lower is better: global, local, weak; an untyped label after them */
};

_Static_assert(HS_ELF_MAX_NAME + 4 <= UINT16_MAX, "a name's length fits in struct cand");

typedef HS_VEC(struct cand) cand_vec;

static struct cand cand_make(uint64_t addr, uint64_t size, const char *name, size_t len, int rank)
{
	struct cand c = {addr, size, name, (uint16_t)len, (uint16_t)strspn(name, "_"), rank};

	return c;
}

/* Among aliases, the one perf shows (tools/perf/util/symbol.c, choose_best_symbol): one with a
 * size, a non-weak one, a global one, fewer leading underscores, then the longest name. The
 * lengths are kept in the candidates: a sort compares each thousands of times. */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->unders != y->unders)
		return x->unders < y->unders ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The order of cand_cmp, for the thousands of symbols of a library: by address (a radix sort),
 * then each run of aliases at one address by cand_cmp. */
static void cand_sort(cand_vec *v)
{
	size_t n = v->n;

	hs_sort_by_key(v->v, n, sizeof(*v->v), offsetof(struct cand, addr));
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v->v[j].addr == v->v[i].addr; j++)
			;
		if (j - i > 16) {
			qsort(v->v + i, j - i, sizeof(*v->v), cand_cmp);
			continue;
		}
		for (size_t k = i + 1; k < j; k++) {
			struct cand c = v->v[k];
			size_t m = k;

			for (; m > i && cand_cmp(&v->v[m - 1], &c) > 0; m--)
				v->v[m] = v->v[m - 1];
			v->v[m] = c;
		}
	}
}

static bool is_code_label(Elf *elf, const GElf_Sym *s)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	int vis = GELF_ST_VISIBILITY(s->st_other);

	if (GELF_ST_TYPE(s->st_info) != STT_NOTYPE || !s->st_name || s->st_shndx >= SHN_LORESERVE ||
	    vis == STV_HIDDEN || vis == STV_INTERNAL)
		return false;
	scn = elf_getscn(elf, s->st_shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static int add_symbols(Elf *elf, Elf_Scn *scn, cand_vec *out, size_t *dropped)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type, bind, rank;
		size_t len;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		if (s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		/* functions, and (as perf does) untyped labels in code such as ld.so's
		 * _dl_start_user, which reach to the next symbol */
		if (type != STT_FUNC && type != STT_GNU_IFUNC && !is_code_label(elf, &s))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name || (len = strnlen(name, HS_ELF_MAX_NAME + 1)) > HS_ELF_MAX_NAME) {
			(*dropped)++;
			continue;
		}
		if (out->n >= HS_ELF_MAX_SYMBOLS)
			return -EOVERFLOW;
		rank = (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 2 : 1) + (type == STT_NOTYPE ? 6 : 0);
		hs_vec_push(out, cand_make(s.st_value, s.st_size, name, len, rank));
	}
	return 0;
}

/* x86-64 PLT entries have no symbols; name them after their relocation, as perf does:
 *  - .plt (16-byte entries after a 16-byte PLT0) or .plt.sec (IBT, no PLT0): entry i jumps
 *    through the GOT slot of .rela.plt's relocation i;
 *  - .plt.got (8 or 16-byte entries, for functions whose address is also taken): each entry is
 *    a "jmp *disp(%rip)" to a GOT slot that a GLOB_DAT or JUMP_SLOT relocation in .rela.dyn
 *    names. */
typedef HS_VEC(char *) owned_vec;

struct plt_ctx {
	Elf *elf;
	Elf_Data *symd;  /* .dynsym */
	size_t strndx;   /* its string table */
	cand_vec *out;
	owned_vec *owned;
};

static void plt_add(struct plt_ctx *c, uint64_t sym, uint64_t addr, uint64_t size)
{
	GElf_Sym s;
	const char *name;
	size_t len;
	char *full;

	if (!gelf_getsym(c->symd, (int)sym, &s) || !(name = elf_strptr(c->elf, c->strndx, s.st_name)) || !*name ||
	    (len = strnlen(name, HS_ELF_MAX_NAME + 1)) > HS_ELF_MAX_NAME)
		return;
	full = hs_xmalloc(len + 5);
	memcpy(full, name, len);
	memcpy(full + len, "@plt", 5);
	hs_vec_push(c->owned, full);
	hs_vec_push(c->out, cand_make(addr, size, full, len + 4, 3));
}

static Elf_Data *section_data(Elf_Scn *scn, GElf_Shdr *sh)
{
	return scn && gelf_getshdr(scn, sh) ? elf_getdata(scn, NULL) : NULL;
}

static void add_plt_got(struct plt_ctx *c, Elf_Scn *pltgot, Elf_Scn *reladyn)
{
	GElf_Shdr gsh, rsh;
	Elf_Data *gd = section_data(pltgot, &gsh), *rd = section_data(reladyn, &rsh);
	uint64_t esize;

	if (!gd || !rd || !gd->d_buf || gsh.sh_type != SHT_PROGBITS || !rsh.sh_entsize)
		return;
	esize = gsh.sh_entsize == 8 || gsh.sh_entsize == 16 ? gsh.sh_entsize : 8;
	for (uint64_t off = 0; off + esize <= gd->d_size && off < (64u << 20); off += esize) {
		const unsigned char *e = (const unsigned char *)gd->d_buf + off;
		uint64_t slot = 0;

		for (uint64_t k = 0; k + 6 <= esize; k++) {
			if (e[k] == 0xff && e[k + 1] == 0x25) {
				int32_t disp;
				memcpy(&disp, e + k + 2, 4);
				slot = gsh.sh_addr + off + k + 6 + (uint64_t)(int64_t)disp;
				break;
			}
		}
		if (!slot)
			continue;
		for (size_t i = 0; i < rsh.sh_size / rsh.sh_entsize && i < 10000000; i++) {
			GElf_Rela r;
			uint64_t type;
			if (!gelf_getrela(rd, (int)i, &r) || r.r_offset != slot)
				continue;
			type = GELF_R_TYPE(r.r_info);
			if ((type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT) && GELF_R_SYM(r.r_info))
				plt_add(c, GELF_R_SYM(r.r_info), gsh.sh_addr + off, esize);
			break;
		}
	}
}

static void add_plt(Elf *elf, cand_vec *out, owned_vec *owned)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL, *rela = NULL, *plt = NULL, *pltsec = NULL, *pltgot = NULL, *reladyn = NULL;
	GElf_Shdr rsh, psh, dsh;
	size_t shstrndx, n;
	Elf_Data *rd;
	Elf_Scn *dynsym = NULL;
	struct plt_ctx c = {elf, NULL, 0, out, owned};
	uint64_t base;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!nm)
			continue;
		if (!strcmp(nm, ".rela.plt") && sh.sh_type == SHT_RELA)
			rela = scn;
		else if (!strcmp(nm, ".rela.dyn") && sh.sh_type == SHT_RELA)
			reladyn = scn;
		else if (!strcmp(nm, ".plt"))
			plt = scn;
		else if (!strcmp(nm, ".plt.sec"))
			pltsec = scn;
		else if (!strcmp(nm, ".plt.got"))
			pltgot = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	if (!dynsym || !(c.symd = section_data(dynsym, &dsh)))
		return;
	c.strndx = dsh.sh_link;
	add_plt_got(&c, pltgot, reladyn);
	if (!rela || (!plt && !pltsec) || !(rd = section_data(rela, &rsh)) || !rsh.sh_entsize)
		return;
	gelf_getshdr(pltsec ? pltsec : plt, &psh);
	base = psh.sh_addr + (pltsec ? 0 : 16);
	n = rsh.sh_size / rsh.sh_entsize;
	for (size_t i = 0; i < n && i < 1000000; i++) {
		GElf_Rela r;
		if (base + (i + 1) * 16 > psh.sh_addr + psh.sh_size)
			break;
		if (gelf_getrela(rd, (int)i, &r))
			plt_add(&c, GELF_R_SYM(r.r_info), base + i * 16, 16);
	}
}

static Elf_Scn *find_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return scn;
	}
	return NULL;
}

int hs_elf_symtab_load(Elf *elf, struct hs_elf_symtab **ret)
{
	return hs_elf_symtab_load_extra(elf, NULL, ret);
}

int hs_elf_symtab_load_extra(Elf *elf, Elf *extra, struct hs_elf_symtab **ret)
{
	cand_vec cands = {0};
	HS_VEC(char) names = {0};
	struct hs_elf_symtab *st;
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *extra_symtab = NULL;
	size_t phnum, dropped = 0;
	owned_vec owned = {0};
	int rc = 0;

	if (elf_kind(elf) != ELF_K_ELF)
		return -EBADMSG;
	if (extra && elf_kind(extra) == ELF_K_ELF)
		extra_symtab = find_symtab(extra);
	st = hs_xcalloc(1, sizeof(*st));
	if (elf_getphdrnum(elf, &phnum) == 0) {
		st->segs = hs_xcalloc(phnum ? phnum : 1, sizeof(*st->segs));
		for (size_t i = 0; i < phnum && i < 65536; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				st->segs[st->nsegs++] = (struct hs_elf_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz};
		}
	}
	st->build_id_size = (uint8_t)hs_elf_build_id(elf, st->build_id, sizeof(st->build_id));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	/* .symtab is a superset of .dynsym when present; a stripped file has only .dynsym */
	if (symtab)
		rc = add_symbols(elf, symtab, &cands, &dropped);
	/* MiniDebugInfo holds only what .dynsym lacks: both are needed */
	if (!rc && extra_symtab)
		rc = add_symbols(extra, extra_symtab, &cands, &dropped);
	if (!rc && dynsym)
		rc = add_symbols(elf, dynsym, &cands, &dropped);
	st->from_symtab = symtab || extra_symtab;
	if (!rc)
		add_plt(elf, &cands, &owned);
	if (rc) {
		hs_vec_free(&cands);
		hs_elf_symtab_free(st);
		return rc;
	}
	for (size_t i = 1; i < cands.n; i++) {
		/* the symbols of a table come in the order of their files or sections, not of
		 * their addresses; a table that is in order already needs no sort */
		if (cand_cmp(&cands.v[i - 1], &cands.v[i]) > 0) {
			cand_sort(&cands);
			break;
		}
	}
	st->syms = hs_xcalloc(cands.n ? cands.n : 1, sizeof(*st->syms));
	for (size_t i = 0; i < cands.n; i++) {
		size_t len;
		if (st->nsyms && st->syms[st->nsyms - 1].addr == cands.v[i].addr) {
			/* an alias: keep the first (best) name, the largest size */
			if (cands.v[i].size > st->syms[st->nsyms - 1].size)
				st->syms[st->nsyms - 1].size = cands.v[i].size;
			continue;
		}
		len = cands.v[i].len;
		/* a versioned definition in a static symbol table ("memcpy@@GLIBC_2.14") is shown
		 * without its version, as the dynamic one is */
		{
			const char *at = memchr(cands.v[i].name, '@', len);
			if (at && at > cands.v[i].name && strcmp(at, "@plt"))
				len = (size_t)(at - cands.v[i].name);
		}
		st->syms[st->nsyms].addr = cands.v[i].addr;
		st->syms[st->nsyms].size = cands.v[i].size;
		st->syms[st->nsyms].name = (uint32_t)names.n;
		hs_vec_reserve(&names, names.n + len + 1);
		memcpy(names.v + names.n, cands.v[i].name, len);
		names.v[names.n + len] = '\0';
		names.n += len + 1;
		st->nsyms++;
		if (names.n > UINT32_MAX - HS_ELF_MAX_NAME - 8) {
			rc = -EOVERFLOW;
			break;
		}
	}
	/* a symbol without a size reaches to the next one */
	for (size_t i = 0; i < st->nsyms; i++)
		if (!st->syms[i].size && i + 1 < st->nsyms)
			st->syms[i].size = st->syms[i + 1].addr - st->syms[i].addr;
	st->names = names.v ? names.v : hs_xcalloc(1, 1);
	st->names_len = names.n;
	for (size_t i = 0; i < owned.n; i++)
		free(owned.v[i]);
	hs_vec_free(&owned);
	hs_vec_free(&cands);
	if (rc) {
		hs_elf_symtab_free(st);
		return rc;
	}
	*ret = st;
	return 0;
}

void hs_elf_symtab_free(struct hs_elf_symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->segs);
	free(st->names);
	free(st);
}

bool hs_elf_symtab_offset_to_vaddr(const struct hs_elf_symtab *st, uint64_t off, uint64_t *ret)
{
	for (size_t i = 0; i < st->nsegs; i++) {
		const struct hs_elf_segment *s = &st->segs[i];
		/* memsz, not filesz: the tail of a segment past its file bytes is still its code */
		if (off >= s->offset && off - s->offset < HS_MAX(s->filesz, s->memsz)) {
			*ret = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

const struct hs_elf_sym *hs_elf_symtab_lookup(const struct hs_elf_symtab *st, uint64_t vaddr)
{
	size_t lo = 0, hi = st->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (vaddr - st->syms[lo - 1].addr < st->syms[lo - 1].size)
		return &st->syms[lo - 1];
	return NULL;
}
