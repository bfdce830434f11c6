/* perf ring buffer consumer. The kernel publishes data_head with a release store; reading it
 * with acquire ordering and writing data_tail with release ordering is the protocol in
 * linux/perf_event.h. */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void hs_ring_init(struct hs_ring *r, void *base, size_t page_size, size_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->meta = base;
	r->data = (unsigned char *)base + page_size;
	r->data_size = data_size;
}

void hs_ring_release(struct hs_ring *r)
{
	free(r->scratch);
	r->scratch = NULL;
	r->scratch_cap = 0;
}

/* The record at tail, contiguous (copied into scratch when it wraps: *copied), or NULL when
 * none is complete before head or its size is impossible (counted, and *bad set). */
static const struct perf_event_header *record_at(struct hs_ring *r, uint64_t tail, uint64_t head, bool *copied,
						 bool *bad)
{
	struct perf_event_header h;
	size_t off = (size_t)(tail & (r->data_size - 1));

	*copied = *bad = false;
	if (head - tail < sizeof(h))
		return NULL;
	/* the header itself may straddle the end */
	if (off + sizeof(h) <= r->data_size) {
		memcpy(&h, r->data + off, sizeof(h));
	} else {
		size_t first = r->data_size - off;
		memcpy(&h, r->data + off, first);
		memcpy((char *)&h + first, r->data, sizeof(h) - first);
	}
	if (h.size < sizeof(h) || h.size > r->data_size || h.size > head - tail) {
		r->bad++;
		*bad = true;
		return NULL;
	}
	if (off + h.size <= r->data_size)
		return (const void *)(r->data + off);
	hs_xgrow((void **)&r->scratch, &r->scratch_cap, h.size, 1);
	memcpy(r->scratch, r->data + off, r->data_size - off);
	memcpy(r->scratch + (r->data_size - off), r->data, h.size - (r->data_size - off));
	*copied = true;
	return (const void *)r->scratch;
}

size_t hs_ring_drain(struct hs_ring *r, void (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = hs_ring_tail(r);
	const struct perf_event_header *rec;
	size_t n = 0;
	bool copied, bad = false;

	while (tail < head && (rec = record_at(r, tail, head, &copied, &bad))) {
		fn(ctx, rec);
		tail += rec->size;
		n++;
	}
	if (bad)
		tail = head;
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	r->read = tail;
	return n;
}

size_t hs_ring_scan(struct hs_ring *r,
		    void (*fn)(void *ctx, const struct perf_event_header *rec, uint64_t pos, bool copied), void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = hs_ring_tail(r);
	const struct perf_event_header *rec;
	size_t n = 0;
	bool copied, bad = false;

	if (r->read < tail)
		r->read = tail;
	while (r->read < head && (rec = record_at(r, r->read, head, &copied, &bad))) {
		uint64_t pos = r->read;
		r->read += rec->size;
		fn(ctx, rec, pos, copied);
		n++;
	}
	/* a corrupt ring: what follows cannot be framed; it is skipped, given back with the rest */
	if (bad)
		r->read = head;
	return n;
}

void hs_ring_give_back(struct hs_ring *r, uint64_t pos)
{
	if (pos > hs_ring_tail(r))
		__atomic_store_n(&r->meta->data_tail, pos, __ATOMIC_RELEASE);
}
