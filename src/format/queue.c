/* A binary min-heap on (time, seq). */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

void hs_queue_init(struct hs_queue *q)
{
	memset(q, 0, sizeof(*q));
}

void hs_queue_release(struct hs_queue *q)
{
	for (size_t i = 0; i < q->heap.n; i++)
		hs_queue_item_release(&q->heap.v[i]);
	hs_vec_free(&q->heap);
}

static int before(const struct hs_queue_item *a, const struct hs_queue_item *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void hs_queue_push(struct hs_queue *q, const struct perf_event_header *rec, uint64_t time)
{
	struct perf_event_header *copy = hs_xmalloc(rec->size);

	memcpy(copy, rec, rec->size);
	hs_queue_push_owned(q, copy, time);
}

static void push(struct hs_queue *q, struct perf_event_header *rec, uint64_t ref, uint64_t time, bool owned)
{
	struct hs_queue_item it = {time, q->seq++, rec, owned, ref};
	size_t i;

	if (rec)
		q->bytes += rec->size;
	if (time > q->round_max)
		q->round_max = time;
	hs_vec_reserve(&q->heap, q->heap.n + 1);
	i = q->heap.n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(&it, &q->heap.v[parent]))
			break;
		q->heap.v[i] = q->heap.v[parent];
		i = parent;
	}
	q->heap.v[i] = it;
}

void hs_queue_push_owned(struct hs_queue *q, struct perf_event_header *rec, uint64_t time)
{
	push(q, rec, 0, time, true);
}

void hs_queue_push_borrowed(struct hs_queue *q, const struct perf_event_header *rec, uint64_t time)
{
	push(q, (struct perf_event_header *)rec, 0, time, false);
}

void hs_queue_push_ref(struct hs_queue *q, uint64_t ref, uint64_t time)
{
	push(q, NULL, ref, time, false);
}

uint64_t hs_queue_round(struct hs_queue *q)
{
	uint64_t limit = q->prev_max;

	q->prev_max = q->round_max;
	return limit;
}

int hs_queue_pop(struct hs_queue *q, uint64_t limit, struct hs_queue_item *ret)
{
	struct hs_queue_item last;
	size_t i = 0, n;

	if (!q->heap.n || q->heap.v[0].time > limit)
		return 0;
	*ret = q->heap.v[0];
	if (ret->rec)
		q->bytes -= ret->rec->size;
	last = q->heap.v[--q->heap.n];
	n = q->heap.n;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct hs_queue_item *best = &last;
		if (l < n && before(&q->heap.v[l], best)) {
			m = l;
			best = &q->heap.v[l];
		}
		if (r < n && before(&q->heap.v[r], best))
			m = r;
		if (m == i)
			break;
		q->heap.v[i] = q->heap.v[m];
		i = m;
	}
	if (n)
		q->heap.v[i] = last;
	return 1;
}
