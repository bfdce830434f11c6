/* Protocol Buffers wire format: varints, keys, length-delimited fields with back-patched
 * lengths, and a decoder that checks every length against the buffer it came from. */
#include "protobuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hs_pb_buf_release(struct hs_pb_buf *b)
{
	if (!b)
		return;
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

void hs_pb_varint(struct hs_pb_buf *b, uint64_t v)
{
	hs_xgrow((void **)&b->v, &b->cap, b->n + 10, 1);
	b->n += put_varint(b->v + b->n, v);
}

void hs_pb_key(struct hs_pb_buf *b, uint32_t field, enum hs_pb_wire wire)
{
	hs_pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void hs_pb_uint(struct hs_pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	hs_pb_key(b, field, HS_PB_VARINT);
	hs_pb_varint(b, v);
}

void hs_pb_int(struct hs_pb_buf *b, uint32_t field, int64_t v)
{
	hs_pb_uint(b, field, (uint64_t)v);
}

void hs_pb_bool(struct hs_pb_buf *b, uint32_t field, bool v)
{
	hs_pb_uint(b, field, v ? 1 : 0);
}

void hs_pb_fixed64(struct hs_pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	hs_pb_key(b, field, HS_PB_I64);
	hs_xgrow((void **)&b->v, &b->cap, b->n + 8, 1);
	for (int i = 0; i < 8; i++)
		b->v[b->n++] = (uint8_t)(v >> (8 * i));
}

void hs_pb_bytes(struct hs_pb_buf *b, uint32_t field, const void *p, size_t n)
{
	hs_pb_key(b, field, HS_PB_LEN);
	hs_pb_varint(b, n);
	hs_xgrow((void **)&b->v, &b->cap, b->n + n, 1);
	if (n)
		memcpy(b->v + b->n, p, n);
	b->n += n;
}

/* One byte is reserved for the length, enough for most sub-messages; hs_pb_end() moves the
 * contents up when the length needs more. */
size_t hs_pb_begin(struct hs_pb_buf *b, uint32_t field)
{
	hs_pb_key(b, field, HS_PB_LEN);
	hs_xgrow((void **)&b->v, &b->cap, b->n + 1, 1);
	b->v[b->n++] = 0;
	return b->n - 1;
}

void hs_pb_end(struct hs_pb_buf *b, size_t mark)
{
	size_t len = b->n - mark - 1, k = varint_size(len);

	if (k > 1) {
		hs_xgrow((void **)&b->v, &b->cap, b->n + k - 1, 1);
		memmove(b->v + mark + k, b->v + mark + 1, len);
		b->n += k - 1;
	}
	put_varint(b->v + mark, len);
}

/* ---- decoding ---- */

void hs_pb_reader_init(struct hs_pb_reader *r, const void *buf, size_t len, uint64_t base,
		       struct hs_error *err)
{
	r->buf = buf;
	r->len = len;
	r->pos = 0;
	r->base = base;
	r->err = err;
}

void hs_pb_reader_sub(struct hs_pb_reader *ret, const struct hs_pb_reader *r, const struct hs_pb_field *f)
{
	hs_pb_reader_init(ret, f->data, f->len, r->base + (uint64_t)(f->data - r->buf), r->err);
}

static int get_varint(struct hs_pb_reader *r, uint64_t *ret)
{
	uint64_t v = 0;
	size_t start = r->pos;

	for (unsigned int i = 0; i < 10; i++) {
		uint8_t c;

		if (r->pos >= r->len) {
			hs_error_at(r->err, r->base + start, "varint runs past the end of its message");
			return -EBADMSG;
		}
		c = r->buf[r->pos++];
		/* the tenth byte holds bit 63 only */
		if (i == 9 && c > 1)
			break;
		v |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	hs_error_at(r->err, r->base + start, "varint longer than 64 bits");
	return -EBADMSG;
}

int hs_pb_read_varint(struct hs_pb_reader *r, uint64_t *ret)
{
	int e;

	if (r->pos >= r->len)
		return 0;
	e = get_varint(r, ret);
	return e < 0 ? e : 1;
}

static int get_fixed(struct hs_pb_reader *r, size_t n, uint64_t *ret)
{
	uint64_t v = 0;

	if (r->len - r->pos < n) {
		hs_error_at(r->err, hs_pb_offset(r), "%zu-byte field runs past the end of its message", n);
		return -EBADMSG;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->buf[r->pos + i] << (8 * i);
	r->pos += n;
	*ret = v;
	return 0;
}

int hs_pb_next(struct hs_pb_reader *r, struct hs_pb_field *ret)
{
	struct hs_pb_field f = {0};
	uint64_t key;
	int e;

	if (r->pos >= r->len)
		return 0;
	f.off = hs_pb_offset(r);
	e = get_varint(r, &key);
	if (e < 0)
		return e;
	if ((key >> 3) == 0 || (key >> 3) > UINT32_MAX >> 3) {
		hs_error_at(r->err, f.off, "invalid field number %llu", (unsigned long long)(key >> 3));
		return -EBADMSG;
	}
	f.num = (uint32_t)(key >> 3);
	f.wire = (uint8_t)(key & 7);
	switch (f.wire) {
	case HS_PB_VARINT:
		e = get_varint(r, &f.u);
		break;
	case HS_PB_I64:
		e = get_fixed(r, 8, &f.u);
		break;
	case HS_PB_I32:
		e = get_fixed(r, 4, &f.u);
		break;
	case HS_PB_LEN:
		e = get_varint(r, &f.u);
		if (e < 0)
			break;
		if (f.u > r->len - r->pos) {
			hs_error_at(r->err, f.off, "field %u: length %llu runs past the end of its message",
					   f.num, (unsigned long long)f.u);
			return -EBADMSG;
		}
		f.data = r->buf + r->pos;
		f.len = (size_t)f.u;
		r->pos += f.len;
		break;
	default:
		hs_error_at(r->err, f.off, "field %u: unsupported wire type %u", f.num, f.wire);
		return -EBADMSG;
	}
	if (e < 0)
		return e;
	*ret = f;
	return 1;
}
