/* Code objects read from another process's memory: the name, the file, the first line and the
 * line table, each bounded and checked, since the memory is the target's to scribble on; and
 * the line of an instruction from the line table, in each version's format. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/python/python.h"
#include "util/util.h"

#define NAME_MAX_CHARS 1024
#define PATH_MAX_CHARS 4096
#define LINETABLE_MAX (1u << 20)
#define OB_TYPE 8 /* PyObject.ob_type in every release build */

static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c >= 0xdc80 && c <= 0xdcff) {
		/* a byte the file system's encoding could not decode, kept by surrogateescape:
		 * the path's own byte is what names the file */
		out[0] = (char)(c - 0xdc00);
		return 1;
	}
	if (c >= 0xd800 && c <= 0xdfff)
		c = 0xfffd;
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A str object as UTF-8 (malloc'd), or NULL. Only compact strings (the characters right after
 * the object) are read: every identifier and file name the compiler makes is one. */
static uint8_t *read_bytes(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t addr, size_t max,
			   size_t *size);

/* 2.7's str (bytes) as UTF-8 (malloc'd), or NULL: its names are ASCII, its file names bytes of
 * the file system's encoding, taken where they are UTF-8. */
static char *read_str2(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t addr, size_t max_chars)
{
	size_t n;
	uint8_t *b = read_bytes(in, mem, addr, max_chars, &n);

	if (!b)
		return NULL;
	b[n] = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned k = b[i] < 0x80             ? 0
			     : (b[i] & 0xe0) == 0xc0 ? 1
			     : (b[i] & 0xf0) == 0xe0 ? 2
			     : (b[i] & 0xf8) == 0xf0 ? 3
						     : 4;
		if (!b[i] || k == 4 || i + k >= n + (k == 0))
			goto bad;
		for (unsigned j = 1; j <= k; j++)
			if ((b[i + j] & 0xc0) != 0x80)
				goto bad;
		i += k;
	}
	return (char *)b;
bad:
	free(b);
	return NULL;
}

static char *read_str(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t addr, size_t max_chars)
{
	const struct hs_py_code_layout *l = &in->code;
	uint8_t hdr[128], *raw = NULL;
	size_t hdrlen = HS_MAX(l->unicode_ascii_data, l->unicode_compact_data), len, kind, at = 0;
	uint32_t state;
	int64_t slen;
	char *out = NULL;

	if (l->names_bytes)
		return read_str2(in, mem, addr, max_chars);
	if (hdrlen > sizeof(hdr) || l->unicode_state + 4u > hdrlen || l->unicode_length + 8u > hdrlen)
		return NULL;
	/* the compact header is the longer one; a short ASCII string may end before it */
	if (hs_rt_read(mem, addr, hdr, l->unicode_ascii_data))
		return NULL;
	if (in->str_type && hs_rt_get64(hdr + OB_TYPE) != in->str_type)
		return NULL;
	state = hs_rt_get32(hdr + l->unicode_state);
	memcpy(&slen, hdr + l->unicode_length, sizeof(slen));
	/* state bits, 3.6-3.13: interned:2, kind:3, compact:1, ascii:1 */
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) || slen < 0 || (uint64_t)slen > max_chars)
		return NULL;
	len = (size_t)slen;
	raw = hs_xmalloc(len * kind + 1);
	if (hs_rt_read(mem, addr + ((state >> 6) & 1 ? l->unicode_ascii_data : l->unicode_compact_data), raw,
		       len * kind))
		goto fail;
	out = hs_xmalloc(len * 4 + 1);
	for (size_t i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			uint16_t u;
			memcpy(&u, raw + 2 * i, 2);
			c = u;
		} else {
			c = hs_rt_get32(raw + 4 * i);
		}
		if (c == 0 || c > 0x10ffff || ((state >> 6) & 1 && c >= 0x80))
			goto fail;
		at += put_utf8(out + at, c);
	}
	out[at] = 0;
	free(raw);
	return out;
fail:
	free(raw);
	free(out);
	return NULL;
}

/* A bytes object's contents (malloc'd, *size set), or NULL. */
static uint8_t *read_bytes(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t addr, size_t max,
			   size_t *size)
{
	const struct hs_py_code_layout *l = &in->code;
	uint8_t hdr[64], *buf;
	int64_t n;

	if (l->bytes_data > sizeof(hdr) || l->bytes_size + 8u > l->bytes_data ||
	    hs_rt_read(mem, addr, hdr, l->bytes_data))
		return NULL;
	if (in->bytes_type && hs_rt_get64(hdr + OB_TYPE) != in->bytes_type)
		return NULL;
	memcpy(&n, hdr + l->bytes_size, sizeof(n));
	if (n < 0 || (uint64_t)n > max)
		return NULL;
	buf = hs_xmalloc((size_t)n + 1);
	if (hs_rt_read(mem, addr + l->bytes_data, buf, (size_t)n)) {
		free(buf);
		return NULL;
	}
	*size = (size_t)n;
	return buf;
}

int hs_py_code_read(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t addr, struct hs_py_code *ret)
{
	const struct hs_py_code_layout *l = &in->code;
	uint8_t obj[512];
	struct hs_py_code c = {.version = in->version};
	uint16_t name_at = l->code_qualname != HS_PY_NONE ? l->code_qualname : l->code_name;
	int32_t first;

	if (l->code_size > sizeof(obj) || name_at + 8u > l->code_size || l->code_filename + 8u > l->code_size ||
	    l->code_linetable + 8u > l->code_size || l->code_firstlineno + 4u > l->code_size ||
	    OB_TYPE + 8 > l->code_size)
		return -1;
	if (hs_rt_read(mem, addr, obj, l->code_size) || hs_rt_get64(obj + OB_TYPE) != in->info.code_type)
		return -1;
	memcpy(&first, obj + l->code_firstlineno, sizeof(first));
	if (first < 0)
		return -1;
	c.firstlineno = first;
	if (l->code_name + 8u <= l->code_size)
		c.ident = hs_py_code_ident(hs_rt_get64(obj + l->code_name), hs_rt_get64(obj + l->code_filename));
	c.name = read_str(in, mem, hs_rt_get64(obj + name_at), NAME_MAX_CHARS);
	c.file = read_str(in, mem, hs_rt_get64(obj + l->code_filename), PATH_MAX_CHARS);
	c.linetable = read_bytes(in, mem, hs_rt_get64(obj + l->code_linetable), LINETABLE_MAX, &c.linetable_size);
	if (!c.name || !c.file || !c.linetable) {
		hs_py_code_release(&c);
		return -1;
	}
	*ret = c;
	return 0;
}

int hs_py_code_from_strings(const struct hs_py_interp *in, const struct hs_rt_mem *mem, uint64_t name, uint64_t file,
			    uint32_t firstlineno, struct hs_py_code *ret)
{
	struct hs_py_code c = {.version = in->version, .firstlineno = (int)(firstlineno & 0x7fffffff)};

	c.name = read_str(in, mem, name, NAME_MAX_CHARS);
	c.file = read_str(in, mem, file, PATH_MAX_CHARS);
	if (!c.name || !c.file) {
		hs_py_code_release(&c);
		return -1;
	}
	c.ident = hs_py_code_ident(name, file);
	*ret = c;
	return 0;
}

void hs_py_code_release(struct hs_py_code *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->file);
	free(c->linetable);
	c->name = c->file = NULL;
	c->linetable = NULL;
}

/* 3.8, 3.9: co_lnotab, pairs of (bytes advanced, signed lines advanced); the line of an offset
 * is the sum of the line steps of the pairs that end at or before it (Objects/lnotab_notes.txt) */
static int line_lnotab(const struct hs_py_code *c, uint32_t instr)
{
	const uint8_t *p = c->linetable;
	int64_t line = c->firstlineno;
	uint64_t addr = 0;

	for (size_t i = 0; i + 1 < c->linetable_size; i += 2) {
		addr += p[i];
		if (addr > instr)
			break;
		line += c->version < HS_PY_VERSION(3, 6) ? p[i + 1] : (int8_t)p[i + 1]; /* signed from 3.6 */
	}
	return line > 0 && line <= INT32_MAX ? (int)line : 0;
}

/* 3.10: co_linetable (PEP 626), pairs of (bytes in the range, signed line step) where a step of
 * -128 means the range has no line */
static int line_pep626(const struct hs_py_code *c, uint32_t instr)
{
	const uint8_t *p = c->linetable;
	int64_t line = c->firstlineno;
	uint64_t end = 0;

	for (size_t i = 0; i + 1 < c->linetable_size; i += 2) {
		uint64_t start = end;
		int8_t step = (int8_t)p[i + 1];

		end += p[i];
		if (step != -128)
			line += step;
		if (instr >= start && instr < end)
			return step != -128 && line > 0 && line <= INT32_MAX ? (int)line : 0;
	}
	return 0;
}

/* the location table's varints: 6 bits a byte, low first, 0x40 says another follows */
static int varint(const uint8_t *p, size_t n, size_t *i, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *i < n && shift < 36; shift += 6) {
		uint8_t b = p[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64)) {
			*ret = v;
			return 0;
		}
	}
	return -1;
}

/* 3.11+: the location table (Objects/locations.md). Each entry starts with a byte with bit 7
 * set: bits 3-6 the kind, bits 0-2 the code units it covers less one. Kinds 0-9 stay on the
 * line, 10-12 step 0-2 lines, 13 (no columns) and 14 (long form) step a signed varint line
 * delta, 15 has no location and leaves the running line alone. */
static int line_locations(const struct hs_py_code *c, uint32_t instr)
{
	const uint8_t *p = c->linetable;
	size_t n = c->linetable_size, i = 0;
	int64_t line = c->firstlineno;
	uint64_t end = 0;

	while (i < n) {
		uint8_t head = p[i];
		unsigned kind = (head >> 3) & 15;
		uint64_t start = end, u;
		size_t j = i + 1;

		end += ((head & 7) + 1) * 2;
		if (kind >= 10 && kind <= 12) {
			line += kind - 10;
		} else if (kind == 13 || kind == 14) {
			if (varint(p, n, &j, &u))
				return 0;
			line += u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
		}
		if (instr >= start && instr < end)
			return kind != 15 && line > 0 && line <= INT32_MAX ? (int)line : 0;
		if (line < INT32_MIN || line > INT32_MAX)
			return 0;
		/* the entry's other bytes (columns, end line) up to the next head */
		for (i++; i < n && !(p[i] & 128); i++)
			;
	}
	return 0;
}

int hs_py_code_line(const struct hs_py_code *c, uint32_t instr)
{
	if (!c->linetable)
		return 0;
	if (c->version < HS_PY_VERSION(3, 10))
		return line_lnotab(c, instr);
	if (c->version < HS_PY_VERSION(3, 11))
		return line_pep626(c, instr);
	return line_locations(c, instr);
}
