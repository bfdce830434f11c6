/* Protocol Buffers wire format by hand (https://protobuf.dev/programming-guides/encoding/):
 * an encoder into a growable buffer and a bounded field-by-field decoder. Enough for pprof's
 * profile.proto; no schema, no reflection, no groups. */
#ifndef HS_PROTOBUF_H
#define HS_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

enum hs_pb_wire {
	HS_PB_VARINT = 0,
	HS_PB_I64 = 1,
	HS_PB_LEN = 2, /* strings, bytes, sub-messages, packed repeated scalars */
	HS_PB_I32 = 5,
};

/* ---- encoding ---- */

/* The encoded bytes are b->v[0 .. b->n); the buffer owns them. Zero-initialise to start. */
struct hs_pb_buf {
	uint8_t *v;
	size_t n, cap;
};

void hs_pb_buf_release(struct hs_pb_buf *b);
/* A bare varint, e.g. one element of a packed field opened with hs_pb_begin(). */
void hs_pb_varint(struct hs_pb_buf *b, uint64_t v);
void hs_pb_key(struct hs_pb_buf *b, uint32_t field, enum hs_pb_wire wire);
/* Scalar varint fields; like proto3 these omit a zero value. Negative int64s take 10 bytes. */
void hs_pb_uint(struct hs_pb_buf *b, uint32_t field, uint64_t v);
void hs_pb_int(struct hs_pb_buf *b, uint32_t field, int64_t v);
void hs_pb_bool(struct hs_pb_buf *b, uint32_t field, bool v);
/* A fixed64 field (8 bytes, little-endian); omitted when zero, as the varint ones. */
void hs_pb_fixed64(struct hs_pb_buf *b, uint32_t field, uint64_t v);
/* A length-delimited field (string, bytes), always written, even when empty. */
void hs_pb_bytes(struct hs_pb_buf *b, uint32_t field, const void *p, size_t n);
/* Opens a length-delimited field whose contents follow (a sub-message or a packed list) and
 * returns a mark for hs_pb_end(), which back-patches the length. Marks nest. */
size_t hs_pb_begin(struct hs_pb_buf *b, uint32_t field);
void hs_pb_end(struct hs_pb_buf *b, size_t mark);

/* ---- decoding ---- */

/* Reads the fields of one message in buf[0 .. len). base is the offset of buf in the whole
 * input, so that errors name a position in the file; errors go to err (may be NULL). The
 * reader borrows buf. */
struct hs_pb_reader {
	const uint8_t *buf;
	size_t len, pos;
	uint64_t base;
	struct hs_error *err;
};

struct hs_pb_field {
	uint32_t num;
	uint8_t wire;        /* enum hs_pb_wire */
	uint64_t off;        /* offset of the field's key in the whole input */
	uint64_t u;          /* the value of VARINT, I64 and I32 fields */
	const uint8_t *data; /* LEN fields: the contents, borrowed from the reader's buffer */
	size_t len;
};

void hs_pb_reader_init(struct hs_pb_reader *r, const void *buf, size_t len, uint64_t base,
		       struct hs_error *err);
/* A reader over the contents of LEN field f read from r (a sub-message or a packed list). */
void hs_pb_reader_sub(struct hs_pb_reader *ret, const struct hs_pb_reader *r, const struct hs_pb_field *f);
/* Reads the next field into *ret. Returns 1 when a field was read, 0 at the end of the buffer,
 * -EBADMSG on a malformed varint (over 10 bytes or past the end), a length past the end of the
 * buffer, field number 0, or a wire type other than VARINT, I64, LEN and I32 (groups
 * included). Callers skip fields they do not know by ignoring them. */
int hs_pb_next(struct hs_pb_reader *r, struct hs_pb_field *ret);
/* Reads one bare varint (an element of a packed list). Returns 1, 0 at the end, or -EBADMSG. */
int hs_pb_read_varint(struct hs_pb_reader *r, uint64_t *ret);
/* Offset in the whole input of the reader's current position. */
static inline uint64_t hs_pb_offset(const struct hs_pb_reader *r)
{
	return r->base + r->pos;
}

#endif
