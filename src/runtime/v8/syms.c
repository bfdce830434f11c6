/* The v8dbg_* symbols of a binary that carries V8, with their values read from the file's
 * sections (not from a process, so that a binary is judged before anything of it is read), and
 * the few other symbols a reader needs: V8's version and the embedded builtins. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/v8/v8.h"
#include "util/util.h"

#define MAX_SYMS 8192
#define MAX_SCAN (4u << 20) /* symbols of a table looked at */
#define PREFIX "v8dbg_"

enum other { VMAJOR, VMINOR, VBUILD, VPATCH, BLOB, BLOB_SIZE, BYTECODE_SIZES, TRAMPOLINE, NOTHER };
static const char *const other_names[NOTHER] = {
	"_ZN2v88internal7Version6major_E",
	"_ZN2v88internal7Version6minor_E",
	"_ZN2v88internal7Version6build_E",
	"_ZN2v88internal7Version6patch_E",
	"v8_Default_embedded_blob_code_",
	"v8_Default_embedded_blob_code_size_",
	"_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE",
	"Builtins_InterpreterEntryTrampoline",
};

/* The value of the symbol: its n bytes (1, 2, 4 or 8, little-endian, sign-extended) in its
 * section; 0 in a section without bytes. 0, or -EBADMSG. */
static int sym_value_n(Elf *elf, const GElf_Sym *sym, size_t n, int64_t *v)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;
	uint64_t off, u;
	uint8_t b[8] = {0};

	if (n != 1 && n != 2 && n != 4 && n != 8)
		return -EBADMSG;
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE || !(scn = elf_getscn(elf, sym->st_shndx)) ||
	    !gelf_getshdr(scn, &sh))
		return -EBADMSG;
	if (sh.sh_type == SHT_NOBITS) {
		*v = 0;
		return 0;
	}
	if (sym->st_value < sh.sh_addr || sym->st_value - sh.sh_addr > sh.sh_size ||
	    sh.sh_size - (sym->st_value - sh.sh_addr) < n)
		return -EBADMSG;
	off = sym->st_value - sh.sh_addr;
	for (d = elf_getdata(scn, NULL); d; d = elf_getdata(scn, d)) {
		if (!d->d_buf || off < (uint64_t)d->d_off || off - (uint64_t)d->d_off + n > d->d_size)
			continue;
		memcpy(b, (const uint8_t *)d->d_buf + (off - (uint64_t)d->d_off), n);
		u = 0;
		for (size_t i = 0; i < n; i++)
			u |= (uint64_t)b[i] << (8 * i);
		if (n < 8 && (u >> (8 * n - 1)) & 1)
			u |= ~(uint64_t)0 << (8 * n);
		*v = (int64_t)u;
		return 0;
	}
	return -EBADMSG;
}

/* The value of a symbol of st_size bytes. */
static int sym_value(Elf *elf, const GElf_Sym *sym, int64_t *v)
{
	return sym_value_n(elf, sym, sym->st_size, v);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct hs_v8_sym *)a)->name, ((const struct hs_v8_sym *)b)->name);
}

static int scan(Elf *elf, Elf_Scn *scn, struct hs_v8_syms *s, size_t *cap, GElf_Sym other[NOTHER])
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return 0;
	n = HS_MIN(sh.sh_size / sh.sh_entsize, (size_t)MAX_SCAN);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int64_t v;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
			continue;
		if (strncmp(name, PREFIX, strlen(PREFIX))) {
			for (int o = 0; o < NOTHER; o++)
				if (!other[o].st_value && !strcmp(name, other_names[o]))
					other[o] = sym;
			continue;
		}
		name += strlen(PREFIX);
		if (!*name || strlen(name) > 200)
			continue;
		if (sym_value(elf, &sym, &v))
			return -EBADMSG;
		if (s->n == *cap) {
			if (*cap >= MAX_SYMS)
				return -EBADMSG;
			*cap = *cap ? 2 * *cap : 256;
			s->v = hs_xrealloc(s->v, *cap * sizeof(*s->v));
		}
		s->v[s->n++] = (struct hs_v8_sym){hs_xstrdup(name), v};
	}
	return 0;
}

int hs_v8_syms_read(void *elfp, struct hs_v8_syms *ret)
{
	Elf *elf = elfp;
	struct hs_v8_syms s = {0};
	GElf_Sym other[NOTHER];
	Elf_Scn *scn = NULL;
	size_t cap = 0, k = 0;
	int rc = 0;

	memset(other, 0, sizeof(other));
	while (!rc && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			rc = scan(elf, scn, &s, &cap, other);
	}
	if (!rc && !s.n)
		rc = -ENOENT;
	if (rc) {
		hs_v8_syms_release(&s);
		return rc;
	}
	/* both tables may hold a symbol: keep one of each name */
	qsort(s.v, s.n, sizeof(*s.v), by_name);
	for (size_t i = 0; i < s.n; i++) {
		if (k && !strcmp(s.v[k - 1].name, s.v[i].name)) {
			free(s.v[i].name);
			continue;
		}
		s.v[k++] = s.v[i];
	}
	s.n = k;
	for (int o = VMAJOR; o <= VPATCH; o++) {
		int64_t v;
		if (other[o].st_value && !sym_value(elf, &other[o], &v) && v >= 0 && v < 100000)
			s.version[o - VMAJOR] = (unsigned)v;
	}
	if (other[BLOB].st_value && other[BLOB_SIZE].st_value) {
		int64_t v;
		/* an assembler's label, of no size: a uint32_t */
		if (!sym_value_n(elf, &other[BLOB_SIZE], 4, &v) && v > 0 && v < (1 << 30)) {
			s.blob = other[BLOB].st_value;
			s.blob_size = (uint64_t)v;
		}
	}
	s.bytecode_sizes = other[BYTECODE_SIZES].st_value;
	/* the interpreter's bytecode sizes, one byte each at each of three operand scales */
	if (other[BYTECODE_SIZES].st_value && other[BYTECODE_SIZES].st_size % 3 == 0 &&
	    other[BYTECODE_SIZES].st_size <= 3 * 1024) {
		size_t n = other[BYTECODE_SIZES].st_size;
		int64_t v;
		s.sizes = hs_xmalloc(n);
		for (size_t i = 0; i < n; i++) {
			GElf_Sym one = other[BYTECODE_SIZES];
			one.st_value += i;
			if (sym_value_n(elf, &one, 1, &v) || v < 1 || v > 32) {
				free(s.sizes);
				s.sizes = NULL;
				break;
			}
			s.sizes[i] = (uint8_t)v;
		}
		if (s.sizes)
			s.nsizes = n / 3;
	}
	if (other[TRAMPOLINE].st_value && other[TRAMPOLINE].st_size && other[TRAMPOLINE].st_size < 65536) {
		s.trampoline = other[TRAMPOLINE].st_value;
		s.trampoline_size = other[TRAMPOLINE].st_size;
	}
	*ret = s;
	return 0;
}

void hs_v8_syms_release(struct hs_v8_syms *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	free(s->sizes);
	memset(s, 0, sizeof(*s));
}

bool hs_v8_sym(const struct hs_v8_syms *s, const char *name, int64_t *value)
{
	struct hs_v8_sym key = {(char *)name, 0}, *f;

	if (!s->n)
		return false;
	f = bsearch(&key, s->v, s->n, sizeof(*s->v), by_name);
	if (f && value)
		*value = f->value;
	return f != NULL;
}
