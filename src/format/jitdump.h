/* jitdump, the file JIT runtimes write to describe the code they generate
 * (tools/perf/Documentation/jitdump-specification.txt in the Linux tree): a file header, then
 * records CODE_LOAD, CODE_MOVE, CODE_DEBUG_INFO, CODE_CLOSE and CODE_UNWINDING_INFO, each with a
 * size and a timestamp. A bounded reader over bytes in memory, usable on a file that is still
 * being written: a record not complete yet is reported as such, never misread. Either byte order;
 * header sizes other than the specification's; unknown record types are returned for the caller
 * to skip. Every size is checked against the record and capped. Prints nothing. */
#ifndef HS_JITDUMP_H
#define HS_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

#define HS_JITDUMP_MAGIC 0x4A695444u /* "JiTD" */
#define HS_JITDUMP_HEADER_MIN 40     /* magic .. flags */
#define HS_JITDUMP_RECORD_HEADER 16  /* id, total_size, timestamp */

enum hs_jitdump_id {
	HS_JIT_CODE_LOAD = 0,
	HS_JIT_CODE_MOVE = 1,
	HS_JIT_CODE_DEBUG_INFO = 2,
	HS_JIT_CODE_CLOSE = 3,
	HS_JIT_CODE_UNWINDING_INFO = 4,
};

/* Header flag: timestamps come from the architecture's counter (the TSC on x86-64), not from
 * CLOCK_MONOTONIC. */
#define HS_JITDUMP_FLAG_ARCH_TIMESTAMP 1ull

/* Caps on what one record may make a reader hold. A record larger than HS_JITDUMP_MAX_RECORD is
 * skipped whole (-EOVERFLOW); names longer than HS_JITDUMP_MAX_NAME are cut. */
#define HS_JITDUMP_MAX_RECORD ((size_t)64 << 20)
#define HS_JITDUMP_MAX_NAME 4096
#define HS_JITDUMP_MAX_DEBUG_ENTRIES (1u << 20)
#define HS_JITDUMP_MAX_UNWIND ((size_t)16 << 20)
#define HS_JITDUMP_MAX_CODE_SIZE ((uint64_t)1 << 30)

struct hs_jitdump_header {
	uint32_t version;
	uint32_t size;     /* the header's total_size: records start there */
	uint32_t elf_mach;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;    /* HS_JITDUMP_FLAG_* */
	bool swap;         /* written in the other byte order */
};

struct hs_jitdump_debug_entry {
	uint64_t addr;
	uint32_t line;
	uint32_t discrim;
	const char *file; /* not NUL-terminated: file_len bytes */
	size_t file_len;
};

/* One record; pointers are into the buffer given to hs_jitdump_record_parse() (borrowed). */
struct hs_jitdump_record {
	uint32_t id;        /* enum hs_jitdump_id, or an unknown id (nothing else is set) */
	uint32_t size;      /* total_size: bytes from this record to the next */
	uint64_t timestamp;
	union {
		struct {
			uint32_t pid, tid;
			uint64_t vma, code_addr, code_size, code_index;
			const char *name; /* not NUL-terminated: name_len bytes (at most HS_JITDUMP_MAX_NAME) */
			size_t name_len;
		} load;
		struct {
			uint32_t pid, tid;
			uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
		} move;
		struct {
			uint64_t code_addr;
			uint32_t nr_entry;      /* entries present, at most HS_JITDUMP_MAX_DEBUG_ENTRIES */
			const uint8_t *entries; /* walk with hs_jitdump_debug_next() */
			size_t entries_size;
			bool swap;
		} debug;
		struct {
			uint64_t unwinding_size;    /* bytes in data: .eh_frame, then .eh_frame_hdr */
			uint64_t eh_frame_hdr_size; /* the last ones of them */
			uint64_t mapped_size;
			const uint8_t *data;
		} unwind;
	};
};

/* Reads the file header from the first len bytes of a file. Returns 0; -ENODATA when len is too
 * short for it (more may come); -EBADMSG when it is not a jitdump file (magic) or its size is
 * impossible; -EOPNOTSUPP for version 0. Other versions are read as version 1: every version so
 * far only appended. */
int hs_jitdump_header_parse(const void *buf, size_t len, struct hs_jitdump_header *ret, struct hs_error *err);

/* Reads the record at the start of buf (len bytes available), offset being its offset in the
 * file (for messages). Returns 0 with *ret set; -ENODATA when the record is not complete within
 * len (wait for more, or the file was cut there; when len holds the record header, ret->id, size
 * and timestamp are set); -EOVERFLOW when its size is over
 * HS_JITDUMP_MAX_RECORD (ret->size says how much to skip, ret->id and timestamp are set);
 * -EBADMSG when the record header is impossible (a size smaller than the header: nothing after
 * it can be found; ret->size says so) or a known record contradicts its own size (ret->size
 * still lets the caller skip it). */
int hs_jitdump_record_parse(const void *buf, size_t len, const struct hs_jitdump_header *h, uint64_t offset,
			    struct hs_jitdump_record *ret, struct hs_error *err);

/* Iterates over a CODE_DEBUG_INFO record's entries, from a zeroed iterator. Returns false at the
 * end (after nr_entry entries, or where an entry would run past the record). */
struct hs_jitdump_debug_iter {
	size_t off;
	uint32_t n;
};
bool hs_jitdump_debug_next(const struct hs_jitdump_record *r, struct hs_jitdump_debug_iter *it,
			   struct hs_jitdump_debug_entry *ret);

/* Converting architecture timestamps (x86-64 TSC) to CLOCK_MONOTONIC nanoseconds, the clock
 * hotstack records with: ns = ((tsc >> shift) * mult + (((tsc & mask) * mult) >> shift)) + offset
 * (mod 2^64), the kernel's perf_event_mmap_page formula with an offset of our own. */
struct hs_tsc_conv {
	bool valid;
	uint16_t shift;
	uint32_t mult;
	uint64_t offset;
};

static inline uint64_t hs_tsc_to_ns(const struct hs_tsc_conv *c, uint64_t tsc)
{
	uint64_t quot = tsc >> c->shift, rem = tsc & (((uint64_t)1 << c->shift) - 1);
	return quot * c->mult + ((rem * c->mult) >> c->shift) + c->offset;
}

#endif
