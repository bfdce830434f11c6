/* Records from several rings merged into timestamp order. Each ring is in order by itself;
 * across rings, a record read in one drain round can be older than one read in the previous
 * round, so records are held until every ring has been read past their time (perf's
 * "finished round" rule: flush what is older than the newest record of the round before). */
#ifndef HS_QUEUE_H
#define HS_QUEUE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

#include "util/util.h"

struct hs_queue_item {
	uint64_t time;
	uint64_t seq; /* arrival order: ties keep it */
	struct perf_event_header *rec; /* owned copy, or borrowed (see owned); NULL: see ref */
	bool owned;
	uint64_t ref; /* the caller's reference to a record it keeps elsewhere, when rec is NULL */
};

struct hs_queue {
	HS_VEC(struct hs_queue_item) heap;
	uint64_t seq;
	uint64_t round_max;  /* newest time seen in the current round */
	uint64_t prev_max;   /* ... and in the previous one */
	size_t bytes;        /* held in copies */
};

void hs_queue_init(struct hs_queue *q);
void hs_queue_release(struct hs_queue *q);
/* Copies rec in, ordered by time. */
void hs_queue_push(struct hs_queue *q, const struct perf_event_header *rec, uint64_t time);
/* Takes rec (malloc'd) over, ordered by time. */
void hs_queue_push_owned(struct hs_queue *q, struct perf_event_header *rec, uint64_t time);
/* Queues rec without copying it: it must stay valid until popped (a file mapped in memory). */
void hs_queue_push_borrowed(struct hs_queue *q, const struct perf_event_header *rec, uint64_t time);
/* Frees a popped item's record if the queue owned it. */
static inline void hs_queue_item_release(struct hs_queue_item *it)
{
	if (it->owned)
		free(it->rec);
	it->rec = NULL;
}
/* Queues a reference to a record the caller keeps (and finds again when it is popped). */
void hs_queue_push_ref(struct hs_queue *q, uint64_t ref, uint64_t time);
/* Ends a drain round: returns the time up to which records can be handed on. */
uint64_t hs_queue_round(struct hs_queue *q);
/* Pops the oldest record if its time is <= limit; the caller releases it with
 * hs_queue_item_release(). */
int hs_queue_pop(struct hs_queue *q, uint64_t limit, struct hs_queue_item *ret);

#endif
