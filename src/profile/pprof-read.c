/* pprof reader: gunzip (capped), then rebuild the profile table by table — strings, types,
 * functions, mappings, locations, samples — in one pass over the Profile message per table,
 * since fields may come in any order and refer forward. Passes cost a walk over field keys;
 * keeping a span per entry instead would cost memory proportional to the entry count. */
#include "pprof-read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/protobuf.h"
#include "util/hashmap.h"

struct pprof_reader {
	struct hs_profile *p;
	struct hs_error *err;
	struct hs_pb_reader top;

	HS_VEC(uint32_t) strs; /* pprof string index -> our string id */
	struct hs_u64map map_ids, func_ids, loc_ids; /* pprof id -> our id */

	/* scratch */
	HS_VEC(uint64_t) u64s;
	HS_VEC(struct hs_line) lines;
	HS_VEC(uint32_t) locs;
	HS_VEC(int64_t) vals;
};

static void reader_release(struct pprof_reader *rd)
{
	hs_vec_free(&rd->strs);
	hs_u64map_release(&rd->map_ids);
	hs_u64map_release(&rd->func_ids);
	hs_u64map_release(&rd->loc_ids);
	hs_vec_free(&rd->u64s);
	hs_vec_free(&rd->lines);
	hs_vec_free(&rd->locs);
	hs_vec_free(&rd->vals);
}

static int bad(struct pprof_reader *rd, uint64_t off, int e, const char *fmt, ...) HS_PRINTF(4, 5);
static int bad(struct pprof_reader *rd, uint64_t off, int e, const char *fmt, ...)
{
	char msg[sizeof(rd->err->detail)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hs_error_at(rd->err, off, "%s", msg);
	return e;
}

static int want_wire(struct pprof_reader *rd, const char *msg, const struct hs_pb_field *f, enum hs_pb_wire w)
{
	if (f->wire == w)
		return 0;
	return bad(rd, f->off, -EBADMSG, "%s field %u: wire type %u, expected %u", msg, f->num, f->wire, w);
}

/* A repeated varint field, packed (one LEN field) or not (one VARINT field per element);
 * proto3 readers must accept both. Appends to rd->u64s, which may not grow past cap: more is
 * an error over_err. */
static int varints(struct pprof_reader *rd, const char *msg, const struct hs_pb_reader *r,
		   const struct hs_pb_field *f, size_t cap, int over_err)
{
	struct hs_pb_reader sub;
	uint64_t v;
	int e;

	if (f->wire == HS_PB_VARINT) {
		if (rd->u64s.n >= cap)
			goto over;
		hs_vec_push(&rd->u64s, f->u);
		return 0;
	}
	if (f->wire != HS_PB_LEN)
		return want_wire(rd, msg, f, HS_PB_VARINT);
	hs_pb_reader_sub(&sub, r, f);
	while ((e = hs_pb_read_varint(&sub, &v)) > 0) {
		if (rd->u64s.n >= cap)
			goto over;
		hs_vec_push(&rd->u64s, v);
	}
	return e;
over:
	return bad(rd, f->off, over_err, "%s field %u: more than %zu values", msg, f->num, cap);
}

/* ---- the passes ---- */

typedef int (*entry_fn)(struct pprof_reader *rd, struct hs_pb_reader *r);

/* Calls fn with a reader over each LEN field number num of the Profile message, at most cap
 * of them. */
static int each(struct pprof_reader *rd, uint32_t num, unsigned int cap, const char *what, entry_fn fn)
{
	struct hs_pb_reader r = rd->top, sub;
	struct hs_pb_field f;
	unsigned int n = 0;
	int e;

	while ((e = hs_pb_next(&r, &f)) > 0) {
		if (f.num != num)
			continue;
		if ((e = want_wire(rd, "Profile", &f, HS_PB_LEN)) < 0)
			return e;
		if (n++ == cap)
			return bad(rd, f.off, -EOVERFLOW, "more than %u %s", cap, what);
		hs_pb_reader_sub(&sub, &r, &f);
		if ((e = fn(rd, &sub)) < 0)
			return e;
	}
	return e;
}

static int str(struct pprof_reader *rd, uint64_t ix, uint64_t off, uint32_t *ret)
{
	if (ix >= rd->strs.n)
		return bad(rd, off, -EBADMSG, "string index %llu out of range (%zu strings)", (unsigned long long)ix,
			   rd->strs.n);
	*ret = rd->strs.v[ix];
	return 0;
}

static int read_string(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	if (!rd->strs.n && r->len)
		return bad(rd, r->base, -EBADMSG, "string_table[0] is not the empty string");
	hs_vec_push(&rd->strs, hs_profile_intern(rd->p, (const char *)r->buf, r->len));
	return 0;
}

static int read_value_type(struct pprof_reader *rd, struct hs_pb_reader *r, struct hs_value_type *ret)
{
	struct hs_value_type t = {0};
	struct hs_pb_field f;
	int e;

	while ((e = hs_pb_next(r, &f)) > 0) {
		if (f.num != 1 && f.num != 2)
			continue;
		if ((e = want_wire(rd, "ValueType", &f, HS_PB_VARINT)) < 0 ||
		    (e = str(rd, f.u, f.off, f.num == 1 ? &t.type : &t.unit)) < 0)
			return e;
	}
	if (e < 0)
		return e;
	*ret = t;
	return 0;
}

static int read_type(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	struct hs_value_type t;
	uint32_t ix;
	int e;

	if ((e = read_value_type(rd, r, &t)) < 0)
		return e;
	/* the strings are interned already: set the ids, not the (NUL-terminated) text */
	ix = hs_profile_add_type(rd->p, NULL, NULL);
	rd->p->types.v[ix] = t;
	return 0;
}

static int read_period_type(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	return read_value_type(rd, r, &rd->p->period_type);
}

/* Ids must be nonzero and unique; UINT64_MAX is valid in pprof but is the map's empty key. */
static int new_id(struct pprof_reader *rd, struct hs_u64map *m, uint64_t id, uint64_t off, const char *what)
{
	uint64_t old;

	if (!id || id == UINT64_MAX)
		return bad(rd, off, -EBADMSG, "%s id %llu is reserved", what, (unsigned long long)id);
	if (hs_u64map_get(m, id, &old))
		return bad(rd, off, -EBADMSG, "duplicate %s id %llu", what, (unsigned long long)id);
	return 0;
}

static int find_id(struct pprof_reader *rd, struct hs_u64map *m, uint64_t id, uint64_t off, const char *what,
		   uint32_t *ret)
{
	uint64_t v;

	if (!id) {
		*ret = 0;
		return 0;
	}
	if (!hs_u64map_get(m, id, &v))
		return bad(rd, off, -EBADMSG, "no %s with id %llu", what, (unsigned long long)id);
	*ret = (uint32_t)v;
	return 0;
}

static int read_function(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	uint64_t id = 0, off = r->base;
	uint32_t s[4] = {0}; /* indexed by field number - 2: name, system_name, filename */
	int64_t start_line = 0;
	struct hs_pb_field f;
	int e;

	while ((e = hs_pb_next(r, &f)) > 0) {
		if (f.num < 1 || f.num > 5)
			continue;
		if ((e = want_wire(rd, "Function", &f, HS_PB_VARINT)) < 0)
			return e;
		if (f.num == 1)
			id = f.u;
		else if (f.num == 5)
			start_line = (int64_t)f.u;
		else if ((e = str(rd, f.u, f.off, &s[f.num - 2])) < 0)
			return e;
	}
	if (e < 0 || (e = new_id(rd, &rd->func_ids, id, off, "function")) < 0)
		return e;
	hs_u64map_put(&rd->func_ids, id, hs_profile_function(rd->p, s[0], s[1], s[2], start_line));
	return 0;
}

static int read_mapping(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	struct hs_mapping m = {0};
	uint64_t id = 0, off = r->base;
	struct hs_pb_field f;
	int e;

	while ((e = hs_pb_next(r, &f)) > 0) {
		if (f.num < 1 || f.num > 10)
			continue;
		if ((e = want_wire(rd, "Mapping", &f, HS_PB_VARINT)) < 0)
			return e;
		switch (f.num) {
		case 1: id = f.u; break;
		case 2: m.start = f.u; break;
		case 3: m.limit = f.u; break;
		case 4: m.offset = f.u; break;
		case 5: e = str(rd, f.u, f.off, &m.file); break;
		case 6: e = str(rd, f.u, f.off, &m.build_id); break;
		default: break; /* has_functions ...: what a mapping holds is in its locations */
		}
		if (e < 0)
			return e;
	}
	if (e < 0 || (e = new_id(rd, &rd->map_ids, id, off, "mapping")) < 0)
		return e;
	m.kind = (uint8_t)hs_kind_guess(hs_profile_str(rd->p, m.file), m.start, NULL);
	hs_u64map_put(&rd->map_ids, id, hs_profile_mapping(rd->p, &m));
	if (!rd->p->main_mapping)
		rd->p->main_mapping = 1; /* profile.proto: "mapping[0] will be the main binary" */
	return 0;
}

static int read_line(struct pprof_reader *rd, const struct hs_pb_reader *loc, const struct hs_pb_field *lf)
{
	struct hs_pb_reader r;
	struct hs_pb_field f;
	struct hs_line ln = {0};
	uint64_t fid = 0;
	int e;

	hs_pb_reader_sub(&r, loc, lf);
	while ((e = hs_pb_next(&r, &f)) > 0) {
		if (f.num != 1 && f.num != 2)
			continue; /* column, ... */
		if ((e = want_wire(rd, "Line", &f, HS_PB_VARINT)) < 0)
			return e;
		if (f.num == 1)
			fid = f.u;
		else
			ln.line = (int64_t)f.u;
	}
	if (e < 0 || (e = find_id(rd, &rd->func_ids, fid, lf->off, "function", &ln.function)) < 0)
		return e;
	if (rd->lines.n >= HS_PPROF_MAX_LINES)
		return bad(rd, lf->off, -EOVERFLOW, "location with more than %u lines", HS_PPROF_MAX_LINES);
	hs_vec_push(&rd->lines, ln);
	return 0;
}

static int read_location(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	struct hs_profile *p = rd->p;
	uint64_t id = 0, mid = 0, addr = 0, off = r->base;
	uint32_t mapping = 0;
	const char *file = NULL, *fn = NULL, *src = NULL;
	struct hs_pb_field f;
	uint8_t kind;
	int e;

	rd->lines.n = 0;
	while ((e = hs_pb_next(r, &f)) > 0) {
		if (f.num < 1 || f.num > 4)
			continue; /* is_folded, ... */
		if (f.num == 4) {
			if ((e = want_wire(rd, "Location", &f, HS_PB_LEN)) < 0 || (e = read_line(rd, r, &f)) < 0)
				return e;
			continue;
		}
		if ((e = want_wire(rd, "Location", &f, HS_PB_VARINT)) < 0)
			return e;
		*(f.num == 1 ? &id : f.num == 2 ? &mid : &addr) = f.u;
	}
	if (e < 0 || (e = new_id(rd, &rd->loc_ids, id, off, "location")) < 0 ||
	    (e = find_id(rd, &rd->map_ids, mid, off, "mapping", &mapping)) < 0)
		return e;
	if (mapping)
		file = hs_profile_str(p, p->mappings.v[mapping].file);
	if (rd->lines.n) {
		const struct hs_function *fo = &p->functions.v[rd->lines.v[rd->lines.n - 1].function];
		fn = hs_profile_str(p, fo->name);
		src = hs_profile_str(p, fo->filename);
	}
	kind = (uint8_t)hs_kind_guess(file, addr, fn);
	/* how hotstack writes a script's frame: no mapping, no address, a .py (.rb, .php, .pl) file */
	if (!mapping && !addr && hs_script_kind(src) != HS_KIND_USER)
		kind = hs_script_kind(src);
	hs_u64map_put(&rd->loc_ids, id,
		      hs_profile_location(p, mapping, addr, kind, rd->lines.v, (uint32_t)rd->lines.n));
	return 0;
}

struct labels {
	uint32_t comm;
	int32_t pid, tid;
	uint64_t time;
};

static int read_label(struct pprof_reader *rd, const struct hs_pb_reader *sample, const struct hs_pb_field *lf,
		      struct labels *l)
{
	struct hs_pb_reader r;
	struct hs_pb_field f;
	uint32_t key = 0, s = 0;
	int64_t num = 0;
	const char *k;
	int e;

	hs_pb_reader_sub(&r, sample, lf);
	while ((e = hs_pb_next(&r, &f)) > 0) {
		if (f.num < 1 || f.num > 4)
			continue;
		if ((e = want_wire(rd, "Label", &f, HS_PB_VARINT)) < 0)
			return e;
		if (f.num == 1)
			e = str(rd, f.u, f.off, &key);
		else if (f.num == 2)
			e = str(rd, f.u, f.off, &s);
		else if (f.num == 3)
			num = (int64_t)f.u;
		else
			e = str(rd, f.u, f.off, &(uint32_t){0});
		if (e < 0)
			return e;
	}
	if (e < 0)
		return e;
	k = hs_profile_str(rd->p, key);
	if ((!strcmp(k, "pid") || !strcmp(k, "tid")) && !s && num >= 0 && num <= INT32_MAX)
		*(k[0] == 'p' ? &l->pid : &l->tid) = (int32_t)num;
	else if (!strcmp(k, "comm"))
		l->comm = s;
	else if ((!strcmp(k, "timestamp") || !strcmp(k, "timestamp_ns")) && !s && num > 0)
		l->time = (uint64_t)num;
	return 0;
}

static int read_sample(struct pprof_reader *rd, struct hs_pb_reader *r)
{
	size_t nt = rd->p->types.n;
	struct labels l = {0, -1, -1, 0};
	struct hs_pb_field f;
	uint32_t stack;
	int e;

	/* as Go's Profile.CheckValid: a sample's values mean nothing without their types */
	if (!nt)
		return bad(rd, r->base, -EBADMSG, "sample in a profile without sample types");
	rd->locs.n = rd->vals.n = 0;
	while ((e = hs_pb_next(r, &f)) > 0) {
		if (f.num == 1) {
			rd->u64s.n = 0;
			if ((e = varints(rd, "Sample", r, &f, HS_PPROF_MAX_DEPTH - rd->locs.n,
					   -EOVERFLOW)) < 0)
				return e;
			for (size_t j = 0; j < rd->u64s.n; j++) {
				uint32_t loc = 0;
				if (!rd->u64s.v[j])
					return bad(rd, f.off, -EBADMSG, "sample refers to location id 0");
				if ((e = find_id(rd, &rd->loc_ids, rd->u64s.v[j], f.off, "location", &loc)) < 0)
					return e;
				hs_vec_push(&rd->locs, loc);
			}
		} else if (f.num == 2) {
			rd->u64s.n = 0;
			if ((e = varints(rd, "Sample", r, &f, nt - rd->vals.n, -EBADMSG)) < 0)
				return e;
			for (size_t j = 0; j < rd->u64s.n; j++)
				hs_vec_push(&rd->vals, (int64_t)rd->u64s.v[j]);
		} else if (f.num == 3) {
			if ((e = want_wire(rd, "Sample", &f, HS_PB_LEN)) < 0 || (e = read_label(rd, r, &f, &l)) < 0)
				return e;
		}
	}
	if (e < 0)
		return e;
	if (rd->vals.n != nt)
		return bad(rd, r->base, -EBADMSG, "sample has %zu values for %zu sample types", rd->vals.n, nt);
	stack = hs_profile_stack(rd->p, rd->locs.v, (uint32_t)rd->locs.n);
	hs_profile_add_sample(rd->p, stack, l.comm, l.pid, l.tid, l.time, rd->vals.v);
	return 0;
}

/* The scalar fields of Profile; comments after the string table is known. */
static int read_scalars(struct pprof_reader *rd)
{
	struct hs_pb_reader r = rd->top;
	struct hs_pb_field f;
	struct hs_profile *p = rd->p;
	int e;

	while ((e = hs_pb_next(&r, &f)) > 0) {
		switch (f.num) {
		case 9:  /* time_nanos */
		case 10: /* duration_nanos */
		case 12: /* period */
			if ((e = want_wire(rd, "Profile", &f, HS_PB_VARINT)) < 0)
				return e;
			*(f.num == 9 ? &p->time_nanos : f.num == 10 ? &p->duration_nanos : &p->period) = (int64_t)f.u;
			break;
		case 13: /* comment */
			rd->u64s.n = 0;
			if ((e = varints(rd, "Profile", &r, &f, HS_PPROF_MAX_ENTRIES - p->comments.n, -EOVERFLOW)) < 0)
				return e;
			for (size_t i = 0; i < rd->u64s.n; i++) {
				uint32_t s = 0;
				if ((e = str(rd, rd->u64s.v[i], f.off, &s)) < 0)
					return e;
				hs_vec_push(&p->comments, s);
			}
			break;
		default: /* drop_frames, keep_frames, default_sample_type, tick_unit, ... */
			break;
		}
	}
	return e;
}

static int read_profile(struct pprof_reader *rd)
{
	int e;

	/* string_table: the first pass also checks every top-level key and length */
	if ((e = each(rd, 6, HS_PPROF_MAX_ENTRIES, "strings", read_string)) < 0)
		return e;
	if (!rd->strs.n)
		return bad(rd, 0, -EBADMSG, "no string table");
	if ((e = each(rd, 1, HS_PPROF_MAX_TYPES, "sample types", read_type)) < 0 ||
	    (e = each(rd, 11, HS_PPROF_MAX_ENTRIES, "period types", read_period_type)) < 0 ||
	    (e = each(rd, 5, HS_PPROF_MAX_ENTRIES, "functions", read_function)) < 0 ||
	    (e = each(rd, 3, HS_PPROF_MAX_ENTRIES, "mappings", read_mapping)) < 0 ||
	    (e = each(rd, 4, HS_PPROF_MAX_ENTRIES, "locations", read_location)) < 0 ||
	    (e = each(rd, 2, HS_PPROF_MAX_ENTRIES, "samples", read_sample)) < 0)
		return e;
	return read_scalars(rd);
}

/* ---- gzip ---- */

static bool is_gzip(const uint8_t *b, size_t len)
{
	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

int hs_gunzip(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len, struct hs_error *err)
{
	z_stream z;
	uint8_t *out = NULL;
	size_t cap = HS_MIN(HS_MAX(len * 4, (size_t)64 * 1024), HS_PPROF_MAX_SIZE), n = 0;
	/* a decompression bomb is refused once it expands past the ratio, not at the size cap */
	size_t max = (size_t)HS_MIN(HS_DECOMPRESS_MIN + (uint64_t)len * HS_DECOMPRESS_RATIO, (uint64_t)HS_PPROF_MAX_SIZE);
	int zr, e = 0;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper, not zlib's */
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len; /* len <= HS_PPROF_MAX_SIZE < 4 GiB */
	out = hs_xmalloc(cap);
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				hs_error_at(err, z.total_in,
						   "gzip data expands to more than %zu MiB from %zu KiB, over %u times its size: "
						   "not read (a decompression bomb?)",
						   max >> 20, len >> 10, HS_DECOMPRESS_RATIO);
				e = -EOVERFLOW;
				break;
			}
			cap = HS_MIN(cap * 2, max);
			out = hs_xrealloc(out, cap);
		}
		z.next_out = out + n;
		z.avail_out = (uInt)(cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_OK || (zr == Z_BUF_ERROR && z.avail_in && !z.avail_out))
			continue;
		if (zr == Z_BUF_ERROR) {
			hs_error_at(err, z.total_in, "gzip stream ends early");
			e = -ENODATA;
		} else if (zr == Z_MEM_ERROR) {
			e = -ENOMEM;
		} else {
			hs_error_at(err, z.total_in, "gzip: %s", z.msg ? z.msg : "invalid data");
			e = -EBADMSG;
		}
		break;
	}
	inflateEnd(&z);
	if (e < 0) {
		free(out);
		return e;
	}
	*ret = out;
	*ret_len = n;
	return 0;
}

int hs_pprof_read(const void *buf, size_t len, struct hs_profile **ret, struct hs_error *err)
{
	return hs_pprof_read_sized(buf, len, len, ret, err);
}

int hs_pprof_read_sized(const void *buf, size_t len, uint64_t input_bytes, struct hs_profile **ret,
			struct hs_error *err)
{
	struct pprof_reader rd = {0};
	uint8_t *plain = NULL;
	size_t plain_len = len;
	bool fresh_err = err && !err->detail[0];
	int e;

	if (len > HS_PPROF_MAX_SIZE) {
		hs_error_at(err, 0, "profile larger than %zu bytes", HS_PPROF_MAX_SIZE);
		return -EOVERFLOW;
	}
	if (is_gzip(buf, len)) {
		if ((e = hs_gunzip(buf, len, &plain, &plain_len, err)) < 0)
			return e;
		buf = plain;
	}
	rd.p = hs_profile_new();
	hs_profile_bound_frames(rd.p, input_bytes);
	rd.err = err;
	hs_pb_reader_init(&rd.top, buf, plain_len, 0, err);
	e = read_profile(&rd);
	reader_release(&rd);
	free(plain);
	if (e < 0) {
		hs_profile_free(rd.p);
		if (plain && fresh_err && err->detail[0] && strlen(err->detail) + 40 < sizeof(err->detail))
			strcat(err->detail, " (offset in the decompressed data)");
		return e;
	}
	*ret = rd.p;
	return 0;
}

/* ---- content probe ---- */

static bool probe_fits(uint64_t key)
{
	/* wire type per Profile field number 1..16; 8 = not a field of Profile */
	static const uint8_t wire[17] = {8, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2};
	uint64_t num = key >> 3, w = key & 7;

	/* comment (13) is a repeated int64: packed or not */
	return num >= 1 && num <= 16 && (wire[num] == w || (num == 13 && w == HS_PB_LEN));
}

/* whole: buf is the whole input, which must start with a whole field */
static bool probe(const void *buf, size_t len, bool whole)
{
	struct hs_pb_reader r;
	struct hs_pb_field f;
	int n = 0, e;

	if (is_gzip(buf, len))
		return true;
	hs_pb_reader_init(&r, buf, len, 0, NULL);
	while (n < 64) {
		size_t at = r.pos;
		uint64_t key;

		e = hs_pb_next(&r, &f);
		if (e == 0)
			break;
		if (e < 0) {
			/* a prefix may end inside a field: its key must still fit */
			r.pos = at;
			if (hs_pb_read_varint(&r, &key) <= 0)
				return n > 0;
			return probe_fits(key) && (n > 0 || !whole);
		}
		if (!probe_fits(((uint64_t)f.num << 3) | f.wire))
			return false;
		n++;
	}
	return n > 0;
}

bool hs_pprof_probe(const void *buf, size_t len)
{
	return probe(buf, len, false);
}

bool hs_pprof_probe_whole(const void *buf, size_t len)
{
	return probe(buf, len, true);
}
