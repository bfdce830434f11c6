/* HotSpot's compressed streams (code/compressedStream.hpp, utilities/unsigned5.hpp): integers in
 * UNSIGNED5, one to five bytes, a byte below 192 the last; signed ones zig-zag coded. From JDK
 * 20 the byte 0 never appears (x = 1 excluded byte, every byte biased by it: the 192 low
 * codes become 191 from x on). Private to hotspot/. */
#ifndef HS_HOTSPOT_STREAM_H
#define HS_HOTSPOT_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct hs_jvm_stream {
	const uint8_t *p;
	size_t n, pos;
	uint8_t x; /* excluded bytes: 0 or 1 */
	int bad;   /* set by a read past the end or of an excluded byte */
};

static inline uint8_t hs_jvm_stream_byte(struct hs_jvm_stream *s)
{
	if (s->pos >= s->n) {
		s->bad = 1;
		return 0;
	}
	return s->p[s->pos++];
}

static inline uint32_t hs_jvm_stream_uint(struct hs_jvm_stream *s)
{
	uint32_t sum = 0;

	for (int i = 0, shift = 0; i < 5; i++, shift += 6) {
		uint8_t b = hs_jvm_stream_byte(s);
		if (b < s->x) {
			s->bad = 1;
			return 0;
		}
		sum += (uint32_t)(b - s->x) << shift;
		if (b < 192)
			break;
	}
	return sum;
}

static inline int32_t hs_jvm_stream_int(struct hs_jvm_stream *s)
{
	uint32_t v = hs_jvm_stream_uint(s);

	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}

#endif
