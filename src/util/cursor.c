/* The bounded byte cursor's reads that are too long to inline (util/cursor.h). */
#include "cursor.h"

uint64_t hs_cursor_uint(struct hs_cursor *c, unsigned int size)
{
	switch (size) {
	case 1:
		return hs_cursor_u8(c);
	case 2:
		return hs_cursor_u16(c);
	case 4:
		return hs_cursor_u32(c);
	case 8:
		return hs_cursor_u64(c);
	default:
		hs_cursor_fail(c);
		return 0;
	}
}

/* The bytes of a LEB128 number from the cursor's position: the last has its top bit clear.
 * Returns how many, or 0 (the cursor failed at the number's start) when the input ends first or
 * there are more than max. */
static size_t leb128_len(struct hs_cursor *c, size_t max)
{
	size_t n = 0;

	if (c->failed)
		return 0;
	while (c->pos + n < c->len && n < max) {
		if (!(c->base[c->pos + n++] & 0x80))
			return n;
	}
	hs_cursor_fail(c);
	return 0;
}

uint64_t hs_cursor_uleb128_slow(struct hs_cursor *c)
{
	size_t n = leb128_len(c, HS_ULEB128_MAX);
	uint64_t v = 0;

	for (size_t i = 0; i < n && 7 * i < 64; i++)
		v |= (uint64_t)(c->base[c->pos + i] & 0x7f) << (7 * i);
	c->pos += n;
	return v;
}

int64_t hs_cursor_sleb128(struct hs_cursor *c)
{
	size_t n = leb128_len(c, HS_SLEB128_MAX);
	uint64_t v = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n && 7 * i < 64; i++)
		v |= (uint64_t)(c->base[c->pos + i] & 0x7f) << (7 * i);
	/* the sign is the top bit of the last 7, extended where the number does not fill 64 bits */
	if (7 * n < 64 && (c->base[c->pos + n - 1] & 0x40))
		v |= ~0ULL << (7 * n);
	c->pos += n;
	return (int64_t)v;
}

const char *hs_cursor_string(struct hs_cursor *c, size_t *len)
{
	const char *s = (const char *)c->base + c->pos;
	const char *z;

	if (c->failed || !(z = memchr(s, '\0', c->len - c->pos))) {
		hs_cursor_fail(c);
		return NULL;
	}
	if (len)
		*len = (size_t)(z - s);
	c->pos += (size_t)(z - s) + 1;
	return s;
}

bool hs_cursor_seek(struct hs_cursor *c, uint64_t pos)
{
	if (c->failed || pos > c->len) {
		hs_cursor_fail(c);
		return false;
	}
	c->pos = (size_t)pos;
	return true;
}

bool hs_cursor_limit(struct hs_cursor *c, uint64_t end)
{
	if (c->failed || end < c->pos || end > c->len) {
		hs_cursor_fail(c);
		return false;
	}
	c->len = (size_t)end;
	return true;
}
