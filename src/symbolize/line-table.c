/* Compile units' line tables read from .debug_line: see line-table.h. */
#include "line-table.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/cursor.h"
#include "util/util.h"

typedef HS_VEC(struct hs_line_row) row_vec;
typedef HS_VEC(char *) name_vec;
typedef HS_VEC(const char *) str_vec;

struct header {
	unsigned version, osz;
	unsigned min_inst, default_is_stmt;
	int line_base;
	unsigned line_range, opcode_base;
	const uint8_t *std_lengths; /* of opcodes 1 .. opcode_base - 1 */
	str_vec dirs;
	name_vec files;
};

/* A string of form at the cursor: in place, or at an offset of .debug_line_str or .debug_str. */
static const char *form_string(struct hs_cursor *c, uint64_t form, unsigned osz, const struct hs_line_sections *s,
			       int *rc)
{
	const unsigned char *sec;
	uint64_t size, off;

	switch (form) {
	case DW_FORM_string:
		return hs_cursor_string(c, NULL);
	case DW_FORM_line_strp:
		sec = s->line_str;
		size = s->line_str_size;
		break;
	case DW_FORM_strp:
		sec = s->str;
		size = s->str_size;
		break;
	default:
		*rc = -EOPNOTSUPP;
		return NULL;
	}
	off = hs_cursor_uint(c, osz);
	if (hs_cursor_failed(c) || off >= size || !memchr(sec + off, '\0', size - off)) {
		*rc = -EBADMSG;
		return NULL;
	}
	return (const char *)sec + off;
}

/* A value of form at the cursor, read as a number where it is one (0 where not), the cursor
 * past it; -EOPNOTSUPP for a form the entry formats of DWARF 5 do not use. */
static int form_value(struct hs_cursor *c, uint64_t form, unsigned osz, uint64_t *ret)
{
	*ret = 0;
	switch (form) {
	case DW_FORM_data1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
		*ret = hs_cursor_u8(c);
		break;
	case DW_FORM_data2:
	case DW_FORM_strx2:
		*ret = hs_cursor_u16(c);
		break;
	case DW_FORM_strx3:
		hs_cursor_skip(c, 3);
		break;
	case DW_FORM_data4:
	case DW_FORM_strx4:
		*ret = hs_cursor_u32(c);
		break;
	case DW_FORM_data8:
		*ret = hs_cursor_u64(c);
		break;
	case DW_FORM_data16:
		hs_cursor_skip(c, 16);
		break;
	case DW_FORM_udata:
	case DW_FORM_strx:
		*ret = hs_cursor_uleb128(c);
		break;
	case DW_FORM_sdata:
		hs_cursor_sleb128(c);
		break;
	case DW_FORM_block:
		hs_cursor_skip(c, hs_cursor_uleb128(c));
		break;
	case DW_FORM_block1:
		hs_cursor_skip(c, hs_cursor_u8(c));
		break;
	case DW_FORM_block2:
		hs_cursor_skip(c, hs_cursor_u16(c));
		break;
	case DW_FORM_block4:
		hs_cursor_skip(c, hs_cursor_u32(c));
		break;
	case DW_FORM_string:
		hs_cursor_string(c, NULL);
		break;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
	case DW_FORM_sec_offset:
		*ret = hs_cursor_uint(c, osz);
		break;
	default:
		return -EOPNOTSUPP;
	}
	return hs_cursor_failed(c) ? -EBADMSG : 0;
}

/* A file's name as libdw makes it: an absolute name as it is, else joined to its directory
 * (where there is one) with a slash. */
static char *file_name(const struct header *h, const char *name, uint64_t dir)
{
	const char *d = dir < h->dirs.n ? h->dirs.v[dir] : NULL;
	size_t dn, nn = strlen(name);
	char *s;

	if (name[0] == '/' || !d)
		return hs_xstrdup(name);
	dn = strlen(d);
	s = hs_xmalloc(dn + 1 + nn + 1);
	memcpy(s, d, dn);
	s[dn] = '/';
	memcpy(s + dn + 1, name, nn + 1);
	return s;
}

/* DWARF 5's directory or file table: entry formats, then the entries. */
static int entries_v5(struct hs_cursor *c, struct header *h, const struct hs_line_sections *s, bool files)
{
	uint64_t formats[2 * 16], count;
	unsigned nformats = hs_cursor_u8(c);
	int rc = 0;

	if (nformats > 16)
		return -EOPNOTSUPP;
	for (unsigned i = 0; i < 2 * nformats; i++)
		formats[i] = hs_cursor_uleb128(c);
	count = hs_cursor_uleb128(c);
	if (hs_cursor_failed(c))
		return -EBADMSG;
	if (count > HS_LINE_MAX_FILES)
		return -EOVERFLOW;
	for (uint64_t e = 0; e < count; e++) {
		const char *path = NULL;
		uint64_t dir = 0, v;
		for (unsigned i = 0; i < nformats; i++) {
			if (formats[2 * i] == DW_LNCT_path) {
				if (!(path = form_string(c, formats[2 * i + 1], h->osz, s, &rc)))
					return rc ? rc : -EBADMSG;
			} else if ((rc = form_value(c, formats[2 * i + 1], h->osz, &v))) {
				return rc;
			} else if (formats[2 * i] == DW_LNCT_directory_index) {
				dir = v;
			}
		}
		if (!path)
			return -EOPNOTSUPP;
		if (files)
			hs_vec_push(&h->files, file_name(h, path, dir));
		else
			hs_vec_push(&h->dirs, path);
	}
	return 0;
}

/* DWARF 2 to 4's tables: directories (the unit's own first), then files (a placeholder first,
 * as libdw puts there: indexes start at 1), each list ended by an empty name. */
static int entries_v4(struct hs_cursor *c, struct header *h, const char *comp_dir)
{
	const char *s;
	size_t len;

	hs_vec_push(&h->dirs, comp_dir);
	while ((s = hs_cursor_string(c, &len)) && len) {
		if (h->dirs.n > HS_LINE_MAX_FILES)
			return -EOVERFLOW;
		hs_vec_push(&h->dirs, s);
	}
	hs_vec_push(&h->files, hs_xstrdup("???"));
	while ((s = hs_cursor_string(c, &len)) && len) {
		uint64_t dir = hs_cursor_uleb128(c);
		hs_cursor_uleb128(c); /* time */
		hs_cursor_uleb128(c); /* size */
		if (h->files.n > HS_LINE_MAX_FILES)
			return -EOVERFLOW;
		hs_vec_push(&h->files, file_name(h, s, dir));
	}
	return hs_cursor_failed(c) ? -EBADMSG : 0;
}

static int read_header(struct hs_cursor *c, struct header *h, const struct hs_line_sections *s, const char *comp_dir,
		       uint64_t *end)
{
	uint64_t len, hlen, hend;
	unsigned max_ops = 1;
	int rc;

	len = hs_cursor_u32(c);
	h->osz = 4;
	if (len == 0xffffffff) {
		len = hs_cursor_u64(c);
		h->osz = 8;
	} else if (len >= 0xfffffff0) {
		return -EBADMSG;
	}
	if (hs_cursor_failed(c) || len > hs_cursor_remaining(c))
		return -EBADMSG;
	*end = hs_cursor_offset(c) - c->origin + len;
	h->version = hs_cursor_u16(c);
	if (h->version < 2 || h->version > 5)
		return -EOPNOTSUPP;
	if (h->version >= 5) {
		hs_cursor_u8(c); /* address size: set_address says it again */
		if (hs_cursor_u8(c))
			return -EOPNOTSUPP; /* segment selectors */
	}
	hlen = hs_cursor_uint(c, h->osz);
	hend = c->pos + hlen;
	h->min_inst = hs_cursor_u8(c);
	if (h->version >= 4)
		max_ops = hs_cursor_u8(c);
	h->default_is_stmt = hs_cursor_u8(c);
	h->line_base = (int8_t)hs_cursor_u8(c);
	h->line_range = hs_cursor_u8(c);
	h->opcode_base = hs_cursor_u8(c);
	if (hs_cursor_failed(c) || hend > *end || !h->line_range || !h->opcode_base)
		return -EBADMSG;
	if (max_ops != 1)
		return -EOPNOTSUPP; /* VLIW: op_index */
	h->std_lengths = hs_cursor_bytes(c, h->opcode_base - 1u);
	if (!h->std_lengths)
		return -EBADMSG;
	if (h->version >= 5) {
		if ((rc = entries_v5(c, h, s, false)) || (rc = entries_v5(c, h, s, true)))
			return rc;
	} else if ((rc = entries_v4(c, h, comp_dir))) {
		return rc;
	}
	/* the tables end where the header says (libdw takes no other) */
	if (hs_cursor_failed(c) || c->pos != hend)
		return -EBADMSG;
	return hs_cursor_limit(c, *end) ? 0 : -EBADMSG;
}

struct sort_row {
	uint64_t key; /* the address, twice, plus 1 but for an end: an end first at its address */
	struct hs_line_row row;
};

/* Rows in libdw's order: by address, an end of a sequence before the rows at the same address,
 * else as the program gave them, the last an end; then a row that says what the row before it
 * says dropped (the same answer for every address either holds). */
static void order(row_vec *rows)
{
	bool sorted = true;
	size_t k = 0;

	for (size_t i = 1; i < rows->n && sorted; i++) {
		const struct hs_line_row *a = &rows->v[i - 1], *b = &rows->v[i];
		sorted = a->addr < b->addr || (a->addr == b->addr && (b->file != HS_LINE_END || a->file == HS_LINE_END));
	}
	if (!sorted) {
		struct sort_row *t = hs_xmalloc(rows->n * sizeof(*t));
		for (size_t i = 0; i < rows->n; i++) {
			t[i].row = rows->v[i];
			t[i].key = rows->v[i].addr * 2 + (rows->v[i].file != HS_LINE_END);
		}
		hs_sort_by_key(t, rows->n, sizeof(*t), offsetof(struct sort_row, key));
		for (size_t i = 0; i < rows->n; i++)
			rows->v[i] = t[i].row;
		free(t);
	}
	/* the highest row ends a sequence, whatever the program said (libdw's rule, for compilers
	 * that leave the last end out) */
	if (rows->n)
		rows->v[rows->n - 1] = (struct hs_line_row){rows->v[rows->n - 1].addr, 0, HS_LINE_END};
	for (size_t i = 0; i < rows->n; i++) {
		const struct hs_line_row *r = &rows->v[i];
		if (k && r->file != HS_LINE_END && rows->v[k - 1].file == r->file && rows->v[k - 1].line == r->line)
			continue;
		rows->v[k++] = *r;
	}
	rows->n = k;
}

static int run_program(struct hs_cursor *c, const struct header *h, row_vec *rows)
{
	uint64_t addr = 0;
	uint32_t file = 1, line = 1;

	while (hs_cursor_remaining(c) && !hs_cursor_failed(c)) {
		unsigned op = hs_cursor_u8(c);
		bool emit = false, end = false;

		if (op >= h->opcode_base) {
			unsigned adj = op - h->opcode_base;
			addr += (uint64_t)h->min_inst * (adj / h->line_range);
			line += (uint32_t)(h->line_base + (int)(adj % h->line_range));
			emit = true;
		} else if (op == 0) {
			uint64_t len = hs_cursor_uleb128(c), start = c->pos;
			unsigned sub;
			if (hs_cursor_failed(c) || len > hs_cursor_remaining(c))
				return -EBADMSG;
			sub = len ? hs_cursor_u8(c) : 0;
			if (sub == DW_LNE_end_sequence) {
				emit = end = true;
			} else if (sub == DW_LNE_set_address) {
				if (len - 1 != 4 && len - 1 != 8)
					return -EBADMSG;
				addr = hs_cursor_uint(c, (unsigned)(len - 1));
			} else if (sub == DW_LNE_define_file) {
				return -EOPNOTSUPP;
			}
			if (!hs_cursor_seek(c, start + len))
				return -EBADMSG;
		} else {
			switch (op) {
			case DW_LNS_copy:
				emit = true;
				break;
			case DW_LNS_advance_pc:
				addr += (uint64_t)h->min_inst * hs_cursor_uleb128(c);
				break;
			case DW_LNS_advance_line:
				line += (uint32_t)hs_cursor_sleb128(c);
				break;
			case DW_LNS_set_file: {
				uint64_t f = hs_cursor_uleb128(c);
				file = (uint32_t)HS_MIN(f, (uint64_t)HS_LINE_END - 1);
				break;
			}
			case DW_LNS_const_add_pc:
				addr += (uint64_t)h->min_inst * ((255u - h->opcode_base) / h->line_range);
				break;
			case DW_LNS_fixed_advance_pc:
				addr += hs_cursor_u16(c);
				break;
			default: /* operands as the header says: set_column, set_isa, ones we do not know */
				for (unsigned i = 0; i < h->std_lengths[op - 1]; i++)
					hs_cursor_uleb128(c);
				break;
			}
		}
		if (emit) {
			struct hs_line_row r = {addr, end ? 0 : line, end ? HS_LINE_END : file};
			if (rows->n >= HS_LINE_MAX_ROWS)
				return -EOVERFLOW;
			hs_vec_push(rows, r);
		}
		if (end) {
			addr = 0;
			file = line = 1;
		}
	}
	return hs_cursor_failed(c) ? -EBADMSG : 0;
}

int hs_line_table_read(const struct hs_line_sections *s, uint64_t off, const char *comp_dir,
		       struct hs_line_table **ret)
{
	struct header h = {0};
	struct hs_cursor c;
	struct hs_line_table *t;
	row_vec rows = {0};
	uint64_t end;
	int rc;

	if (off >= s->line_size)
		return -EBADMSG;
	hs_cursor_init(&c, s->line + off, s->line_size - off);
	rc = read_header(&c, &h, s, comp_dir, &end);
	if (!rc)
		rc = run_program(&c, &h, &rows);
	hs_vec_free(&h.dirs);
	if (rc) {
		for (size_t i = 0; i < h.files.n; i++)
			free(h.files.v[i]);
		hs_vec_free(&h.files);
		hs_vec_free(&rows);
		return rc;
	}
	order(&rows);
	t = hs_xcalloc(1, sizeof(*t));
	t->n = rows.n;
	t->rows = rows.n ? hs_xrealloc(rows.v, rows.n * sizeof(*rows.v)) : (free(rows.v), NULL);
	t->files = h.files.v;
	t->nfiles = h.files.n;
	t->bytes = sizeof(*t) + t->n * sizeof(*t->rows) + t->nfiles * sizeof(*t->files);
	for (size_t i = 0; i < t->nfiles; i++)
		t->bytes += strlen(t->files[i]) + 1;
	*ret = t;
	return 0;
}

void hs_line_table_free(struct hs_line_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfiles; i++)
		free(t->files[i]);
	free(t->files);
	free(t->rows);
	free(t);
}

bool hs_line_table_find(const struct hs_line_table *t, uint64_t addr, const char **file, int64_t *line)
{
	size_t lo = 0, hi = t->n;
	const struct hs_line_row *r;

	/* the last row at or below addr; none, or the end of a sequence: no line */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (r = &t->rows[lo - 1])->file == HS_LINE_END)
		return false;
	*file = hs_line_table_file(t, r->file);
	*line = (int32_t)r->line;
	return true;
}

const char *hs_line_table_file(const struct hs_line_table *t, uint64_t idx)
{
	return idx < t->nfiles ? t->files[idx] : NULL;
}
