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

size_t hs_ring_drain(struct hs_ring *r, void (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t mask = r->data_size - 1, n = 0;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail & mask);
		const struct perf_event_header *rec;

		if (head - tail < sizeof(h))
			break;
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
			tail = head;
			break;
		}
		if (off + h.size <= r->data_size) {
			rec = (const void *)(r->data + off);
		} else {
			size_t first = r->data_size - off;
			hs_xgrow((void **)&r->scratch, &r->scratch_cap, h.size, 1);
			memcpy(r->scratch, r->data + off, first);
			memcpy(r->scratch + first, r->data, h.size - first);
			rec = (const void *)r->scratch;
		}
		fn(ctx, rec);
		tail += h.size;
		n++;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
