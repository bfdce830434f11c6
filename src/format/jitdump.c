/* The jitdump reader. Layouts from tools/perf/Documentation/jitdump-specification.txt; what real
 * writers do besides: V8 pads records to 8 bytes after their payload, and writes the unwinding
 * data as .eh_frame followed by .eh_frame_hdr (the order perf's genelf.c reads it in, whatever
 * the specification's prose says). */
#include "jitdump.h"

#include <errno.h>
#include <string.h>

/* Largest header a writer may declare: anything beyond the known fields is skipped. */
#define HEADER_MAX (1u << 20)

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const uint8_t *p, bool swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

int hs_jitdump_header_parse(const void *buf, size_t len, struct hs_jitdump_header *ret, struct hs_error *err)
{
	const uint8_t *p = buf;
	struct hs_jitdump_header h = {0};
	uint32_t magic;

	if (len < 16)
		return -ENODATA;
	memcpy(&magic, p, 4);
	if (magic == HS_JITDUMP_MAGIC) {
		h.swap = false;
	} else if (magic == __builtin_bswap32(HS_JITDUMP_MAGIC)) {
		h.swap = true;
	} else {
		hs_error_at(err, 0, "not a jitdump file (magic 0x%08x)", magic);
		return -EBADMSG;
	}
	h.version = rd32(p + 4, h.swap);
	h.size = rd32(p + 8, h.swap);
	h.elf_mach = rd32(p + 12, h.swap);
	if (h.version == 0) {
		hs_error_at(err, 4, "jitdump version 0");
		return -EOPNOTSUPP;
	}
	/* writers declare the header size they wrote: fields past it are absent, bytes past the
	 * known fields are skipped */
	if (h.size < 16 || h.size > HEADER_MAX) {
		hs_error_at(err, 8, "jitdump header size %u", h.size);
		return -EBADMSG;
	}
	if (len < HS_MIN((size_t)h.size, (size_t)HS_JITDUMP_HEADER_MIN))
		return -ENODATA;
	if (h.size >= 24)
		h.pid = rd32(p + 20, h.swap);
	if (h.size >= 32)
		h.timestamp = rd64(p + 24, h.swap);
	if (h.size >= 40)
		h.flags = rd64(p + 32, h.swap);
	*ret = h;
	return 0;
}

/* The length of the NUL-terminated string at p within n bytes, or n when there is no NUL. */
static size_t bounded_len(const uint8_t *p, size_t n)
{
	const uint8_t *z = memchr(p, 0, n);
	return z ? (size_t)(z - p) : n;
}

int hs_jitdump_record_parse(const void *buf, size_t len, const struct hs_jitdump_header *h, uint64_t offset,
			    struct hs_jitdump_record *ret, struct hs_error *err)
{
	const uint8_t *p = buf;
	bool sw = h->swap;
	struct hs_jitdump_record r;

	if (len < HS_JITDUMP_RECORD_HEADER)
		return -ENODATA;
	memset(&r, 0, sizeof(r));
	r.id = rd32(p, sw);
	r.size = rd32(p + 4, sw);
	r.timestamp = rd64(p + 8, sw);
	if (r.size < HS_JITDUMP_RECORD_HEADER) {
		/* nothing after it can be found: the caller must see the size to know so */
		hs_error_at(err, offset + 4, "jitdump record size %u smaller than its header", r.size);
		*ret = r;
		return -EBADMSG;
	}
	if (r.size > HS_JITDUMP_MAX_RECORD) {
		*ret = r;
		return -EOVERFLOW;
	}
	if (len < r.size) {
		*ret = r; /* how much more is needed */
		return -ENODATA;
	}
	p += HS_JITDUMP_RECORD_HEADER;
	len = r.size - HS_JITDUMP_RECORD_HEADER; /* the payload */
	switch (r.id) {
	case HS_JIT_CODE_LOAD: {
		size_t name_room, n;
		if (len < 40)
			goto short_record;
		r.load.pid = rd32(p, sw);
		r.load.tid = rd32(p + 4, sw);
		r.load.vma = rd64(p + 8, sw);
		r.load.code_addr = rd64(p + 16, sw);
		r.load.code_size = rd64(p + 24, sw);
		r.load.code_index = rd64(p + 32, sw);
		if (r.load.code_size > len - 40) {
			hs_error_at(err, offset + 40, "jitdump code load: code size %llu larger than the record",
					   (unsigned long long)r.load.code_size);
			goto bad;
		}
		/* the name lies between the fixed fields and the code */
		name_room = len - 40 - (size_t)r.load.code_size;
		n = bounded_len(p + 40, name_room);
		if (n == name_room) {
			hs_error_at(err, offset + 56, "jitdump code load: name without its terminating NUL");
			goto bad;
		}
		r.load.name = (const char *)p + 40;
		r.load.name_len = HS_MIN(n, (size_t)HS_JITDUMP_MAX_NAME);
		break;
	}
	case HS_JIT_CODE_MOVE:
		if (len < 48)
			goto short_record;
		r.move.pid = rd32(p, sw);
		r.move.tid = rd32(p + 4, sw);
		r.move.vma = rd64(p + 8, sw);
		r.move.old_code_addr = rd64(p + 16, sw);
		r.move.new_code_addr = rd64(p + 24, sw);
		r.move.code_size = rd64(p + 32, sw);
		r.move.code_index = rd64(p + 40, sw);
		break;
	case HS_JIT_CODE_DEBUG_INFO: {
		uint64_t nr;
		if (len < 16)
			goto short_record;
		r.debug.code_addr = rd64(p, sw);
		nr = rd64(p + 8, sw);
		/* each entry takes at least 17 bytes: more cannot be in the record */
		if (nr > (len - 16) / 17) {
			hs_error_at(err, offset + 24, "jitdump debug info: %llu entries cannot fit in %zu bytes",
					   (unsigned long long)nr, len - 16);
			goto bad;
		}
		r.debug.nr_entry = (uint32_t)HS_MIN(nr, (uint64_t)HS_JITDUMP_MAX_DEBUG_ENTRIES);
		r.debug.entries = p + 16;
		r.debug.entries_size = len - 16;
		r.debug.swap = sw;
		break;
	}
	case HS_JIT_CODE_UNWINDING_INFO:
		if (len < 24)
			goto short_record;
		r.unwind.unwinding_size = rd64(p, sw);
		r.unwind.eh_frame_hdr_size = rd64(p + 8, sw);
		r.unwind.mapped_size = rd64(p + 16, sw);
		if (r.unwind.unwinding_size > len - 24 || r.unwind.eh_frame_hdr_size > r.unwind.unwinding_size) {
			hs_error_at(err, offset + 16, "jitdump unwinding info: sizes %llu/%llu do not fit the record",
					   (unsigned long long)r.unwind.unwinding_size,
					   (unsigned long long)r.unwind.eh_frame_hdr_size);
			goto bad;
		}
		if (r.unwind.unwinding_size > HS_JITDUMP_MAX_UNWIND) {
			hs_error_at(err, offset + 16, "jitdump unwinding info of %llu bytes",
					   (unsigned long long)r.unwind.unwinding_size);
			goto bad;
		}
		r.unwind.data = p + 24;
		break;
	case HS_JIT_CODE_CLOSE:
	default:
		break;
	}
	*ret = r;
	return 0;
short_record:
	hs_error_at(err, offset + 4, "jitdump record of type %u: size %u too small for its fields", r.id, r.size);
bad:
	memset(&r.load, 0, sizeof(r) - offsetof(struct hs_jitdump_record, load));
	*ret = r;
	return -EBADMSG;
}

bool hs_jitdump_debug_next(const struct hs_jitdump_record *r, struct hs_jitdump_debug_iter *it,
			   struct hs_jitdump_debug_entry *ret)
{
	const uint8_t *p = r->debug.entries;
	size_t n = r->debug.entries_size, o = it->off, len;

	if (r->id != HS_JIT_CODE_DEBUG_INFO || it->n >= r->debug.nr_entry || o >= n || n - o < 17)
		return false;
	len = bounded_len(p + o + 16, n - o - 16);
	if (len == n - o - 16)
		return false;
	ret->addr = rd64(p + o, r->debug.swap);
	ret->line = rd32(p + o + 8, r->debug.swap);
	ret->discrim = rd32(p + o + 12, r->debug.swap);
	ret->file = (const char *)p + o + 16;
	ret->file_len = HS_MIN(len, (size_t)HS_JITDUMP_MAX_NAME);
	it->off = o + 16 + len + 1;
	it->n++;
	return true;
}
