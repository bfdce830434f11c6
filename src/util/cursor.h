/* A bounded reader of bytes in memory, for the parsers of binary formats. Every read is checked
 * against the end; the first one that fails is kept with its offset, and every read after it
 * fails too, so that a parser can read a run of fields and check once, then say where its input
 * went wrong. */
#ifndef HS_CURSOR_H
#define HS_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HS_HOST_BIG_ENDIAN (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* Longest LEB128 encodings read: more bytes make the read fail. Bits past the 64th are dropped.
 * The two differ by one byte because the CFI reader, their first user, always read them so. */
#define HS_ULEB128_MAX 11
#define HS_SLEB128_MAX 10

struct hs_cursor {
	const uint8_t *base; /* borrowed: the bytes must outlive the cursor */
	size_t len;          /* bytes that can be read from base */
	size_t pos;          /* where the next read starts, from base */
	uint64_t origin;     /* where base is in the whole input: offsets are origin + pos */
	bool swap;           /* integers are in the byte order other than the host's */
	bool failed;
	size_t fail_pos;     /* failed: where the first read that failed started, from base */
};

/* A cursor over the len bytes at base (NULL only when len is 0), at its start, in the host's byte
 * order; set origin and swap after this where they matter. */
static inline void hs_cursor_init(struct hs_cursor *c, const void *base, size_t len)
{
	static const uint8_t empty[1];

	memset(c, 0, sizeof(*c));
	c->base = base ? base : empty;
	c->len = len;
}

/* Fails the cursor where it stands, unless it failed before: for what a parser finds wrong
 * itself (an unknown encoding, a size that contradicts another). */
static inline void hs_cursor_fail(struct hs_cursor *c)
{
	if (!c->failed) {
		c->failed = true;
		c->fail_pos = c->pos;
	}
}

static inline bool hs_cursor_failed(const struct hs_cursor *c)
{
	return c->failed;
}

/* The offset in the whole input of the next read, and of the first read that failed. */
static inline uint64_t hs_cursor_offset(const struct hs_cursor *c)
{
	return c->origin + c->pos;
}

static inline uint64_t hs_cursor_fail_offset(const struct hs_cursor *c)
{
	return c->origin + c->fail_pos;
}

static inline size_t hs_cursor_remaining(const struct hs_cursor *c)
{
	return c->len - c->pos;
}

/* Whether n more bytes can be read; when not, the cursor fails. */
static inline bool hs_cursor_need(struct hs_cursor *c, uint64_t n)
{
	if (__builtin_expect(c->failed || n > c->len - c->pos, 0)) {
		hs_cursor_fail(c);
		return false;
	}
	return true;
}

/* Integers of 1, 2, 4 and 8 bytes: 0 when the cursor fails (it does not move then). */
static inline uint8_t hs_cursor_u8(struct hs_cursor *c)
{
	if (!hs_cursor_need(c, 1))
		return 0;
	return c->base[c->pos++];
}

static inline uint16_t hs_cursor_u16(struct hs_cursor *c)
{
	uint16_t v;

	if (!hs_cursor_need(c, 2))
		return 0;
	memcpy(&v, c->base + c->pos, 2);
	c->pos += 2;
	return c->swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t hs_cursor_u32(struct hs_cursor *c)
{
	uint32_t v;

	if (!hs_cursor_need(c, 4))
		return 0;
	memcpy(&v, c->base + c->pos, 4);
	c->pos += 4;
	return c->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t hs_cursor_u64(struct hs_cursor *c)
{
	uint64_t v;

	if (!hs_cursor_need(c, 8))
		return 0;
	memcpy(&v, c->base + c->pos, 8);
	c->pos += 8;
	return c->swap ? __builtin_bswap64(v) : v;
}

/* An unsigned integer of size bytes (1, 2, 4 or 8; any other size fails): the size of an
 * address as a file declares it. */
uint64_t hs_cursor_uint(struct hs_cursor *c, unsigned int size);

/* LEB128 (DWARF 5 section 7.6): 0 when the cursor fails, at the start of the number. */
uint64_t hs_cursor_uleb128_slow(struct hs_cursor *c);
int64_t hs_cursor_sleb128(struct hs_cursor *c);

static inline uint64_t hs_cursor_uleb128(struct hs_cursor *c)
{
	/* most numbers in CFI fit in one byte */
	if (!c->failed && c->pos < c->len && !(c->base[c->pos] & 0x80))
		return c->base[c->pos++];
	return hs_cursor_uleb128_slow(c);
}

/* The next n bytes (valid as long as the cursor's bytes are), or NULL when fewer remain. */
static inline const void *hs_cursor_bytes(struct hs_cursor *c, uint64_t n)
{
	const void *p;

	if (!hs_cursor_need(c, n))
		return NULL;
	p = c->base + c->pos;
	c->pos += (size_t)n;
	return p;
}

static inline bool hs_cursor_skip(struct hs_cursor *c, uint64_t n)
{
	return hs_cursor_bytes(c, n) != NULL;
}

/* A NUL-terminated string and, when len is not NULL, its length without the NUL; the cursor
 * moves past the NUL. NULL when no NUL is left before the end. */
const char *hs_cursor_string(struct hs_cursor *c, size_t *len);

/* Moves to pos (from base); fails when pos is past the end. */
bool hs_cursor_seek(struct hs_cursor *c, uint64_t pos);

/* Ends the cursor at end (from base), for the reads of a part whose length is known; fails when
 * end is before the cursor or past its end. */
bool hs_cursor_limit(struct hs_cursor *c, uint64_t end);

#endif
