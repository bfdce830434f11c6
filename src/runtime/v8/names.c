/* V8's objects read from a process's memory: strings (sequential, cons, thin, sliced, external),
 * a SharedFunctionInfo's name and script, and each object's type checked through its map before
 * a field of it is trusted. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/v8/v8.h"

#define MAX_DEPTH 32    /* strings nested (cons, thin, sliced) */
#define MAX_STRING 4096 /* bytes of a name read */
#define SCOPE_LOOK 6    /* ScopeInfo slots looked at for the names, after the locals */

static int rd(const struct hs_rt_mem *mem, uint64_t addr, void *buf, size_t n)
{
	return mem->read(mem->ctx, addr, buf, n) ? -EFAULT : 0;
}

static int rd_u64(const struct hs_rt_mem *mem, uint64_t addr, uint64_t *v)
{
	return rd(mem, addr, v, sizeof(*v));
}

bool hs_v8_is_heap(const struct hs_v8_layout *l, uint64_t p)
{
	return p && (p & l->heap_tag_mask) == l->heap_tag;
}

int hs_v8_type(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint16_t *type)
{
	uint64_t map;

	if (!hs_v8_is_heap(l, p))
		return -EBADMSG;
	if (rd_u64(mem, p - l->heap_tag, &map) || !hs_v8_is_heap(l, map) ||
	    rd(mem, map - l->heap_tag + l->map_instance_type, type, sizeof(*type)))
		return -EFAULT;
	return 0;
}

int hs_v8_field(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint16_t off, uint64_t *v)
{
	return rd_u64(mem, p - l->heap_tag + off, v);
}

/* Appends n UTF-16 units to out as UTF-8 (a lone surrogate as U+FFFD). */
static void utf16_append(const uint16_t *u, size_t n, char *out, size_t *at, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t c = u[i];
		char b[4];
		size_t k;

		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && u[i + 1] >= 0xdc00 && u[i + 1] < 0xe000)
			c = 0x10000 + ((c - 0xd800) << 10) + (u[++i] - 0xdc00);
		else if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		if (c < 0x80) {
			b[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | c >> 6);
			b[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | c >> 12);
			b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			b[0] = (char)(0xf0 | c >> 18);
			b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (*at + k >= len)
			return;
		memcpy(out + *at, b, k);
		*at += k;
	}
}

/* Appends the characters [from, from + n) of a flat string's data at data to the text. */
struct text {
	char *out;
	size_t at, len;
};

static int chars_append(void *arg, const struct hs_rt_mem *mem, uint64_t data, bool one_byte, uint32_t from, uint32_t n)
{
	struct text *t = arg;

	if (n > MAX_STRING)
		n = MAX_STRING;
	if (one_byte) {
		uint8_t b[MAX_STRING];
		if (rd(mem, data + from, b, n))
			return -EFAULT;
		for (uint32_t i = 0; i < n && t->at + 2 < t->len; i++) {
			/* Latin-1 to UTF-8 */
			if (b[i] < 0x80) {
				t->out[t->at++] = (char)b[i];
			} else {
				t->out[t->at++] = (char)(0xc0 | b[i] >> 6);
				t->out[t->at++] = (char)(0x80 | (b[i] & 0x3f));
			}
		}
		return 0;
	}
	uint16_t u[MAX_STRING];
	if (rd(mem, data + 2 * (uint64_t)from, u, 2 * (size_t)n))
		return -EFAULT;
	utf16_append(u, n, t->out, &t->at, t->len);
	return 0;
}

int hs_v8_string_each(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint32_t from,
		      uint32_t count, uint32_t max, hs_v8_flat_fn *fn, void *arg, int depth)
{
	uint16_t type;
	uint32_t length, repr;
	uint64_t a, b;
	bool one;
	int rc;

	if (depth > MAX_DEPTH)
		return -EBADMSG;
	if ((rc = hs_v8_type(l, mem, p, &type)))
		return rc;
	if (type >= l->t_first_nonstring)
		return -EBADMSG;
	if (rd(mem, p - l->heap_tag + l->str_length, &length, sizeof(length)))
		return -EFAULT;
	if (length > max || from > length)
		return -EBADMSG;
	if (count > length - from)
		count = length - from;
	one = (type & l->str_enc_mask) == l->str_enc_one_byte;
	repr = type & l->str_repr_mask;
	if (repr == l->str_seq)
		return fn(arg, mem, p - l->heap_tag + (one ? l->str_seq_one : l->str_seq_two), one, from, count);
	if (repr == l->str_external) {
		/* the resource's data, as the string caches it */
		if (hs_v8_field(l, mem, p, l->str_external_data, &a) || !a)
			return -EFAULT;
		return fn(arg, mem, a, one, from, count);
	}
	if (repr == l->str_thin) {
		if (hs_v8_field(l, mem, p, l->str_thin_actual, &a))
			return -EFAULT;
		return hs_v8_string_each(l, mem, a, from, count, max, fn, arg, depth + 1);
	}
	if (repr == l->str_sliced) {
		uint64_t off;
		if (hs_v8_field(l, mem, p, l->str_sliced_parent, &a) || hs_v8_field(l, mem, p, l->str_sliced_offset, &off))
			return -EFAULT;
		if ((off & 1) || (off >> 32) > max)
			return -EBADMSG;
		return hs_v8_string_each(l, mem, a, from + (uint32_t)(off >> 32), count, max, fn, arg, depth + 1);
	}
	if (repr == l->str_cons) {
		uint32_t first;
		if (hs_v8_field(l, mem, p, l->str_cons_first, &a) || hs_v8_field(l, mem, p, l->str_cons_second, &b) ||
		    !hs_v8_is_heap(l, a) || rd(mem, a - l->heap_tag + l->str_length, &first, sizeof(first)) || first > length)
			return -EBADMSG;
		if (from < first &&
		    (rc = hs_v8_string_each(l, mem, a, from, count < first - from ? count : first - from, max, fn, arg,
					    depth + 1)))
			return rc;
		if (from + count > first)
			return hs_v8_string_each(l, mem, b, from > first ? from - first : 0,
						 from + count - (from > first ? from : first), max, fn, arg, depth + 1);
		return 0;
	}
	return -EBADMSG;
}

int hs_v8_string(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, char *buf, size_t len)
{
	struct text t = {buf, 0, len};
	int rc;

	if (!len)
		return -EINVAL;
	rc = hs_v8_string_each(l, mem, p, 0, MAX_STRING, 1u << 29, chars_append, &t, 0);
	buf[t.at] = 0;
	return rc;
}

/* The names in a ScopeInfo: the function's own name (empty for an anonymous function), then the
 * name V8 inferred for it (from an assignment: "obj.run"), which follow its context locals'
 * names and infos (or, over 75 of them, a table of them). Each slot taken is checked to be a
 * string; a later object that is not a Smi, a string or an oddball ends the look. */
static int scope_name(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t si, char *buf, size_t len)
{
	uint64_t base = si - l->heap_tag + 8, ncl, slot;
	size_t first;

	if (rd_u64(mem, base + 8 * (uint64_t)l->scope_ncontext_locals, &ncl) || (ncl & 1) || (ncl >> 32) > 1 << 20)
		return -EFAULT;
	ncl >>= 32;
	first = l->scope_first_vars + (ncl > 75 ? 1 : 2 * ncl);
	for (size_t i = 0; i < SCOPE_LOOK; i++) {
		uint16_t type;
		if (rd_u64(mem, base + 8 * (first + i), &slot))
			return -EFAULT;
		if (!(slot & 1))
			continue; /* a Smi: a slot index, flags */
		if (hs_v8_type(l, mem, slot, &type))
			return -EFAULT;
		if (type >= l->t_first_nonstring) {
			if (type == l->t_scope_info || type == l->t_fixed_array)
				break;
			continue; /* undefined: no inferred name */
		}
		if (!hs_v8_string(l, mem, slot, buf, len) && buf[0])
			return 0;
	}
	buf[0] = 0;
	return 0;
}

int hs_v8_sfi_read(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t sfi, struct hs_v8_function *f)
{
	uint64_t nsi, sd, name;
	uint16_t type;
	int rc;

	memset(f, 0, sizeof(*f));
	if ((rc = hs_v8_type(l, mem, sfi, &type)))
		return rc;
	if (type != l->t_sfi)
		return -EBADMSG;
	if (hs_v8_field(l, mem, sfi, l->sfi_name_or_scope_info, &nsi) || hs_v8_field(l, mem, sfi, l->sfi_script, &sd) ||
	    hs_v8_field(l, mem, sfi, l->sfi_function_data, &f->data))
		return -EFAULT;
	if (hs_v8_is_heap(l, nsi)) {
		if (hs_v8_type(l, mem, nsi, &type))
			return -EFAULT;
		if (type < l->t_first_nonstring)
			rc = hs_v8_string(l, mem, nsi, f->name, sizeof(f->name));
		else if (type == l->t_scope_info)
			rc = scope_name(l, mem, nsi, f->name, sizeof(f->name));
		if (rc)
			return rc;
	}
	if (hs_v8_is_heap(l, sd) && !hs_v8_type(l, mem, sd, &type) && type == l->t_script) {
		f->script = sd;
		if (!hs_v8_field(l, mem, sd, l->script_name, &name) && hs_v8_is_heap(l, name))
			hs_v8_string(l, mem, name, f->file, sizeof(f->file));
	}
	return 0;
}
