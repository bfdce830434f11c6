/* Where in its script a V8 frame runs: a source position table decoded at a bytecode offset or
 * a code offset (with the inlining it records), the functions inlined there from an optimised
 * code's deoptimisation data, and a script's line ends (V8's own when it computed them, else
 * from its source) to turn a position into a line and a column. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/v8/v8.h"
#include "util/util.h"

#define MAX_TABLE (1u << 22)   /* bytes of a source position table read */
#define MAX_SOURCE (32u << 20) /* code units of a script scanned for its lines */
#define CHUNK 65536

static int rd(const struct hs_rt_mem *mem, uint64_t addr, void *buf, size_t n)
{
	return mem->read(mem->ctx, addr, buf, n) ? -EFAULT : 0;
}

/* The Smi at p's field off: 0 and *v, -EFAULT, or -EBADMSG (not a Smi). */
static int smi_field(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, uint16_t off, int64_t *v)
{
	uint64_t w;

	if (hs_v8_field(l, mem, p, off, &w))
		return -EFAULT;
	if (w & 1)
		return -EBADMSG;
	*v = (int32_t)(w >> 32);
	return 0;
}

/* The bytes of ByteArray p (checked to be one), at most max: a malloc'ed copy and *n. */
static int byte_array(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t p, size_t max, uint8_t **ret,
		      size_t *n)
{
	uint16_t type;
	int64_t len;
	uint8_t *b;

	if (hs_v8_type(l, mem, p, &type) || type != l->t_byte_array || smi_field(l, mem, p, l->array_length, &len))
		return -EBADMSG;
	if (len < 0 || (uint64_t)len > max)
		return -EBADMSG;
	b = hs_xmalloc(len ? (size_t)len : 1);
	if (rd(mem, p - l->heap_tag + l->array_data, b, (size_t)len)) {
		free(b);
		return -EFAULT;
	}
	*ret = b;
	*n = (size_t)len;
	return 0;
}

/* A zigzag VLQ at t[*i], or false at the end or past it. */
static bool vlq(const uint8_t *t, size_t n, size_t *i, int64_t *v)
{
	uint64_t u = 0;
	unsigned shift = 0;

	for (;;) {
		if (*i >= n || shift > 63)
			return false;
		u |= (uint64_t)(t[*i] & 0x7f) << shift;
		shift += 7;
		if (!(t[(*i)++] & 0x80))
			break;
	}
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

int hs_v8_position(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t table, int64_t offset,
		   struct hs_v8_pos *ret)
{
	uint8_t *t;
	size_t n, i = 0;
	int64_t code = -1, pos = 0, best = -1;
	int rc;

	if ((rc = byte_array(l, mem, table, MAX_TABLE, &t, &n)))
		return rc;
	while (i < n) {
		int64_t dc, dp;
		if (!vlq(t, n, &i, &dc) || !vlq(t, n, &i, &dp))
			break;
		/* the sign of the code delta says whether it is a statement */
		code += dc >= 0 ? dc : -(dc + 1);
		pos += dp;
		if (code > offset)
			break;
		best = pos;
	}
	free(t);
	if (best < 0)
		return -ENOENT;
	/* bit 0: external; then the script offset + 1 (30 bits); then the inlining id (16 bits) */
	ret->offset = (int32_t)(((uint64_t)best >> 1) & ((1u << 30) - 1)) - 1;
	ret->inlining = (uint16_t)((uint64_t)best >> 31);
	return ret->offset < 0 ? -ENOENT : 0;
}

int hs_v8_inlined(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t code, struct hs_v8_pos pos,
		  struct hs_v8_scope *out, size_t max, size_t *n)
{
	uint64_t deopt, literals, positions, outer;
	uint8_t *rec;
	size_t len;
	uint16_t type;
	int64_t count;
	int rc;

	*n = 0;
	if (hs_v8_field(l, mem, code, l->code_deopt, &deopt) || hs_v8_type(l, mem, deopt, &type) ||
	    type != l->t_fixed_array)
		return -EBADMSG;
	if (hs_v8_field(l, mem, deopt, (uint16_t)(l->array_data + 8 * l->deopt_literals), &literals) ||
	    hs_v8_field(l, mem, deopt, (uint16_t)(l->array_data + 8 * l->deopt_inlining_positions), &positions) ||
	    hs_v8_field(l, mem, deopt, (uint16_t)(l->array_data + 8 * l->deopt_sfi), &outer) ||
	    smi_field(l, mem, deopt, (uint16_t)(l->array_data + 8 * l->deopt_inlined_count), &count))
		return -EFAULT;
	if (count < 0 || count > 4096 || hs_v8_type(l, mem, literals, &type) || type != l->t_weak_fixed_array)
		return -EBADMSG;
	if ((rc = byte_array(l, mem, positions, 16 * 65536, &rec, &len)))
		return rc;
	/* each inlining: the caller's position (8 bytes), the inlined function's index in the
	 * literals (4 bytes, -1 for the code's own function), 4 bytes of padding */
	while (pos.inlining && *n < max) {
		size_t at = 16 * (size_t)(pos.inlining - 1);
		int32_t fid;
		uint64_t caller, sfi;
		if (at + 16 > len)
			break;
		memcpy(&caller, rec + at, 8);
		memcpy(&fid, rec + at + 8, 4);
		if (fid >= count || fid < -1)
			break;
		if (fid == -1)
			sfi = outer;
		else if (hs_v8_field(l, mem, literals, (uint16_t)(l->array_data + 8 * (uint32_t)fid), &sfi))
			break;
		out[(*n)++] = (struct hs_v8_scope){sfi, pos.offset};
		pos.offset = (int32_t)((caller >> 1) & ((1u << 30) - 1)) - 1;
		/* an inlining's caller is an inlining made before it */
		if ((uint16_t)(caller >> 31) >= pos.inlining)
			break;
		pos.inlining = (uint16_t)(caller >> 31);
	}
	free(rec);
	if (pos.inlining) {
		*n = 0;
		return -EBADMSG;
	}
	if (*n < max)
		out[(*n)++] = (struct hs_v8_scope){outer, pos.offset};
	return 0;
}

/* Line ends, gathered while a source's code units are scanned. */
struct scan {
	HS_VEC(uint32_t) ends;
	uint32_t at; /* code units so far */
};

/* Scans the units [from, from + count) of flat data. */
static int flat(void *arg, const struct hs_rt_mem *mem, uint64_t data, bool one, uint32_t from, uint32_t count)
{
	struct scan *s = arg;
	uint8_t buf[CHUNK];
	size_t w = one ? 1 : 2;

	while (count) {
		uint32_t k = HS_MIN(count, (uint32_t)(CHUNK / w));
		if (rd(mem, data + (uint64_t)from * w, buf, (size_t)k * w))
			return -EFAULT;
		for (uint32_t i = 0; i < k; i++) {
			unsigned c = one ? buf[i] : (unsigned)(buf[2 * i] | buf[2 * i + 1] << 8);
			if (c == '\n')
				hs_vec_push(&s->ends, s->at);
			s->at++;
		}
		from += k;
		count -= k;
	}
	return 0;
}

int hs_v8_line_ends(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t script, uint32_t **ret,
		    size_t *n)
{
	struct scan s = {0};
	uint64_t ends, src;
	uint16_t type;
	uint32_t length;
	int rc;

	if (hs_v8_type(l, mem, script, &type) || type != l->t_script)
		return -EBADMSG;
	if (!hs_v8_field(l, mem, script, l->script_line_ends, &ends) && !hs_v8_type(l, mem, ends, &type) &&
	    type == l->t_fixed_array) {
		/* V8's own, computed when something asked for a line */
		int64_t len;
		if (smi_field(l, mem, ends, l->array_length, &len) || len < 0 || len > (1 << 24))
			return -EBADMSG;
		for (int64_t i = 0; i < len; i++) {
			uint64_t w;
			if (rd(mem, ends - l->heap_tag + l->array_data + 8 * (uint64_t)i, &w, 8) || (w & 1)) {
				hs_vec_free(&s.ends);
				return -EFAULT;
			}
			hs_vec_push(&s.ends, (uint32_t)(w >> 32));
		}
		*ret = s.ends.v;
		*n = s.ends.n;
		return 0;
	}
	if (hs_v8_field(l, mem, script, l->script_source, &src) || !hs_v8_is_heap(l, src) ||
	    rd(mem, src - l->heap_tag + l->str_length, &length, sizeof(length)))
		return -EFAULT;
	if ((rc = hs_v8_string_each(l, mem, src, 0, length, MAX_SOURCE, flat, &s, 0))) {
		hs_vec_free(&s.ends);
		return rc;
	}
	hs_vec_push(&s.ends, s.at); /* the last line's end, as V8 counts it */
	*ret = s.ends.v;
	*n = s.ends.n;
	return 0;
}

void hs_v8_line_of(const uint32_t *ends, size_t n, int32_t offset, int *line, int *column)
{
	size_t lo = 0, hi = n;

	*line = *column = 0;
	if (offset < 0 || !n)
		return;
	/* the first line whose end is at or after offset */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ends[mid] < (uint32_t)offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return;
	*line = (int)lo + 1;
	*column = (int)((uint32_t)offset - (lo ? ends[lo - 1] + 1 : 0)) + 1;
}

/* An unsigned VLQ at t[*i], or false at the end. */
static bool uvlq(const uint8_t *t, size_t n, size_t *i, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	for (;;) {
		if (*i >= n || shift > 63)
			return false;
		*v |= (uint64_t)(t[*i] & 0x7f) << shift;
		shift += 7;
		if (!(t[(*i)++] & 0x80))
			return true;
	}
}

int hs_v8_baseline_offset(const struct hs_v8_layout *l, const struct hs_rt_mem *mem, uint64_t code, uint64_t pc_offset,
			  int64_t *ret)
{
	uint64_t bca, map, end, d;
	uint8_t *bc, *t;
	size_t nbc, nt, i = 0, off = 0;
	int64_t len;
	uint16_t type;
	int rc = -EBADMSG;

	if (!l->nsizes)
		return -ENOENT;
	if (hs_v8_field(l, mem, code, l->code_deopt, &bca) || hs_v8_field(l, mem, code, l->code_bytecode_offsets, &map))
		return -EFAULT;
	if (hs_v8_type(l, mem, bca, &type) || type != l->t_bytecode_array || smi_field(l, mem, bca, l->array_length, &len) ||
	    len <= 0 || len > (1 << 24))
		return -EBADMSG;
	nbc = (size_t)len;
	bc = hs_xmalloc(nbc);
	if (rd(mem, bca - l->heap_tag + l->bytecode_data, bc, nbc)) {
		free(bc);
		return -EFAULT;
	}
	if ((rc = byte_array(l, mem, map, MAX_TABLE, &t, &nt))) {
		free(bc);
		return rc;
	}
	/* the prologue's code first (the function's entry), then each bytecode's, in order */
	rc = -ENOENT;
	if (!uvlq(t, nt, &i, &end))
		goto out;
	if (pc_offset <= end) {
		*ret = -1;
		rc = 0;
		goto out;
	}
	while (off < nbc && uvlq(t, nt, &i, &d)) {
		unsigned op = bc[off], scale = 0;
		size_t size;
		end += d;
		/* Wide and DebugBreakWide, ExtraWide and DebugBreakExtraWide scale what follows */
		if (op <= 3 && off + 1 < nbc) {
			scale = op == 0 || op == 2 ? 1 : 2;
			op = bc[off + 1];
		}
		if (op >= l->nsizes)
			break;
		size = l->sizes[scale][op] + (scale ? 1 : 0);
		if (pc_offset <= end) {
			*ret = (int64_t)off;
			rc = 0;
			goto out;
		}
		off += size;
	}
out:
	free(bc);
	free(t);
	return rc;
}
