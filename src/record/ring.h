/* Reading a perf_event mmap ring buffer: the metadata page, then a power-of-two data area the
 * kernel writes at data_head and we consume from data_tail (linux/perf_event.h). */
#ifndef HS_RING_H
#define HS_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data; /* data_size bytes */
	size_t data_size;    /* a power of two */
	unsigned char *scratch; /* for records that wrap around the end */
	size_t scratch_cap;
	uint64_t bad;        /* times a record with an impossible size was met */
	uint64_t read;       /* hs_ring_scan()'s position: records before it are handed out, the
			      * space up to data_tail given back (hs_ring_give_back()) */
};

/* Sets the ring up over an existing mapping of 1 + 2^n pages (or any memory laid out that way,
 * for tests). */
void hs_ring_init(struct hs_ring *r, void *base, size_t page_size, size_t data_size);
void hs_ring_release(struct hs_ring *r);

/* Calls fn for each complete record between data_tail and data_head, each contiguous in
 * memory (copied into scratch when it wraps), then advances data_tail past them. fn's pointer
 * is valid only during the call. Returns the number of records. A record whose size is
 * impossible (smaller than a header, or larger than the ring) means the ring is corrupt: the
 * rest is skipped and r->bad counted. */
size_t hs_ring_drain(struct hs_ring *r, void (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx);

/* Calls fn for each complete record between the last scan and data_head, as hs_ring_drain()
 * does, with its position (pos, counted from the ring's start as data_head is) and whether it
 * is a copy (it wrapped around the end: in scratch). Unlike hs_ring_drain(), the records stay
 * in the ring, their space the kernel's again only when given back: a record not copied can be
 * read where it is until then. Returns the number of records. */
size_t hs_ring_scan(struct hs_ring *r,
		    void (*fn)(void *ctx, const struct perf_event_header *rec, uint64_t pos, bool copied), void *ctx);
/* Where the space given back to the kernel ends. Only hotstack writes data_tail (with release,
 * for the kernel), but from either of a recording's threads, and the reader scans without the
 * lock the other holds to give space back: a relaxed atomic load, since only the value counts. */
static inline uint64_t hs_ring_tail(const struct hs_ring *r)
{
	return __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
}
/* The record at pos (a position hs_ring_scan() gave, not given back, not wrapped). */
static inline const struct perf_event_header *hs_ring_at(const struct hs_ring *r, uint64_t pos)
{
	return (const struct perf_event_header *)(r->data + (pos & (r->data_size - 1)));
}
/* Gives the space before pos back to the kernel. */
void hs_ring_give_back(struct hs_ring *r, uint64_t pos);

#endif
