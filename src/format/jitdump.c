/* The jitdump reader. Layouts from tools/perf/Documentation/jitdump-specification.txt; what real
 * writers do besides: V8 pads records to 8 bytes after their payload, and writes the unwinding
 * data as .eh_frame followed by .eh_frame_hdr (the order perf's genelf.c reads it in, whatever
 * the specification's prose says). */
#include "jitdump.h"

#include <errno.h>
#include <string.h>

#include "util/cursor.h"

/* Largest header a writer may declare: anything beyond the known fields is skipped. */
#define HEADER_MAX (1u << 20)

int hs_jitdump_header_parse(const void *buf, size_t len, struct hs_jitdump_header *ret, struct hs_error *err)
{
	struct hs_jitdump_header h = {0};
	struct hs_cursor c;
	uint32_t magic;

	if (len < 16)
		return -ENODATA;
	hs_cursor_init(&c, buf, len);
	magic = hs_cursor_u32(&c);
	if (magic == HS_JITDUMP_MAGIC) {
		h.swap = false;
	} else if (magic == __builtin_bswap32(HS_JITDUMP_MAGIC)) {
		h.swap = true;
	} else {
		hs_error_at(err, 0, "not a jitdump file (magic 0x%08x)", magic);
		return -EBADMSG;
	}
	c.swap = h.swap;
	h.version = hs_cursor_u32(&c);
	h.size = hs_cursor_u32(&c);
	h.elf_mach = hs_cursor_u32(&c);
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
	hs_cursor_skip(&c, 4); /* pad1 */
	if (h.size >= 24)
		h.pid = hs_cursor_u32(&c);
	if (h.size >= 32)
		h.timestamp = hs_cursor_u64(&c);
	if (h.size >= 40)
		h.flags = hs_cursor_u64(&c);
	*ret = h;
	return 0;
}

int hs_jitdump_record_parse(const void *buf, size_t len, const struct hs_jitdump_header *h, uint64_t offset,
			    struct hs_jitdump_record *ret, struct hs_error *err)
{
	struct hs_jitdump_record r;
	struct hs_cursor c;

	if (len < HS_JITDUMP_RECORD_HEADER)
		return -ENODATA;
	hs_cursor_init(&c, buf, len);
	c.swap = h->swap;
	memset(&r, 0, sizeof(r));
	r.id = hs_cursor_u32(&c);
	r.size = hs_cursor_u32(&c);
	r.timestamp = hs_cursor_u64(&c);
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
	hs_cursor_limit(&c, r.size);
	len = r.size - HS_JITDUMP_RECORD_HEADER; /* the payload */
	switch (r.id) {
	case HS_JIT_CODE_LOAD: {
		size_t name_room, n;
		if (len < 40)
			goto short_record;
		r.load.pid = hs_cursor_u32(&c);
		r.load.tid = hs_cursor_u32(&c);
		r.load.vma = hs_cursor_u64(&c);
		r.load.code_addr = hs_cursor_u64(&c);
		r.load.code_size = hs_cursor_u64(&c);
		r.load.code_index = hs_cursor_u64(&c);
		if (r.load.code_size > len - 40) {
			hs_error_at(err, offset + 40, "jitdump code load: code size %llu larger than the record",
					   (unsigned long long)r.load.code_size);
			goto bad;
		}
		/* the name lies between the fixed fields and the code */
		name_room = len - 40 - (size_t)r.load.code_size;
		hs_cursor_limit(&c, c.pos + name_room);
		r.load.name = hs_cursor_string(&c, &n);
		if (!r.load.name) {
			hs_error_at(err, offset + 56, "jitdump code load: name without its terminating NUL");
			goto bad;
		}
		r.load.name_len = HS_MIN(n, (size_t)HS_JITDUMP_MAX_NAME);
		break;
	}
	case HS_JIT_CODE_MOVE:
		if (len < 48)
			goto short_record;
		r.move.pid = hs_cursor_u32(&c);
		r.move.tid = hs_cursor_u32(&c);
		r.move.vma = hs_cursor_u64(&c);
		r.move.old_code_addr = hs_cursor_u64(&c);
		r.move.new_code_addr = hs_cursor_u64(&c);
		r.move.code_size = hs_cursor_u64(&c);
		r.move.code_index = hs_cursor_u64(&c);
		break;
	case HS_JIT_CODE_DEBUG_INFO: {
		uint64_t nr;
		if (len < 16)
			goto short_record;
		r.debug.code_addr = hs_cursor_u64(&c);
		nr = hs_cursor_u64(&c);
		/* each entry takes at least 17 bytes: more cannot be in the record */
		if (nr > (len - 16) / 17) {
			hs_error_at(err, offset + 24, "jitdump debug info: %llu entries cannot fit in %zu bytes",
					   (unsigned long long)nr, len - 16);
			goto bad;
		}
		r.debug.nr_entry = (uint32_t)HS_MIN(nr, (uint64_t)HS_JITDUMP_MAX_DEBUG_ENTRIES);
		r.debug.entries_size = len - 16;
		r.debug.entries = hs_cursor_bytes(&c, r.debug.entries_size);
		r.debug.swap = h->swap;
		break;
	}
	case HS_JIT_CODE_UNWINDING_INFO:
		if (len < 24)
			goto short_record;
		r.unwind.unwinding_size = hs_cursor_u64(&c);
		r.unwind.eh_frame_hdr_size = hs_cursor_u64(&c);
		r.unwind.mapped_size = hs_cursor_u64(&c);
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
		r.unwind.data = hs_cursor_bytes(&c, r.unwind.unwinding_size);
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
	struct hs_jitdump_debug_entry e;
	struct hs_cursor c;

	if (r->id != HS_JIT_CODE_DEBUG_INFO || it->n >= r->debug.nr_entry)
		return false;
	hs_cursor_init(&c, r->debug.entries, r->debug.entries_size);
	c.swap = r->debug.swap;
	/* an address, a line, a discriminator, then a file name of at least its NUL */
	if (!hs_cursor_seek(&c, it->off) || hs_cursor_remaining(&c) < 17)
		return false;
	e.addr = hs_cursor_u64(&c);
	e.line = hs_cursor_u32(&c);
	e.discrim = hs_cursor_u32(&c);
	e.file = hs_cursor_string(&c, &e.file_len);
	if (!e.file)
		return false;
	e.file_len = HS_MIN(e.file_len, (size_t)HS_JITDUMP_MAX_NAME);
	*ret = e;
	it->off = c.pos;
	it->n++;
	return true;
}
