/* Records read where the kernel wrote them. The reader thread scans each ring and hands the
 * main thread references to its records, not copies; the main thread copies each (its stack cut
 * to what the kernel filled) into one buffer of its own when it comes to it, in time order, and
 * gives its space back to the kernel. Copying every record out on the reader thread, into memory
 * of its own, was a fifth of a recording's CPU with stack copies: each stack crossed between
 * the CPUs twice and went through malloc.
 *
 * A ring filled past half with records waiting (the main thread busy for long: a large file's
 * unwinding tables built, a slow output) has the reader copy them out after all (spill), as it
 * always did, so that the kernel never runs out of room because the main thread is slow. */
#include "session-private.h"

#include <stdlib.h>
#include <string.h>

#define REF_RING_SHIFT 48
#define PREFETCH_NEXT_BYTES 1024

struct perf_event_header *hs_record_copy_into(const struct perf_event_header *rec, const struct hs_perf_event *ev,
					      uint8_t **buf, size_t *cap, bool no_stack)
{
	const uint8_t *p = (const uint8_t *)rec;
	const struct hs_perf_sample *s = &ev->sample;
	uint64_t keep;
	size_t head, tail, n;
	uint8_t *out;

	/* a word more than the kernel filled: the copy's size stays above its dynamic size, which
	 * is how a copy the kernel ended early (at the end of the stack) is told from a full one */
	keep = ev->type == PERF_RECORD_SAMPLE && s->stack ? ((s->stack_dyn_size + 7) & ~7ULL) + 8 : UINT64_MAX;
	if (no_stack && keep != UINT64_MAX) {
		/* an empty stack has no dynamic size after it either */
		head = (size_t)((const uint8_t *)s->stack - p);
		tail = head + s->stack_size + 8;
		n = rec->size - (tail - head);
		hs_xgrow((void **)buf, cap, n, 1);
		out = *buf;
		memcpy(out, p, head);
		memset(out + head - 8, 0, 8);
		memcpy(out + head, p + tail, rec->size - tail);
		((struct perf_event_header *)out)->size = (uint16_t)n;
		return (struct perf_event_header *)out;
	}
	if (keep >= s->stack_size) {
		hs_xgrow((void **)buf, cap, rec->size, 1);
		memcpy(*buf, rec, rec->size);
		return (struct perf_event_header *)*buf;
	}
	head = (size_t)((const uint8_t *)s->stack - p); /* the copy's size is the 8 bytes before */
	tail = head + s->stack_size;                     /* its dynamic size, and what follows */
	n = rec->size - (size_t)(s->stack_size - keep);
	hs_xgrow((void **)buf, cap, n, 1);
	out = *buf;
	memcpy(out, p, head);
	memcpy(out + head - 8, &keep, 8);
	memcpy(out + head, s->stack, keep);
	memcpy(out + head + keep, p + tail, rec->size - tail);
	((struct perf_event_header *)out)->size = (uint16_t)n;
	return (struct perf_event_header *)out;
}

/* The kernel reserves the whole requested stack size in every sample, most of it unused where
 * stacks are shallow: copying it all doubled hotstack's CPU time at 64 KiB. */
struct perf_event_header *hs_record_copy(const struct perf_event_header *rec, const struct hs_perf_event *ev)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	struct perf_event_header *out = hs_record_copy_into(rec, ev, &buf, &cap, false);

	return cap > out->size ? hs_xrealloc(out, out->size) : out; /* exactly: it waits in memory */
}

static struct hs_held *held_at(struct hs_record_ring *g, size_t i)
{
	return &g->held[(g->held_first + i) % g->held_cap];
}

static void held_grow(struct hs_record_ring *g)
{
	struct hs_held *v;
	size_t cap = g->held_cap ? g->held_cap * 2 : 256;

	v = hs_xcalloc(cap, sizeof(*v));
	for (size_t i = 0; i < g->held_n; i++)
		v[i] = *held_at(g, i);
	free(g->held);
	g->held = v;
	g->held_cap = cap;
	g->held_first = 0;
}

/* Gives back the space of the records at the front that are taken or copied out, and forgets
 * those taken. Under g->lock. */
static void settle(struct hs_record_ring *g)
{
	uint64_t upto = 0;

	while (g->held_released < g->held_n) {
		const struct hs_held *h = held_at(g, g->held_released);
		if (h->state == HS_HELD_WAITING || h->state == HS_HELD_TAKEN)
			break;
		upto = h->pos + h->size;
		g->held_released++;
	}
	while (g->held_n && held_at(g, 0)->state == HS_HELD_DONE) {
		g->held_first = (g->held_first + 1) % g->held_cap;
		g->held_n--;
		g->held_seq++;
		g->held_released--;
	}
	if (upto)
		hs_ring_give_back(&g->ring, upto);
}

uint64_t hs_held_add(struct hs_record *r, size_t ring, uint64_t pos, uint32_t size, bool waiting)
{
	struct hs_record_ring *g = &r->rings.v[ring];
	struct hs_held *h;
	uint64_t seq;

	pthread_mutex_lock(&g->lock);
	if (g->held_n == g->held_cap)
		held_grow(g);
	h = held_at(g, g->held_n);
	*h = (struct hs_held){pos, size, waiting ? HS_HELD_WAITING : HS_HELD_DONE, NULL};
	seq = g->held_seq + g->held_n++;
	if (!waiting)
		settle(g);
	pthread_mutex_unlock(&g->lock);
	return (uint64_t)(ring + 1) << REF_RING_SHIFT | (seq & ((1ULL << REF_RING_SHIFT) - 1));
}

void hs_held_spill_if_full(struct hs_record *r, size_t ring)
{
	struct hs_record_ring *g = &r->rings.v[ring];

	pthread_mutex_lock(&g->lock);
	/* a round's records are taken once it is read (but for its last few milliseconds), so a
	 * steady recording keeps half its ring waiting (the reader is woken at half): copying out
	 * starts past that, at five eighths, and leaves three eighths for the main thread to catch
	 * up */
	if (g->ring.read - hs_ring_tail(&g->ring) > g->ring.data_size / 8 * 5) {
		for (size_t i = g->held_released; i < g->held_n; i++) {
			struct hs_held *h = held_at(g, i);
			const struct perf_event_header *rec = hs_ring_at(&g->ring, h->pos);
			struct hs_perf_event ev;
			if (h->state != HS_HELD_WAITING)
				continue;
			if (hs_perf_event_parse(rec, rec->size, &r->layout, 0, &ev, &r->reader_perr)) {
				/* a sample the reader took only the time of: dropped when taken */
				__atomic_add_fetch(&r->bad_records, 1, __ATOMIC_RELAXED);
				h->state = HS_HELD_SPILLED;
				continue;
			}
			h->copy = hs_record_copy(rec, &ev);
			h->state = HS_HELD_SPILLED;
			__atomic_add_fetch(&r->backlog, h->copy->size, __ATOMIC_RELAXED);
			r->spilled++;
		}
		settle(g);
	}
	pthread_mutex_unlock(&g->lock);
}

struct perf_event_header *hs_held_take(struct hs_record *r, uint64_t ref, bool *owned)
{
	struct hs_record_ring *g = &r->rings.v[(ref >> REF_RING_SHIFT) - 1];
	uint64_t seq = ref & ((1ULL << REF_RING_SHIFT) - 1);
	struct perf_event_header *out = NULL;
	struct hs_held *h;

	*owned = false;
	pthread_mutex_lock(&g->lock);
	h = held_at(g, (size_t)((seq - g->held_seq) & ((1ULL << REF_RING_SHIFT) - 1)));
	if (h->state == HS_HELD_SPILLED) {
		out = h->copy;
		*owned = out != NULL;
		if (out)
			__atomic_sub_fetch(&r->backlog, out->size, __ATOMIC_RELAXED);
	} else if (h->state == HS_HELD_WAITING) {
		const struct perf_event_header *rec = hs_ring_at(&g->ring, h->pos);
		struct hs_perf_event ev;
		if (!hs_perf_event_parse(rec, rec->size, &r->layout, 0, &ev, &r->perr))
			out = hs_record_copy_into(rec, &ev, &r->take_buf, &r->take_cap, false);
		else
			__atomic_add_fetch(&r->bad_records, 1, __ATOMIC_RELAXED);
	}
	h->state = HS_HELD_DONE;
	h->copy = NULL;
	settle(g);
	pthread_mutex_unlock(&g->lock);
	return out;
}

static struct hs_held *held_of(struct hs_record_ring *g, uint64_t seq)
{
	return held_at(g, (size_t)((seq - g->held_seq) & ((1ULL << REF_RING_SHIFT) - 1)));
}

void hs_held_finish(struct hs_record *r)
{
	struct hs_record_ring *g = r->taking.ring;

	if (!r->taking.active)
		return;
	r->taking.active = false;
	pthread_mutex_lock(&g->lock);
	held_of(g, r->taking.seq)->state = HS_HELD_DONE;
	settle(g);
	pthread_mutex_unlock(&g->lock);
}

/* The stack_done hook: the sample copied (with its stack or without), its space given back. */
static void stack_done(void *ctx, bool keep)
{
	struct hs_record *r = ctx;
	struct perf_event_header *copy;

	if (!r->taking.active)
		return;
	copy = hs_record_copy_into(r->taking.rec, r->taking.ev, &r->take_buf, &r->take_cap, !keep);
	/* it parsed where it was: its copy parses; should it not, the record stays taken */
	if (hs_perf_event_parse(copy, copy->size, &r->layout, 0, r->taking.ev, &r->perr))
		return;
	hs_held_finish(r);
}

bool hs_held_take_in_place(struct hs_record *r, uint64_t ref, struct hs_perf_event *ev)
{
	struct hs_record_ring *g = &r->rings.v[(ref >> REF_RING_SHIFT) - 1];
	uint64_t seq = ref & ((1ULL << REF_RING_SHIFT) - 1);
	const struct perf_event_header *rec;
	struct hs_held *h;
	bool taken = false;

	pthread_mutex_lock(&g->lock);
	h = held_of(g, seq);
	rec = hs_ring_at(&g->ring, h->pos);
	if (h->state == HS_HELD_WAITING && rec->type == PERF_RECORD_SAMPLE &&
	    !hs_perf_event_parse(rec, rec->size, &r->layout, 0, ev, &r->perr) && ev->sample.stack) {
		h->state = HS_HELD_TAKEN;
		taken = true;
	}
	if (taken && seq + 1 - g->held_seq < g->held_n) {
		/* the ring's next record, most likely the next one taken: its header, registers and
		 * kernel chain, asked for while this one is worked on (the kernel wrote them on
		 * another CPU) */
		const uint8_t *next = (const uint8_t *)hs_ring_at(&g->ring, held_of(g, seq + 1)->pos);
		for (size_t off = 0; off < PREFETCH_NEXT_BYTES; off += 64)
			__builtin_prefetch(next + off, 0, 2);
	}
	pthread_mutex_unlock(&g->lock);
	if (!taken)
		return false;
	r->taking.active = true;
	r->taking.ring = g;
	r->taking.seq = seq;
	r->taking.rec = rec;
	r->taking.ev = ev;
	ev->sample.stack_done = stack_done;
	ev->sample.stack_done_ctx = r;
	return true;
}

void hs_held_release(struct hs_record_ring *g)
{
	for (size_t i = 0; i < g->held_n; i++)
		free(held_at(g, i)->copy);
	free(g->held);
	g->held = NULL;
	g->held_n = g->held_cap = g->held_released = 0;
}
