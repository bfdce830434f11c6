/* Inline chains from DWARF (DWARF 5 section 3.3.8: DW_TAG_inlined_subroutine with its call site,
 * DW_AT_call_file / DW_AT_call_line). An address's compile unit is found in .debug_aranges, read
 * once into a sorted table. The functions of a compile unit (DW_TAG_subprogram with code) are
 * indexed by address range once; an address then leads to its function by binary search, and
 * the inlined instances containing it are found by descending that function's scopes. The
 * innermost function's position is the line table's line for the address; each other's is the
 * call site of the function inlined into it. */
#include "dwarf-lines.h"

#include <dwarf.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/elf.h"
#include "util/strbuf.h"

struct fn_range {
	uint64_t lo, hi;  /* [lo, hi) */
	uint64_t die_off; /* of the DW_TAG_subprogram */
};

struct hs_dwarf_arange {
	uint64_t lo, hi; /* [lo, hi) */
	uint64_t maxhi;  /* the highest hi of this range and those before it */
	uint64_t cu_off; /* of the unit's header in .debug_info */
};

struct hs_dwarf_cu {
	Dwarf_Die cu;
	struct hs_line_table *lines; /* its line table, read here; NULL: libdw's */
	struct fn_range *v;
	size_t n;
	const char *comp_dir;   /* DW_AT_comp_dir, or NULL */
	struct hs_u64map paths; /* a relative name libdw gave -> its absolute path (owned) */
};

void hs_dwarf_file_init(struct hs_dwarf_file *f, Dwarf *dw)
{
	memset(f, 0, sizeof(*f));
	f->dw = dw;
}

void hs_dwarf_file_release(struct hs_dwarf_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->cus.n; i++) {
		struct hs_u64map *m = &f->cus.v[i]->paths;
		for (size_t j = 0; j < m->cap; j++)
			if (hs_u64map_used(m, j))
				free((char *)(uintptr_t)m->vals[j]);
		hs_u64map_release(m);
		hs_line_table_free(f->cus.v[i]->lines);
		free(f->cus.v[i]->v);
		free(f->cus.v[i]);
	}
	hs_vec_free(&f->cus);
	hs_u64map_release(&f->cu_ix);
	free(f->ar);
	free(f->ar_units);
}

typedef HS_VEC(struct hs_dwarf_arange) arange_vec;
typedef HS_VEC(uint64_t) u64_vec;

static uint64_t read_uint(const unsigned char *p, unsigned size)
{
	uint32_t v32;
	uint16_t v16;
	uint64_t v;

	if (size == 2) {
		memcpy(&v16, p, 2);
		return v16;
	}
	if (size == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v, p, 8);
	return v;
}

/* The bytes of a DWARF section as libdw left them (it inflates compressed ones in place), or
 * NULL: not there, still compressed, or in another byte order than ours. */
static const unsigned char *section_bytes(Elf *elf, const char *name, uint64_t *size)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;

	if (!gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    !(scn = hs_elf_section(elf, name)) || !gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED) ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return NULL;
	*size = d->d_size;
	return d->d_buf;
}

/* A unit's initial length at off (DWARF 5 section 7.4): its size after the length into *len,
 * where its header goes on into *p, 4 or 8 (the 64-bit format) into *osz. */
static bool unit_length(const unsigned char *b, uint64_t size, uint64_t off, uint64_t *len, uint64_t *p,
			unsigned *osz)
{
	if (size - off < 4)
		return false;
	*len = read_uint(b + off, 4);
	*p = off + 4;
	*osz = 4;
	if (*len == 0xffffffff) {
		if (size - *p < 8)
			return false;
		*len = read_uint(b + *p, 8);
		*p += 8;
		*osz = 8;
	} else if (*len >= 0xfffffff0) {
		return false;
	}
	return *len <= size - *p;
}

/* The sets of .debug_aranges (DWARF 5 section 6.1.2), each a header naming a unit and
 * (address, length) tuples ending in (0, 0): the ranges into v, the units' offsets into
 * units. libdw's index of the same section costs Debian's libc 2 to 3 ms, and 1 ms more to
 * free, as it makes every unit known to libdw, where a lookup needs only the units up to its
 * own: this costs 0.2 ms. libdw's answers are kept for what this does not read: a section
 * missing, compressed, of another byte order, of a relocatable file (whose addresses libdw
 * relocates), or not well formed. */
static bool read_aranges(Elf *elf, arange_vec *v, u64_vec *units)
{
	const unsigned char *b;
	uint64_t size, off = 0;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_type == ET_REL || !(b = section_bytes(elf, ".debug_aranges", &size)))
		return false;
	while (off < size) {
		uint64_t len, cu, p, end;
		unsigned osz, asz, tuple;

		if (!unit_length(b, size, off, &len, &p, &osz) || len < 2 + osz + 2 || read_uint(b + p, 2) != 2)
			return false;
		end = p + len;
		cu = read_uint(b + p + 2, osz);
		asz = b[p + 2 + osz];
		if ((asz != 4 && asz != 8) || b[p + 3 + osz]) /* no segment selectors */
			return false;
		hs_vec_push(units, cu);
		/* the tuples start at a multiple of their size from the set's start */
		tuple = 2 * asz;
		p = off + (p + 4 + osz - off + tuple - 1) / tuple * tuple;
		for (; p <= end && end - p >= tuple; p += tuple) {
			uint64_t a = read_uint(b + p, asz), l = read_uint(b + p + asz, asz);
			struct hs_dwarf_arange r = {a, a + l, 0, cu};

			if (!a && !l)
				break;
			if (l > UINT64_MAX - a || v->n >= HS_DWARF_MAX_ARANGES)
				return false;
			hs_vec_push(v, r);
		}
		off = end;
	}
	return v->n > 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether every unit of .debug_info that can hold code (not a type unit) has a set in
 * .debug_aranges (units: their offsets, sorted): then an address in no range is in no unit.
 * Only the units' headers are read. */
static bool units_covered(Elf *elf, const uint64_t *units, size_t n)
{
	const unsigned char *b = NULL;
	uint64_t size = 0, off = 0, len, p;
	size_t k = 0;
	unsigned osz;

	if (!elf || !(b = section_bytes(elf, ".debug_info", &size)))
		return false;
	while (off < size) {
		if (!unit_length(b, size, off, &len, &p, &osz) || len < 3)
			return false;
		/* DWARF 5 has a unit type after the version; type units (DWARF 4 kept them in
		 * .debug_types) describe no code */
		if (read_uint(b + p, 2) < 5 || (b[p + 2] != DW_UT_type && b[p + 2] != DW_UT_split_type)) {
			while (k < n && units[k] < off)
				k++;
			if (k == n || units[k] != off)
				return false;
		}
		off = p + len;
	}
	return true;
}

void hs_dwarf_file_index(struct hs_dwarf_file *f)
{
	Elf *elf = f->dw ? dwarf_getelf(f->dw) : NULL;
	arange_vec v = {0};
	u64_vec units = {0};
	bool sorted = true;
	uint64_t maxhi = 0;

	if (f->ar_state || !f->dw)
		return;
	if (!elf || !read_aranges(elf, &v, &units)) {
		Dwarf_Aranges *ar;
		size_t n;

		hs_vec_free(&v);
		hs_vec_free(&units);
		f->ar_state = -1;
		dwarf_getaranges(f->dw, &ar, &n);
		return;
	}
	/* each unit's set lists its ranges in no order; of ranges that start together, which
	 * comes first does not matter (the lookup leaves an overlap to libdw) */
	for (size_t i = 1; i < v.n && sorted; i++)
		sorted = v.v[i - 1].lo <= v.v[i].lo;
	if (!sorted)
		hs_sort_by_key(v.v, v.n, sizeof(*v.v), offsetof(struct hs_dwarf_arange, lo));
	for (size_t i = 0; i < v.n; i++) {
		/* an empty range still holds its start, for libdw's lookup */
		maxhi = HS_MAX(maxhi, v.v[i].hi > v.v[i].lo ? v.v[i].hi : v.v[i].lo + (v.v[i].lo < UINT64_MAX));
		v.v[i].maxhi = maxhi;
	}
	sorted = true;
	for (size_t i = 1; i < units.n && sorted; i++)
		sorted = units.v[i - 1] <= units.v[i];
	if (!sorted)
		qsort(units.v, units.n, sizeof(*units.v), u64_cmp);
	f->ar = v.v;
	f->nar = v.n;
	f->ar_units = units.v;
	f->nar_units = units.n;
	f->ar_complete = -1;
	f->ar_state = 1;
}

/* Whether an address in no range of .debug_aranges is in no unit: known the first time it is
 * asked, as it costs a walk over the headers of every unit (a page fault every 64 KiB of
 * .debug_info: 0.4 ms for libc's), which a recording whose addresses are all in ranges never
 * needs. */
static bool aranges_complete(struct hs_dwarf_file *f)
{
	if (f->ar_complete < 0) {
		f->ar_complete = units_covered(dwarf_getelf(f->dw), f->ar_units, f->nar_units);
		free(f->ar_units);
		f->ar_units = NULL;
		f->nar_units = 0;
	}
	return f->ar_complete > 0;
}

/* Where ranges overlap, which holds an address is libdw's to say; and so is an address that
 * none holds, unless every unit has its set: libdw's index may know more (newer versions make
 * it from the units' own ranges, not from .debug_aranges). */
bool hs_dwarf_unit(struct hs_dwarf_file *f, uint64_t vaddr, Dwarf_Die *ret)
{
	Dwarf_Off next;
	size_t i, hsize;

	if (!f->dw)
		return false;
	hs_dwarf_file_index(f);
	if (f->ar_state > 0) {
		i = hs_upper_bound(f->ar, f->nar, lo, vaddr);
		if (i > 0 && vaddr < f->ar[i - 1].hi && (i < 2 || f->ar[i - 2].maxhi <= vaddr) &&
		    dwarf_next_unit(f->dw, f->ar[i - 1].cu_off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL) == 0 &&
		    dwarf_offdie(f->dw, f->ar[i - 1].cu_off + hsize, ret))
			return true;
		/* code without DWARF: start-up files, PLT stubs */
		if ((i == 0 || f->ar[i - 1].maxhi <= vaddr) && aranges_complete(f))
			return false;
	}
	f->libdw_units++;
	return dwarf_addrdie(f->dw, vaddr, ret) != NULL;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

typedef HS_VEC(struct fn_range) range_vec;

static void add_ranges(Dwarf_Die *die, range_vec *out)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		struct fn_range r = {lo, hi, dwarf_dieoffset(die)};
		if (hi > lo && out->n < HS_DWARF_MAX_FUNCS_PER_CU)
			hs_vec_push(out, r);
	}
}

/* Functions with code anywhere under die: at the top of the unit, and inside namespaces,
 * classes and structures (not inside other functions: their nested scopes are found by the
 * descent from the containing function). */
static void collect(Dwarf_Die *die, range_vec *out, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram)
			add_ranges(&child, out);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
			 tag == DW_TAG_union_type || tag == DW_TAG_module)
			collect(&child, out, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static const char *comp_dir(Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	const char *d = dwarf_attr(cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL;

	return d && *d ? d : NULL;
}

/* Appends the component [s, s + n) of a path being normalised, at whose end sb is. */
static void add_component(struct hs_strbuf *sb, const char *s, size_t n)
{
	struct stat st;
	char *last;

	if (n == 0 || (n == 1 && s[0] == '.'))
		return;
	if (n == 2 && s[0] == '.' && s[1] == '.' && sb->len > 0 && sb->buf[0] == '/') {
		last = strrchr(sb->buf, '/');
		if (last == sb->buf && sb->len == 1)
			return; /* "/.." is "/" */
		/* "DIR/.." is the directory above DIR only where DIR is a directory and not a
		 * link to one, which only the file system says: where it does not, ".." stays */
		if (strcmp(last + 1, "..") != 0 && lstat(sb->buf, &st) == 0 && S_ISDIR(st.st_mode)) {
			hs_strbuf_setlen(sb, last == sb->buf ? 1 : (size_t)(last - sb->buf));
			return;
		}
	}
	if (sb->len > 0 && sb->buf[sb->len - 1] != '/')
		hs_strbuf_addc(sb, '/');
	hs_strbuf_add(sb, s, n);
}

char *hs_source_path(const char *dir, const char *file)
{
	struct hs_strbuf sb = {0};
	const char *parts[2] = {file[0] == '/' || !dir ? NULL : dir, file};

	if (parts[0] ? parts[0][0] == '/' : file[0] == '/')
		hs_strbuf_addc(&sb, '/');
	for (int i = 0; i < 2; i++) {
		for (const char *s = parts[i]; s && *s;) {
			size_t n = strcspn(s, "/");
			add_component(&sb, s, n);
			s += n + (s[n] == '/');
		}
	}
	if (sb.len == 0)
		hs_strbuf_addc(&sb, '.');
	return hs_strbuf_detach(&sb);
}

/* file (a name from the line table or the file table of c's unit) as an absolute path where
 * the unit's DW_AT_comp_dir allows: libdw joins a name to its line table directory, but that
 * directory is itself relative to the compilation directory (DWARF 5 section 6.2.4) in an
 * out-of-tree build ("../src/x.c" from build/). Kept for the Dwarf's life. */
static const char *unit_path(struct hs_dwarf_cu *c, const char *file)
{
	uint64_t v;
	char *p;

	if (!file || file[0] == '/' || !c->comp_dir)
		return file;
	if (hs_u64map_get(&c->paths, (uintptr_t)file, &v))
		return (const char *)(uintptr_t)v;
	p = hs_source_path(c->comp_dir, file);
	hs_u64map_put(&c->paths, (uintptr_t)file, (uintptr_t)p);
	return p;
}

/* What libdw keeps of a unit whose line table it reads, reckoned from the table (a row is 48
 * bytes in libdw, more in the allocator: 37 MB for the 620,000 rows of a Python built with -g),
 * and what any unit costs beside (abbreviations; the index here) */
#define UNIT_COST 8192
#define LIBDW_ROW_COST 64

/* The unit's line table, read here from .debug_line (line-table.h); NULL where libdw is to read
 * it: a relocatable file (whose addresses libdw relocates), a form or version not read here. */
static struct hs_line_table *unit_lines(struct hs_dwarf_file *f, Dwarf_Die *cu)
{
	struct hs_line_table *t;
	Dwarf_Attribute a;
	Dwarf_Word off;
	GElf_Ehdr eh;
	Elf *elf;

	if (!f->sec_state) {
		f->sec_state = -1;
		elf = dwarf_getelf(f->dw);
		if (elf && gelf_getehdr(elf, &eh) && eh.e_type != ET_REL &&
		    (f->sec.line = section_bytes(elf, ".debug_line", &f->sec.line_size))) {
			f->sec.line_str = section_bytes(elf, ".debug_line_str", &f->sec.line_str_size);
			f->sec.str = section_bytes(elf, ".debug_str", &f->sec.str_size);
			f->sec_state = 1;
		}
	}
	if (f->sec_state < 0 || !dwarf_attr(cu, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off))
		return NULL;
	/* the unit's own directory as libdw takes it for directory 0 of DWARF 2 to 4 */
	if (hs_line_table_read(&f->sec, off, dwarf_attr(cu, DW_AT_comp_dir, &a) ? dwarf_formstring(&a) : NULL, &t))
		return NULL;
	return t;
}

static struct hs_dwarf_cu *cu_index(struct hs_dwarf_file *f, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu), ix;
	struct hs_dwarf_cu *c;
	range_vec v = {0};
	struct hs_line_table *lines;
	Dwarf_Lines *ll;
	size_t nlines = 0;

	if (hs_u64map_get(&f->cu_ix, key, &ix))
		return f->cus.v[ix];
	lines = unit_lines(f, cu);
	if (lines) {
		f->cost += lines->bytes;
	} else if (dwarf_getsrclines(cu, &ll, &nlines) == 0) {
		f->libdw_lines++;
		f->cost += nlines * LIBDW_ROW_COST;
	}
	collect(cu, &v, 0);
	f->cost += UNIT_COST + v.n * sizeof(*v.v);
	if (v.n)
		qsort(v.v, v.n, sizeof(*v.v), range_cmp);
	c = hs_xcalloc(1, sizeof(*c));
	c->cu = *cu;
	c->lines = lines;
	c->v = v.v;
	c->n = v.n;
	c->comp_dir = comp_dir(cu);
	hs_u64map_put(&f->cu_ix, key, f->cus.n);
	hs_vec_push(&f->cus, c);
	return c;
}

/* The innermost function range holding pc: the last range starting at or before pc that
 * contains it (ranges nest only rarely, e.g. a function's cold part elsewhere). */
static const struct fn_range *find_fn(const struct hs_dwarf_cu *c, uint64_t pc)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (pc < c->v[i].hi)
			return &c->v[i];
	return NULL;
}

static const char *die_linkage(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	/* through DW_AT_abstract_origin and DW_AT_specification, as the name of an inlined
	 * instance lives on its abstract origin */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

/* The file a DW_AT_call_file index names, in the CU's file table. */
static const char *call_file(struct hs_dwarf_cu *c, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_attr(die, DW_AT_call_file, &a) || dwarf_formudata(&a, &idx))
		return NULL;
	if (c->lines)
		return hs_line_table_file(c->lines, idx);
	if (dwarf_getsrcfiles(&c->cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int64_t call_line(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (!dwarf_attr(die, DW_AT_call_line, &a) || dwarf_formudata(&a, &v))
		return 0;
	return (int64_t)v;
}

/* The inlined instances containing pc below die, outermost first, into chain. */
static int descend(Dwarf_Die *die, uint64_t pc, Dwarf_Die *chain, int n, int max)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return n;
	do {
		int tag = dwarf_tag(&child);
		if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) == 1) {
			if (tag == DW_TAG_inlined_subroutine) {
				if (n == max)
					return n;
				chain[n++] = child;
			}
			return descend(&child, pc, chain, n, max);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

int hs_dwarf_frames(struct hs_dwarf_file *f, uint64_t vaddr, struct hs_src_frame *out, int max)
{
	Dwarf_Die cu, fn, chain[HS_DWARF_MAX_INLINE];
	Dwarf_Line *ln;
	const struct fn_range *r;
	struct hs_dwarf_cu *c;
	const char *file = NULL;
	int64_t line = 0;
	int n, k = 0;

	if (max > 0)
		out[0].file = NULL;
	if (!f || !f->dw || max <= 0 || !hs_dwarf_unit(f, vaddr, &cu))
		return 0;
	c = cu_index(f, &cu);
	if (c->lines) {
		const char *lf;
		int64_t l;
		if (hs_line_table_find(c->lines, vaddr, &lf, &l)) {
			file = unit_path(c, lf);
			line = l;
		}
	} else if ((ln = dwarf_getsrc_die(&cu, vaddr))) {
		int l = 0;
		file = unit_path(c, dwarf_linesrc(ln, NULL, NULL));
		if (dwarf_lineno(ln, &l) == 0)
			line = l;
	}
	r = find_fn(c, vaddr);
	if (!r || !dwarf_offdie(f->dw, r->die_off, &fn)) {
		out[0].name = out[0].linkage = NULL;
		out[0].file = file;
		out[0].line = line;
		return 0;
	}
	n = descend(&fn, vaddr, chain, 0, HS_MIN(max, HS_DWARF_MAX_INLINE) - 1);
	/* innermost first: the inlined instances from the deepest out, then the function */
	for (int i = n; i-- > 0;) {
		out[k].linkage = die_linkage(&chain[i]);
		out[k].name = die_name(&chain[i]);
		if (!out[k].name)
			out[k].name = out[k].linkage ? out[k].linkage : "[inlined]";
		out[k].file = file;
		out[k].line = line;
		k++;
		/* the next function out holds the call site of this one */
		file = unit_path(c, call_file(c, &chain[i]));
		line = call_line(&chain[i]);
	}
	out[k].linkage = die_linkage(&fn);
	out[k].name = die_name(&fn);
	if (!out[k].name)
		out[k].name = out[k].linkage ? out[k].linkage : "[unknown]";
	out[k].file = file;
	out[k].line = line;
	return k + 1;
}
