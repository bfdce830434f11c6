/* Unit tests for the recording path without a kernel: the ring-buffer reader (wrap-around),
 * the time-ordering queue, the sample parser for every sample_type layout, the side-band
 * records, PERF_CONTEXT handling in kernel call chains, and the call-graph modes of -g. */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/perf-event.h"
#include "format/queue.h"
#include "record/callgraph.h"
#include "record/jvm.h"
#include "record/ring.h"
#include "record/session-private.h"
#include "record/session.h"
#include "unwind/callchain.h"
#include "util/strbuf.h"

/* ---- ring ---- */

#define PAGE 4096
#define DATA 4096

struct collected {
	int n;
	uint16_t sizes[256];
	uint8_t fill[256];
};

static void collect(void *ctx, const struct perf_event_header *rec)
{
	struct collected *c = ctx;
	const uint8_t *b = (const uint8_t *)rec;

	/* every payload byte carries the same value: a torn copy would show */
	for (size_t i = sizeof(*rec); i < rec->size; i++)
		assert_int_equal(b[i], b[sizeof(*rec)]);
	c->sizes[c->n] = rec->size;
	c->fill[c->n] = rec->size > sizeof(*rec) ? b[sizeof(*rec)] : 0;
	c->n++;
}

/* Writes a record at position pos (mod DATA), as the kernel would, wrapping at the end. */
static uint64_t put(uint8_t *data, uint64_t pos, uint16_t size, uint8_t fill)
{
	uint8_t rec[1024];
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, size};

	memcpy(rec, &h, sizeof(h));
	memset(rec + sizeof(h), fill, size - sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		data[(pos + i) % DATA] = rec[i];
	return pos + size;
}

static void test_ring_wrap(void **state)
{
	uint8_t *mem = aligned_alloc(PAGE, PAGE + DATA);
	struct perf_event_mmap_page *meta = (void *)mem;
	struct hs_ring r;
	struct collected c = {0};
	uint64_t pos;

	(void)state;
	memset(mem, 0, PAGE + DATA);
	hs_ring_init(&r, mem, PAGE, DATA);
	/* start near the end so that records wrap: one straddles the end in its payload, a later
	 * round puts a header across the end */
	pos = DATA - 40;
	meta->data_tail = pos;
	pos = put(r.data, pos, 16, 1);
	pos = put(r.data, pos, 64, 2); /* wraps in its payload */
	pos = put(r.data, pos, 24, 3);
	meta->data_head = pos;
	assert_int_equal(hs_ring_drain(&r, collect, &c), 3);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.sizes[1], 64);
	assert_int_equal(c.fill[1], 2);
	assert_int_equal(meta->data_tail, pos);

	/* a header that itself straddles the end of the data area */
	pos = meta->data_tail = 2 * DATA - 4;
	meta->data_head = put(r.data, pos, 40, 7);
	c.n = 0;
	assert_int_equal(hs_ring_drain(&r, collect, &c), 1);
	assert_int_equal(c.sizes[0], 40);
	assert_int_equal(c.fill[0], 7);

	/* nothing new: nothing read */
	c.n = 0;
	assert_int_equal(hs_ring_drain(&r, collect, &c), 0);

	/* the kernel publishes data_head only past complete records: a record reaching beyond it
	 * means the ring is corrupt, and the reader skips to head rather than read garbage */
	pos = meta->data_tail;
	put(r.data, pos, 48, 9);
	meta->data_head = pos + 8;
	assert_int_equal(hs_ring_drain(&r, collect, &c), 0);
	assert_int_equal(r.bad, 1);
	assert_int_equal(meta->data_tail, pos + 8);

	/* a size smaller than a header is corrupt too */
	pos = meta->data_tail;
	{
		struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 4};
		memcpy(r.data + (pos % DATA), &h, sizeof(h));
		meta->data_head = pos + 64;
		assert_int_equal(hs_ring_drain(&r, collect, &c), 0);
		assert_int_equal(r.bad, 2);
		assert_int_equal(meta->data_tail, pos + 64);
	}
	hs_ring_release(&r);
	free(mem);
}

/* ---- queue ---- */

struct held_scan {
	struct hs_record *r;
	int n;
	uint64_t refs[64];
};

static void hold(void *ctx, const struct perf_event_header *rec, uint64_t pos, bool copied)
{
	struct held_scan *h = ctx;

	assert_false(copied);
	h->refs[h->n++] = hs_held_add(h->r, 0, pos, rec->size, true);
}

/* The payload of a taken record: each byte its fill, the record whole. */
static uint8_t take(struct hs_record *r, uint64_t ref, uint16_t size)
{
	bool owned;
	struct perf_event_header *rec = hs_held_take(r, ref, &owned);
	struct collected c = {0};
	uint8_t fill;

	assert_non_null(rec);
	assert_int_equal(rec->size, size);
	collect(&c, rec);
	fill = c.fill[0];
	if (owned)
		free(rec);
	return fill;
}

/* Records left in the ring: their space is given back as they are taken, in ring order whatever
 * the order of taking; a ring over 5/8 full of records waiting has them copied out, their
 * space given back at once, and taking them later gives the copies. */
static void test_ring_held(void **state)
{
	uint8_t *mem = aligned_alloc(PAGE, PAGE + DATA);
	struct perf_event_mmap_page *meta = (void *)mem;
	struct hs_record *r = calloc(1, sizeof(*r));
	struct hs_record_ring g = {0};
	struct held_scan h = {r, 0, {0}};
	uint64_t pos = 0, ends[9];

	(void)state;
	memset(mem, 0, PAGE + DATA);
	hs_ring_init(&g.ring, mem, PAGE, DATA);
	hs_vec_push(&r->rings, g);
	pthread_mutex_init(&r->rings.v[0].lock, NULL);
	for (int i = 0; i < 4; i++)
		ends[i] = pos = put(r->rings.v[0].ring.data, pos, 440, (uint8_t)(10 + i));
	meta->data_head = pos;
	assert_int_equal(hs_ring_scan(&r->rings.v[0].ring, hold, &h), 4);
	assert_int_equal(meta->data_tail, 0); /* all still there */
	assert_int_equal(take(r, h.refs[0], 440), 10);
	assert_int_equal(meta->data_tail, ends[0]);
	assert_int_equal(take(r, h.refs[2], 440), 12); /* out of order: the second still waits */
	assert_int_equal(meta->data_tail, ends[0]);
	assert_int_equal(take(r, h.refs[1], 440), 11);
	assert_int_equal(meta->data_tail, ends[2]);
	hs_held_spill_if_full(r, 0); /* a quarter full: nothing copied */
	assert_int_equal(r->spilled, 0);

	/* more than half full (two rounds waiting, as in a steady recording): left there */
	for (int i = 4; i < 8; i++)
		ends[i] = pos = put(r->rings.v[0].ring.data, pos, 440, (uint8_t)(10 + i));
	meta->data_head = pos;
	assert_int_equal(hs_ring_scan(&r->rings.v[0].ring, hold, &h), 4);
	hs_held_spill_if_full(r, 0);
	assert_int_equal(r->spilled, 0);
	/* past 5/8 full: copied out, the ring's space free; the kernel writes over it */
	ends[8] = pos = put(r->rings.v[0].ring.data, pos, 440, 18);
	meta->data_head = pos;
	assert_int_equal(hs_ring_scan(&r->rings.v[0].ring, hold, &h), 1);
	hs_held_spill_if_full(r, 0);
	assert_int_equal(r->spilled, 6);
	assert_int_equal(meta->data_tail, ends[8]);
	memset(r->rings.v[0].ring.data, 0xee, DATA);
	for (int i = 3; i < 9; i++)
		assert_int_equal(take(r, h.refs[i], 440), 10 + i);
	assert_int_equal(r->rings.v[0].held_n, 0);
	hs_held_release(&r->rings.v[0]);
	pthread_mutex_destroy(&r->rings.v[0].lock);
	hs_ring_release(&r->rings.v[0].ring);
	hs_vec_free(&r->rings);
	free(r->take_buf);
	free(r);
	free(mem);
}

static void test_queue_order(void **state)
{
	struct hs_queue q;
	struct hs_queue_item it;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 8};
	uint64_t limit, last = 0;
	int n = 0;

	(void)state;
	hs_queue_init(&q);
	/* round 1: two rings, interleaved times */
	hs_queue_push(&q, &h, 30);
	hs_queue_push(&q, &h, 10);
	hs_queue_push(&q, &h, 20);
	limit = hs_queue_round(&q);
	assert_int_equal(limit, 0); /* nothing is safe after the first round */
	assert_int_equal(hs_queue_pop(&q, limit, &it), 0);
	/* round 2 brings an older record from another ring */
	hs_queue_push(&q, &h, 25);
	hs_queue_push(&q, &h, 40);
	limit = hs_queue_round(&q);
	assert_int_equal(limit, 30);
	while (hs_queue_pop(&q, limit, &it)) {
		assert_true(it.time >= last);
		last = it.time;
		free(it.rec);
		n++;
	}
	assert_int_equal(n, 4); /* 10 20 25 30 */
	assert_int_equal(hs_queue_pop(&q, UINT64_MAX, &it), 1);
	assert_int_equal(it.time, 40);
	free(it.rec);
	hs_queue_release(&q);
}

/* ---- sample layouts ---- */

struct writer {
	uint8_t buf[4096];
	size_t n;
};

static void w64(struct writer *w, uint64_t v)
{
	memcpy(w->buf + w->n, &v, 8);
	w->n += 8;
}

static void w32x2(struct writer *w, uint32_t a, uint32_t b)
{
	memcpy(w->buf + w->n, &a, 4);
	memcpy(w->buf + w->n + 4, &b, 4);
	w->n += 8;
}

static void wbytes(struct writer *w, const void *p, size_t n)
{
	memcpy(w->buf + w->n, p, n);
	w->n += n;
}

/* Encodes a sample for layout l, in the order kernel/events/core.c writes fields, each field
 * holding a value derived from its bit so that a misplaced field is noticed. */
static void encode_sample(const struct hs_perf_layout *l, struct writer *w)
{
	uint64_t st = l->sample_type;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0};

	w->n = sizeof(h);
	if (st & PERF_SAMPLE_IDENTIFIER)
		w64(w, 0x1d);
	if (st & PERF_SAMPLE_IP)
		w64(w, 0x401000);
	if (st & PERF_SAMPLE_TID)
		w32x2(w, 100, 101);
	if (st & PERF_SAMPLE_TIME)
		w64(w, 123456789);
	if (st & PERF_SAMPLE_ADDR)
		w64(w, 0xadd7);
	if (st & PERF_SAMPLE_ID)
		w64(w, 0x1d);
	if (st & PERF_SAMPLE_STREAM_ID)
		w64(w, 0x5d);
	if (st & PERF_SAMPLE_CPU)
		w32x2(w, 3, 0);
	if (st & PERF_SAMPLE_PERIOD)
		w64(w, 1001001);
	if (st & PERF_SAMPLE_READ) {
		w64(w, 77); /* value */
		w64(w, 5);  /* time enabled */
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		w64(w, 3);
		w64(w, PERF_CONTEXT_USER);
		w64(w, 0x401000);
		w64(w, 0x402000);
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t sz = 4;
		uint8_t raw[4] = {1, 2, 3, 4};
		wbytes(w, &sz, 4);
		wbytes(w, raw, 4); /* 4 + 4 is already a multiple of 8 */
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		w64(w, 2);
		for (int i = 0; i < 6; i++)
			w64(w, 0xb0 + (uint64_t)i);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		w64(w, PERF_SAMPLE_REGS_ABI_64);
		w64(w, 0x7ffe0000); /* two registers in the mask */
		w64(w, 0x401000);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		w64(w, 24);
		w64(w, 0x1111);
		w64(w, 0x2222);
		w64(w, 0x3333);
		w64(w, 8);
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		w64(w, (st & PERF_SAMPLE_WEIGHT_STRUCT) ? (0x0003000200000001ULL) : 42);
	if (st & PERF_SAMPLE_DATA_SRC)
		w64(w, 0xd5);
	if (st & PERF_SAMPLE_TRANSACTION)
		w64(w, 0x7a);
	if (st & PERF_SAMPLE_REGS_INTR) {
		w64(w, PERF_SAMPLE_REGS_ABI_64);
		w64(w, 0x1234); /* one register in the mask */
	}
	if (st & PERF_SAMPLE_PHYS_ADDR)
		w64(w, 0xf00d);
	if (st & PERF_SAMPLE_CGROUP)
		w64(w, 0xc6);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		w64(w, 4096);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		w64(w, 2 << 20);
	if (st & PERF_SAMPLE_AUX) {
		w64(w, 8);
		w64(w, 0xa0a0);
	}
	h.size = (uint16_t)w->n;
	memcpy(w->buf, &h, sizeof(h));
}

static void check_sample(const struct hs_perf_layout *l, const struct hs_perf_sample *s)
{
	uint64_t st = l->sample_type;

	if (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID))
		assert_int_equal(s->sid.id, 0x1d);
	if (st & PERF_SAMPLE_IP)
		assert_int_equal(s->ip, 0x401000);
	if (st & PERF_SAMPLE_TID) {
		assert_int_equal(s->sid.pid, 100);
		assert_int_equal(s->sid.tid, 101);
	}
	if (st & PERF_SAMPLE_TIME)
		assert_int_equal(s->sid.time, 123456789);
	if (st & PERF_SAMPLE_ADDR)
		assert_int_equal(s->addr, 0xadd7);
	if (st & PERF_SAMPLE_STREAM_ID)
		assert_int_equal(s->sid.stream_id, 0x5d);
	if (st & PERF_SAMPLE_CPU)
		assert_int_equal(s->sid.cpu, 3);
	if (st & PERF_SAMPLE_PERIOD)
		assert_int_equal(s->period, 1001001);
	if (st & PERF_SAMPLE_READ)
		assert_int_equal(s->read_size, 16);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t v;
		assert_int_equal(s->nr_callchain, 3);
		memcpy(&v, (const char *)s->callchain + 16, 8);
		assert_int_equal(v, 0x402000);
	}
	if (st & PERF_SAMPLE_RAW) {
		assert_int_equal(s->raw_size, 4);
		assert_int_equal(((const uint8_t *)s->raw)[3], 4);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t v;
		assert_int_equal(s->nr_branches, 2);
		memcpy(&v, (const char *)s->branches + 40, 8);
		assert_int_equal(v, 0xb5);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t v;
		assert_int_equal(s->user_abi, PERF_SAMPLE_REGS_ABI_64);
		assert_int_equal(s->nr_user_regs, 2);
		memcpy(&v, (const char *)s->user_regs + 8, 8);
		assert_int_equal(v, 0x401000);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		assert_int_equal(s->stack_size, 24);
		assert_int_equal(s->stack_dyn_size, 8);
	}
	if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
		assert_int_equal(s->weight, 1);
		assert_int_equal(s->weight_var2, 2);
		assert_int_equal(s->weight_var3, 3);
	} else if (st & PERF_SAMPLE_WEIGHT) {
		assert_int_equal(s->weight, 42);
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		assert_int_equal(s->data_src, 0xd5);
	if (st & PERF_SAMPLE_TRANSACTION)
		assert_int_equal(s->transaction, 0x7a);
	if (st & PERF_SAMPLE_REGS_INTR)
		assert_int_equal(s->nr_intr_regs, 1);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		assert_int_equal(s->phys_addr, 0xf00d);
	if (st & PERF_SAMPLE_CGROUP)
		assert_int_equal(s->cgroup, 0xc6);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		assert_int_equal(s->data_page_size, 4096);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		assert_int_equal(s->code_page_size, 2 << 20);
	if (st & PERF_SAMPLE_AUX) {
		assert_int_equal(s->aux_size, 8);
		assert_non_null(s->aux);
	}
}

static void test_sample_layouts(void **state)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR, PERF_SAMPLE_READ,
		PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD, PERF_SAMPLE_STREAM_ID,
		PERF_SAMPLE_RAW, PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER,
		PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_TRANSACTION,
		PERF_SAMPLE_REGS_INTR, PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_AUX, PERF_SAMPLE_CGROUP,
		PERF_SAMPLE_DATA_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE, PERF_SAMPLE_WEIGHT_STRUCT,
	};
	uint64_t seed = 88172645463325252ULL;
	int layouts = 0;

	(void)state;
	/* every single bit, every pair, and a few thousand random combinations */
	for (size_t i = 0; i < HS_ARRAY_SIZE(bits) * HS_ARRAY_SIZE(bits) + 4000; i++) {
		struct hs_perf_layout l = {0};
		struct writer w;
		struct hs_perf_event ev;
		struct hs_error err = {0};

		if (i < HS_ARRAY_SIZE(bits) * HS_ARRAY_SIZE(bits)) {
			l.sample_type = bits[i / HS_ARRAY_SIZE(bits)] | bits[i % HS_ARRAY_SIZE(bits)];
		} else {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			for (size_t b = 0; b < HS_ARRAY_SIZE(bits); b++)
				if (seed >> b & 1)
					l.sample_type |= bits[b];
		}
		l.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
		l.sample_regs_user = 0x3;
		l.sample_regs_intr = 0x1;
		encode_sample(&l, &w);
		assert_int_equal(hs_perf_event_parse(w.buf, w.n, &l, 0, &ev, &err), 0);
		assert_int_equal(ev.type, PERF_RECORD_SAMPLE);
		check_sample(&l, &ev.sample);
		/* one byte short is an error naming the field, never a read past the end */
		if (w.n > 8) {
			struct perf_event_header h;
			memcpy(&h, w.buf, sizeof(h));
			h.size -= 8;
			memcpy(w.buf, &h, sizeof(h));
			memset(&err, 0, sizeof(err));
			assert_int_equal(hs_perf_event_parse(w.buf, w.n - 8, &l, 0, &ev, &err), -EBADMSG);
			assert_true(err.detail[0] != '\0');
		}
		layouts++;
	}
	assert_true(layouts > 4000);
}

/* The recording keeps a sample with its stack copy cut to what the kernel filled (its dynamic
 * size, 8 of 24 bytes here) and one word more, so that a copy the kernel ended early still says
 * so (dynamic size below size): the copy parses to the same fields, those after the stack
 * included, with the stack's first bytes, a size of 16 and a dynamic size of 8. */
static void test_record_copy_cuts_stack(void **state)
{
	static const uint64_t after[] = {0, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_REGS_INTR,
					 PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX};

	(void)state;
	for (size_t i = 0; i < 2 * HS_ARRAY_SIZE(after); i++) {
		struct hs_perf_layout l = {0};
		struct writer w;
		struct hs_perf_event ev, cut;
		struct hs_error err = {0};
		struct perf_event_header *copy;
		uint64_t v;

		l.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | after[i % HS_ARRAY_SIZE(after)];
		if (i >= HS_ARRAY_SIZE(after))
			l.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK;
		l.sample_regs_user = 0x3;
		l.sample_regs_intr = 0x1;
		encode_sample(&l, &w);
		assert_int_equal(hs_perf_event_parse(w.buf, w.n, &l, 0, &ev, &err), 0);
		copy = hs_record_copy((const struct perf_event_header *)w.buf, &ev);
		assert_int_equal(copy->size, w.n - 8);
		assert_int_equal(hs_perf_event_parse(copy, copy->size, &l, 0, &cut, &err), 0);
		assert_int_equal(cut.sample.stack_size, 16);
		assert_int_equal(cut.sample.stack_dyn_size, 8);
		memcpy(&v, cut.sample.stack, 8);
		assert_int_equal(v, 0x1111);
		cut.sample.stack_size = 24; /* the rest as it was */
		check_sample(&l, &cut.sample);
		free(copy);
		{
			/* without the stack at all (a sample whose stack was walked in its ring): an
			 * empty one, no dynamic size, every other field as it was */
			uint8_t *buf = NULL;
			size_t cap = 0;
			struct hs_perf_event none;
			copy = hs_record_copy_into((const struct perf_event_header *)w.buf, &ev, &buf, &cap, true);
			assert_int_equal(copy->size, w.n - 24 - 8);
			assert_int_equal(hs_perf_event_parse(copy, copy->size, &l, 0, &none, &err), 0);
			assert_int_equal(none.sample.stack_size, 0);
			assert_null(none.sample.stack);
			assert_int_equal(none.sample.ip, cut.sample.ip);
			assert_int_equal(none.sample.sid.time, cut.sample.sid.time);
			assert_int_equal(none.sample.nr_user_regs, cut.sample.nr_user_regs);
			assert_int_equal(none.sample.weight, cut.sample.weight);
			assert_int_equal(none.sample.data_src, cut.sample.data_src);
			assert_int_equal(none.sample.transaction, cut.sample.transaction);
			assert_int_equal(none.sample.phys_addr, cut.sample.phys_addr);
			assert_int_equal(none.sample.nr_intr_regs, cut.sample.nr_intr_regs);
			assert_int_equal(none.sample.aux_size, cut.sample.aux_size);
			assert_int_equal(none.sample.nr_callchain, cut.sample.nr_callchain);
			assert_int_equal(none.sample.nr_branches, cut.sample.nr_branches);
			free(buf);
		}
	}
}

static void test_sample_hostile(void **state)
{
	struct hs_perf_layout l = {PERF_SAMPLE_CALLCHAIN, 0, 0, 0, 0, false};
	struct writer w = {{0}, 0};
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 24};
	struct hs_perf_event ev;
	struct hs_error err = {0};

	(void)state;
	w.n = sizeof(h);
	w64(&w, UINT64_MAX / 4); /* an absurd callchain length */
	w64(&w, 0);
	memcpy(w.buf, &h, sizeof(h));
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &l, 0x100, &ev, &err), -EBADMSG);
	assert_int_equal(err.offset, 0x108);
	/* unknown sample_type bits are refused, not misparsed */
	l.sample_type = 1ULL << 40;
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &l, 0, &ev, &err), -EOPNOTSUPP);
	/* a header whose size disagrees with the buffer */
	l.sample_type = PERF_SAMPLE_IP;
	assert_int_equal(hs_perf_event_parse(w.buf, 12, &l, 0, &ev, &err), -EBADMSG);
}

/* ---- side-band ---- */

static void put_trailer(struct writer *w)
{
	/* sample_id for TID | TIME | CPU | IDENTIFIER */
	w32x2(w, 200, 201);
	w64(w, 5555);
	w32x2(w, 1, 0);
	w64(w, 0x1d);
}

static const struct hs_perf_layout sb_layout = {
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER, 0, 0, 0, 0, true};
/* ... of an event that asked for build-ids in its MMAP2 records */
static const struct hs_perf_layout sb_layout_bid = {
	PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER, 0, 0, 0, 0, true, true};

static void finish(struct writer *w, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {type, misc, (uint16_t)w->n};
	memcpy(w->buf, &h, sizeof(h));
}

static void test_sideband(void **state)
{
	struct writer w;
	struct hs_perf_event ev;
	struct hs_error err = {0};
	char name[16] = "/usr/bin/x";
	uint8_t ident[24] = {20, 0, 0, 0, 0xab};
	/* device fe:01, inode 0x1234567, generation 9 */
	uint8_t devino[24] = {0xfe, 0, 0, 0, 1, 0, 0, 0, 0x67, 0x45, 0x23, 0x01, 0, 0, 0, 0, 9};

	(void)state;
	/* MMAP2 carrying a build-id, for an event that asked for one */
	w.n = 8;
	w32x2(&w, 200, 201);
	w64(&w, 0x400000);
	w64(&w, 0x1000);
	w64(&w, 0x2000);
	wbytes(&w, ident, sizeof(ident));
	w32x2(&w, 5, 2);
	wbytes(&w, name, sizeof(name));
	put_trailer(&w);
	finish(&w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout_bid, 0, &ev, &err), 0);
	assert_int_equal(ev.mmap.start, 0x400000);
	assert_int_equal(ev.mmap.pgoff, 0x2000);
	assert_int_equal(ev.mmap.build_id_size, 20);
	assert_int_equal(ev.mmap.build_id[0], 0xab);
	assert_int_equal(ev.mmap.prot, 5);
	assert_string_equal(ev.mmap.filename, "/usr/bin/x");
	assert_int_equal(ev.sid.time, 5555);
	assert_int_equal(ev.sid.tid, 201);

	/* MMAP2 of an event that did not ask, with the build-id bit another event left set in the
	 * kernel's shared record: device and inode, as they are */
	w.n = 8;
	w32x2(&w, 200, 201);
	w64(&w, 0x400000);
	w64(&w, 0x1000);
	w64(&w, 0x2000);
	wbytes(&w, devino, sizeof(devino));
	w32x2(&w, 5, 2);
	wbytes(&w, name, sizeof(name));
	put_trailer(&w);
	finish(&w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout, 0, &ev, &err), 0);
	assert_int_equal(ev.mmap.build_id_size, 0);
	assert_int_equal(ev.mmap.maj, 0xfe);
	assert_int_equal(ev.mmap.min, 1);
	assert_int_equal(ev.mmap.ino, 0x1234567);
	assert_int_equal(ev.mmap.ino_generation, 9);
	assert_int_equal(ev.mmap.prot, 5);
	assert_string_equal(ev.mmap.filename, "/usr/bin/x");
	/* the same bytes for an event that asked: a build-id of 0xfe bytes is cut to 20 */
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout_bid, 0, &ev, &err), 0);
	assert_int_equal(ev.mmap.build_id_size, 20);
	assert_int_equal(ev.mmap.ino, 0);

	/* COMM at exec */
	w.n = 8;
	w32x2(&w, 300, 300);
	wbytes(&w, "newname\0", 8);
	put_trailer(&w);
	finish(&w, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout, 0, &ev, &err), 0);
	assert_string_equal(ev.comm.comm, "newname");
	assert_true(ev.comm.exec);

	/* FORK */
	w.n = 8;
	w32x2(&w, 400, 300);
	w32x2(&w, 401, 300);
	w64(&w, 99);
	put_trailer(&w);
	finish(&w, PERF_RECORD_FORK, 0);
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout, 0, &ev, &err), 0);
	assert_int_equal(ev.task.pid, 400);
	assert_int_equal(ev.task.ppid, 300);
	assert_int_equal(ev.task.tid, 401);

	/* LOST */
	w.n = 8;
	w64(&w, 0x1d);
	w64(&w, 123);
	put_trailer(&w);
	finish(&w, PERF_RECORD_LOST, 0);
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout, 0, &ev, &err), 0);
	assert_int_equal(ev.lost.lost, 123);

	/* a file name without its NUL */
	w.n = 8;
	w32x2(&w, 300, 300);
	wbytes(&w, "abcdefgh", 8);
	put_trailer(&w);
	finish(&w, PERF_RECORD_COMM, 0);
	memset(&err, 0, sizeof(err));
	assert_int_equal(hs_perf_event_parse(w.buf, w.n, &sb_layout, 0, &ev, &err), -EBADMSG);
	assert_non_null(strstr(err.detail, "NUL"));
}

/* ---- kernel call chains ---- */

static void test_callchain_contexts(void **state)
{
	const uint64_t ips[] = {
		PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL, 0xffffffff81000020ULL,
		PERF_CONTEXT_USER,   0x401000,              0x402000, 0x403000,
		PERF_CONTEXT_GUEST,  0x999,
	};
	struct hs_callchain cc = {0};

	(void)state;
	hs_callchain_from_perf(&cc, ips, HS_ARRAY_SIZE(ips), true, true, 127);
	assert_int_equal(cc.frames.n, 5);
	assert_true(cc.frames.v[0].kernel);
	assert_false(cc.frames.v[0].ret); /* the interrupted instruction */
	assert_true(cc.frames.v[1].ret);
	assert_false(cc.frames.v[2].kernel);
	assert_false(cc.frames.v[2].ret); /* the user IP at the interrupt is exact too */
	assert_true(cc.frames.v[3].ret);
	assert_int_equal(cc.frames.v[4].addr, 0x403000);
	assert_int_equal(cc.stop, HS_STOP_END);

	hs_callchain_from_perf(&cc, ips, HS_ARRAY_SIZE(ips), false, true, 127);
	assert_int_equal(cc.frames.n, 3);
	assert_false(cc.frames.v[0].kernel);

	/* a chain as long as the cap was cut */
	hs_callchain_from_perf(&cc, ips, 7, true, true, 5);
	assert_int_equal(cc.stop, HS_STOP_DEPTH);
	hs_callchain_release(&cc);
}

/* ---- call-graph policy ---- */

static void test_callgraph_modes(void **state)
{
	static const struct {
		const char *mode;
		enum hs_callgraph cg;
		enum hs_callgraph_unwind unwind;
		bool lbr_repair;
		uint32_t stack_bytes;
	} ok[] = {
		{"auto", HS_CG_STACK, HS_CG_UNWIND_AUTO, true, 0},
		{"fp", HS_CG_FP, HS_CG_UNWIND_KERNEL, true, 0},
		{"none", HS_CG_NONE, HS_CG_UNWIND_KERNEL, false, 0},
		{"dwarf", HS_CG_STACK, HS_CG_UNWIND_CFI, false, 0},
		{"dwarf,8", HS_CG_STACK, HS_CG_UNWIND_CFI, false, 8},
		{"dwarf,9", HS_CG_STACK, HS_CG_UNWIND_CFI, false, 16}, /* whole words */
		{"dwarf,65528", HS_CG_STACK, HS_CG_UNWIND_CFI, false, HS_MAX_STACK_BYTES},
		{"lbr", HS_CG_LBR, HS_CG_UNWIND_KERNEL, false, 0},
	};
	static const char *const unknown[] = {"", "Auto", "dwarfx", "fp,8", "lbr,8", "dwarf8"};
	static const char *const bad_size[] = {"dwarf,", "dwarf,7", "dwarf,65529", "dwarf,-8", "dwarf,8x", "dwarf,abc"};
	struct hs_event_desc hw = {"cycles", 0, 0, true, false, false}, sw = {"cpu-clock", 1, 0, false, true, false};
	struct hs_callgraph_opts cg;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&cg, 0xff, sizeof(cg));
		assert_int_equal(hs_callgraph_parse(ok[i].mode, &cg), 0);
		assert_int_equal(cg.callgraph, ok[i].cg);
		assert_int_equal(cg.unwind, ok[i].unwind);
		assert_int_equal(cg.lbr_repair, ok[i].lbr_repair);
		assert_int_equal(cg.stack_bytes, ok[i].stack_bytes);
		/* the branch records repair leaves only where a hardware event records them */
		assert_int_equal(hs_callgraph_lbr_repair(&cg, &hw), ok[i].lbr_repair);
		assert_false(hs_callgraph_lbr_repair(&cg, &sw));
		assert_int_equal(hs_callgraph_off_cpu_ok(&cg), ok[i].cg != HS_CG_LBR);
	}
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		cg.callgraph = HS_CG_LBR;
		assert_int_equal(hs_callgraph_parse(unknown[i], &cg), -EINVAL);
		assert_int_equal(cg.callgraph, HS_CG_LBR); /* untouched */
	}
	for (size_t i = 0; i < sizeof(bad_size) / sizeof(bad_size[0]); i++)
		assert_int_equal(hs_callgraph_parse(bad_size[i], &cg), -ERANGE);
}

static void test_callgraph_sizes(void **state)
{
	uint32_t v = 1;

	(void)state;
	assert_int_equal(hs_callgraph_stack_bytes("8", &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(hs_callgraph_stack_bytes("4097", &v), 0);
	assert_int_equal(v, 4104);
	assert_int_equal(hs_callgraph_stack_bytes("65528", &v), 0);
	assert_int_equal(v, HS_MAX_STACK_BYTES);
	v = 1;
	assert_int_equal(hs_callgraph_stack_bytes("0", &v), -ERANGE);
	assert_int_equal(hs_callgraph_stack_bytes("65536", &v), -ERANGE);
	assert_int_equal(hs_callgraph_stack_bytes("-16", &v), -ERANGE);
	assert_int_equal(hs_callgraph_stack_bytes("", &v), -ERANGE);
	assert_int_equal(hs_callgraph_stack_bytes("99999999999999999999999", &v), -ERANGE);
	assert_int_equal(v, 1);

	/* rings: 128 pages unless stacks are copied; then room for about 256 samples */
	assert_int_equal(hs_callgraph_ring_pages(HS_CG_FP, 0, 4096), 128);
	assert_int_equal(hs_callgraph_ring_pages(HS_CG_LBR, 65528, 4096), 128);
	assert_int_equal(hs_callgraph_ring_pages(HS_CG_STACK, HS_DEFAULT_STACK_BYTES, 4096), 4096);
	assert_int_equal(hs_callgraph_ring_pages(HS_CG_STACK, 8, 4096), 16);
	assert_int_equal(hs_callgraph_ring_pages(HS_CG_STACK, 8192, 4096), 512);
	assert_int_equal(hs_callgraph_ring_pages(HS_CG_STACK, 65528, 1024), 8192); /* the cap */

	/* the fewest pages that hold two of the largest samples (64 KiB at most, the kernel's cap) */
	assert_int_equal(hs_callgraph_min_ring_pages(HS_CG_STACK, HS_DEFAULT_STACK_BYTES, 4096), 32);
	assert_int_equal(hs_callgraph_min_ring_pages(HS_CG_STACK, 8192, 4096), 8);
	assert_int_equal(hs_callgraph_min_ring_pages(HS_CG_STACK, 8, 4096), 2);
	assert_int_equal(hs_callgraph_min_ring_pages(HS_CG_STACK, HS_DEFAULT_STACK_BYTES, 65536), 2);
	assert_int_equal(hs_callgraph_min_ring_pages(HS_CG_FP, 0, 4096), 1);
	assert_int_equal(hs_callgraph_min_ring_pages(HS_CG_NONE, 0, 4096), 1);
	/* and the default rings hold more than that */
	assert_true(hs_callgraph_ring_pages(HS_CG_STACK, HS_DEFAULT_STACK_BYTES, 4096) >
		    hs_callgraph_min_ring_pages(HS_CG_STACK, HS_DEFAULT_STACK_BYTES, 4096));
}

/* record's option loop, cut down to -a, -q, -d S, -g as cmd-record.c reads it: what it
 * saw, as "a q d=S g=MODE g" in out, and the first word after the options. */
static const char *getopt_g(const char *line, char *out, size_t cap)
{
	static const struct option lo[] = {{"call-graph", required_argument, NULL, 'g'}, {0, 0, 0, 0}};
	static char buf[256];
	char *argv[16], *save = NULL;
	int argc = 0, c;

	snprintf(buf, sizeof(buf), "record %s", line);
	for (char *w = strtok_r(buf, " ", &save); w && argc < 15; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	out[0] = '\0';
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ag::qd:", lo, NULL)) != -1) {
		const char *mode;
		size_t n = strlen(out);
		if (c == 'g') {
			mode = hs_callgraph_getopt(argv, &optind, optarg);
			snprintf(out + n, cap - n, "g%s%s ", mode ? "=" : "", mode ? mode : "");
		} else if (c == 'd') {
			snprintf(out + n, cap - n, "d=%s ", optarg);
		} else {
			snprintf(out + n, cap - n, "%c ", c);
		}
	}
	return optind < argc ? argv[optind] : "";
}

/* perf's -g takes no value: alone anywhere, in clusters, with a mode only when one follows */
static void test_callgraph_getopt(void **state)
{
	static const struct {
		const char *line, *seen, *next;
	} cases[] = {
		{"-g", "g ", ""},
		{"-a -d 1 -g", "a d=1 g ", ""},
		{"-ga -d 1", "g a d=1 ", ""},
		{"-ag -d 1", "a g d=1 ", ""},
		{"-gad 1", "g a d=1 ", ""},
		{"-agq", "a g q ", ""},
		{"-g fp -a", "g=fp a ", ""},
		{"-g dwarf,8x", "g=dwarf,8x ", ""}, /* a mode, with a bad size: said so */
		{"-gfp -a", "g=fp a ", ""},
		{"-ag none", "a g=none ", ""},
		{"-g -- ls", "g ", "ls"},
		{"-g ls -l", "g ", "ls"},
		{"--call-graph fp -a", "g=fp a ", ""},
		{"--call-graph ls", "g=ls ", ""}, /* the long option always takes its value */
		{"--call-graph=dwarf", "g=dwarf ", ""},
		{"-a --call-graph", "a : ", ""}, /* which needs one */
		{"-gx", "g ? ", ""},             /* -x, unknown */
	};
	char out[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *next = getopt_g(cases[i].line, out, sizeof(out));
		if (strcmp(out, cases[i].seen) || strcmp(next, cases[i].next))
			fail_msg("'%s': saw '%s' then '%s', expected '%s' then '%s'", cases[i].line, out, next,
				 cases[i].seen, cases[i].next);
	}
}

/* -p and -t win over -a and -C, as in perf, with a line saying so */
static void test_targets_settle(void **state)
{
	int32_t one = 1;
	struct hs_record_opts o = {.all_cpus = true, .cpu_list = "0", .pids = &one, .npids = 1};
	const char *w;

	(void)state;
	w = hs_record_targets_settle(&o);
	assert_non_null(w);
	assert_string_equal(w, "-p overrides -C: only the given processes are recorded, on every CPU, as perf does");
	assert_false(o.all_cpus);
	assert_null(o.cpu_list);
	assert_int_equal(o.npids, 1);
	o = (struct hs_record_opts){.all_cpus = true, .tids = &one, .ntids = 1};
	assert_string_equal(hs_record_targets_settle(&o),
			    "-t overrides -a: only the given threads are recorded, on every CPU, as perf does");
	assert_false(o.all_cpus);
	o = (struct hs_record_opts){.all_cpus = true, .pids = &one, .npids = 1, .tids = &one, .ntids = 1};
	assert_non_null(strstr(hs_record_targets_settle(&o), "-p and -t override -a: "));
	/* nothing to settle: -a alone, -C alone, -p alone, -a with a command */
	o = (struct hs_record_opts){.all_cpus = true, .cpu_list = "0-1"};
	assert_null(hs_record_targets_settle(&o));
	assert_true(o.all_cpus);
	assert_string_equal(o.cpu_list, "0-1");
	o = (struct hs_record_opts){.pids = &one, .npids = 1};
	assert_null(hs_record_targets_settle(&o));
	assert_false(o.all_cpus);
}

/* What an event allows and how its samples count. */
static void test_event_policy(void **state)
{
	const struct hs_event_desc *clock = hs_event_find("cpu-clock"), *faults = hs_event_find("page-faults");
	const struct hs_event_desc *cycles = hs_event_find("cycles");
	struct hs_event_desc tp = {"sched:sched_switch", PERF_TYPE_TRACEPOINT, 1, false, false, true};
	struct hs_strbuf sb = {0};

	(void)state;
	assert_int_equal(hs_event_sample_period(clock, 999, 0), 1000000000 / 999);
	assert_int_equal(hs_event_sample_period(clock, 999, 5000), 5000);
	assert_int_equal(hs_event_sample_period(cycles, 999, 0), 1);
	assert_true(hs_event_off_cpu_ok(clock));
	assert_true(hs_event_off_cpu_ok(hs_event_find("task-clock")));
	assert_false(hs_event_off_cpu_ok(cycles));
	assert_false(hs_event_off_cpu_ok(&tp));
	assert_true(hs_event_in_kernel_paths(faults));
	assert_true(hs_event_in_kernel_paths(&tp));
	assert_false(hs_event_in_kernel_paths(clock));
	assert_false(hs_event_in_kernel_paths(cycles));
	hs_event_describe(clock, 999, 0, &sb);
	assert_string_equal(hs_strbuf_str(&sb), "event cpu-clock at 999 Hz");
	hs_strbuf_reset(&sb);
	hs_event_describe(cycles, 999, 100000, &sb);
	assert_string_equal(hs_strbuf_str(&sb), "event cycles, every 100000 events");
	hs_strbuf_reset(&sb);
	hs_event_describe(&tp, 999, 0, &sb);
	assert_string_equal(hs_strbuf_str(&sb), "event sched:sched_switch, every hit");
	hs_strbuf_release(&sb);
}

/* -p PID[,PID...]: positive ids, a malformed list taken back whole. */
static void test_pid_list(void **state)
{
	struct hs_record_pids pids = {0};

	(void)state;
	assert_int_equal(hs_record_pids_add(&pids, "1,2"), 0);
	assert_int_equal(hs_record_pids_add(&pids, "1073741823,"), 0);
	assert_int_equal(pids.n, 3);
	assert_int_equal(pids.v[2], 0x3fffffff);
	assert_int_equal(hs_record_pids_add(&pids, "3,0"), -EINVAL);
	assert_int_equal(hs_record_pids_add(&pids, "3,1073741824"), -EINVAL);
	assert_int_equal(hs_record_pids_add(&pids, "3,,4"), -EINVAL);
	assert_int_equal(hs_record_pids_add(&pids, "x"), -EINVAL);
	assert_int_equal(pids.n, 3);
	assert_int_equal(hs_record_pids_add(&pids, ""), 0);
	assert_int_equal(pids.n, 3);
	free(pids.v);
}

/* perf's -g takes no mode: the word after it is one only when it names one */
static void test_callgraph_is_mode(void **state)
{
	(void)state;
	assert_true(hs_callgraph_is_mode("auto"));
	assert_true(hs_callgraph_is_mode("fp"));
	assert_true(hs_callgraph_is_mode("dwarf,16384"));
	assert_true(hs_callgraph_is_mode("dwarf,3")); /* a mode, with a bad size said as such */
	assert_true(hs_callgraph_is_mode("none"));
	assert_false(hs_callgraph_is_mode("--"));
	assert_false(hs_callgraph_is_mode("-F"));
	assert_false(hs_callgraph_is_mode("sleep"));
	assert_false(hs_callgraph_is_mode(""));
}

/* -C and /sys/devices/system/cpu/online: perf's CPU list syntax */
static void test_cpu_list(void **state)
{
	struct hs_record_cpus cpus = {0};

	(void)state;
	assert_int_equal(hs_record_cpus_add(&cpus, "0-1,3"), 0);
	assert_int_equal(cpus.n, 3);
	assert_int_equal(cpus.v[0], 0);
	assert_int_equal(cpus.v[1], 1);
	assert_int_equal(cpus.v[2], 3);
	assert_int_equal(hs_record_cpus_add(&cpus, "5,7-8\n"), 0);
	assert_int_equal(cpus.n, 6);
	assert_int_equal(cpus.v[5], 8);
	assert_int_equal(hs_record_cpus_add(&cpus, "65535"), 0);
	assert_int_equal(cpus.n, 7);
	static const char *const bad[] = {"", "x", "1,", ",1", "1,,2", "3-1", "-1", "1-", "1-x", "65536", "0 1", "1;2"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(hs_record_cpus_add(&cpus, bad[i]), -EINVAL);
		assert_int_equal(cpus.n, 7);
	}
	free(cpus.v);
}

/* -d and -m as they are parsed */
static void test_record_numbers(void **state)
{
	double d = 0;
	size_t pages = 0;

	(void)state;
	assert_int_equal(hs_record_duration_parse("0.2", &d), 0);
	assert_true(d > 0.19 && d < 0.21);
	assert_int_equal(hs_record_duration_parse("0", &d), -EINVAL);
	assert_int_equal(hs_record_duration_parse("1e8", &d), -EINVAL);
	assert_int_equal(hs_record_duration_parse("2s", &d), 0);
	assert_true(d == 2);
	assert_int_equal(hs_record_duration_parse("500ms", &d), 0);
	assert_true(d > 0.49 && d < 0.51);
	assert_int_equal(hs_record_duration_parse("2m", &d), 0);
	assert_true(d == 120);
	assert_int_equal(hs_record_duration_parse("2x", &d), -EINVAL);
	assert_int_equal(hs_record_duration_parse("-2s", &d), -EINVAL);
	assert_int_equal(hs_record_duration_parse("nan", &d), -EINVAL);
	assert_int_equal(hs_record_ring_pages_parse("1", &pages), 0);
	assert_int_equal(pages, 1);
	assert_int_equal(hs_record_ring_pages_parse("1048576", &pages), 0);
	assert_int_equal(pages, 1048576);
	assert_int_equal(hs_record_ring_pages_parse("3", &pages), -EINVAL);
	assert_int_equal(hs_record_ring_pages_parse("0", &pages), -EINVAL);
	assert_int_equal(hs_record_ring_pages_parse("2097152", &pages), -EINVAL);
	assert_int_equal(hs_record_ring_pages_parse("-2", &pages), -EINVAL);
	assert_int_equal(pages, 1048576);
}

/* The exit status: a signal that ended the recording wins over the command's status (Ctrl-C is
 * 130 as the shell has it, kill 143); else the command's, 0 when the duration ended it */
static void test_record_status(void **state)
{
	struct hs_record r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.cause = HS_CAUSE_SIGNAL;
	r.stop_signal = SIGINT;
	assert_int_equal(hs_record_command_status(&r), 130);
	r.child = 1234;
	r.child_exited = true;
	r.child_status = SIGTERM; /* killed by our SIGTERM */
	assert_int_equal(hs_record_command_status(&r), 130);
	r.stop_signal = SIGTERM;
	assert_int_equal(hs_record_command_status(&r), 143);
	r.cause = HS_CAUSE_COMMAND_EXITED;
	r.child_status = 3 << 8; /* exit(3) */
	assert_int_equal(hs_record_command_status(&r), 3);
	r.cause = HS_CAUSE_DURATION;
	r.child_killed_by_us = true;
	assert_int_equal(hs_record_command_status(&r), 0);
	memset(&r, 0, sizeof(r));
	r.cause = HS_CAUSE_DURATION;
	assert_int_equal(hs_record_command_status(&r), 0);
	/* lost samples: a ring twice as big, up to the most -m takes */
	r.o.mmap_pages = 128;
	assert_int_equal(hs_record_bigger_ring(&r), 256);
	r.o.mmap_pages = HS_RECORD_MAX_RING_PAGES;
	assert_int_equal(hs_record_bigger_ring(&r), 0); /* none bigger */
	/* with stack copies, at least the default ring: twice -m 32 would still lose most */
	r.o.callgraph = HS_CG_STACK;
	r.o.stack_bytes = HS_DEFAULT_STACK_BYTES;
	r.o.mmap_pages = 32;
	assert_int_equal(hs_record_bigger_ring(&r),
			 hs_callgraph_ring_pages(HS_CG_STACK, HS_DEFAULT_STACK_BYTES, (size_t)sysconf(_SC_PAGESIZE)));
	assert_true(hs_record_bigger_ring(&r) >= 256);
	r.o.mmap_pages = 16384;
	assert_int_equal(hs_record_bigger_ring(&r), 32768);
	r.o.callgraph = HS_CG_FP;
	r.o.mmap_pages = 1;
	assert_int_equal(hs_record_bigger_ring(&r), 128);
}

/* The rings a user may lock, as perf_mmap() counts them: each ring its data pages and one more,
 * all of them within kernel.perf_event_mlock_kb on each CPU plus RLIMIT_MEMLOCK */
static void test_ring_fit(void **state)
{
	/* 516 KiB on each of 2 CPUs and 8 MiB, in 4 KiB pages: 258 + 2048 */
	struct hs_ring_limit l = {true, 516, 2, 8192, 2306};

	(void)state;
	assert_int_equal(hs_record_ring_fit(&l, 2), 1024); /* 2 x 1025 fit, 2 x 2049 do not */
	assert_int_equal(hs_record_ring_fit(&l, 1), 2048);
	assert_int_equal(hs_record_ring_fit(&l, 3), 512);
	l.pages = 100;
	assert_int_equal(hs_record_ring_fit(&l, 2), 32);
	l.pages = 3;
	assert_int_equal(hs_record_ring_fit(&l, 2), 0);
	l.limited = false;
	assert_int_equal(hs_record_ring_fit(&l, 64), HS_RECORD_MAX_RING_PAGES);
}

/* -e list: names filled into lines, or one a line */
static void test_names_layout(void **state)
{
	char *v[] = {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "cc", "d"};
	struct hs_names names = {v, 4, 4};
	struct hs_strbuf sb = {0};

	(void)state;
	hs_names_layout(&names, false, &sb);
	assert_string_equal(hs_strbuf_str(&sb),
			    "  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cc\n  d\n");
	hs_strbuf_reset(&sb);
	names.n = 2;
	hs_names_layout(&names, true, &sb);
	assert_string_equal(hs_strbuf_str(&sb),
			    "  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n");
	hs_strbuf_release(&sb);
}

/* -e NAME: an event, a tracepoint (CATEGORY:NAME), or neither */
static void test_event_lookup(void **state)
{
	struct hs_event_desc tp;
	const struct hs_event_desc *e = NULL;
	struct hs_error err = {0};

	(void)state;
	assert_int_equal(hs_event_lookup("cpu-clock", &tp, &e, &err), 0);
	assert_string_equal(e->name, "cpu-clock");
	assert_int_equal(hs_event_lookup("cycels", &tp, &e, &err), -ESRCH);
	assert_string_equal(e->name, "cpu-clock");
	assert_int_not_equal(hs_event_lookup("nosuchcategory_hs:nosuch", &tp, &e, &err), 0);
	assert_int_not_equal(hs_event_lookup(":", &tp, &e, &err), -ESRCH);
}

static void jvm_answer_count(void *ctx, int32_t pid, int rc, const struct hs_error *err)
{
	(void)pid;
	(void)rc;
	(void)err;
	++*(int *)ctx;
}

/* Processes that are gone or are not JVMs are passed over, with nothing asked or said. */
static void test_jvm_passes_over(void **state)
{
	int32_t pids[] = {(int32_t)getpid(), 0x3fffffff, (int32_t)getppid()};
	size_t left = 99;
	int answers = 0;

	(void)state;
	assert_int_equal(hs_jvm_request_perfmaps(pids, HS_ARRAY_SIZE(pids), jvm_answer_count, &answers, &left), 0);
	assert_int_equal(answers, 0);
	assert_int_equal(left, 99);
	assert_int_equal(hs_jvm_request_perfmaps(NULL, 0, jvm_answer_count, &answers, &left), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_ring_held),
		cmocka_unit_test(test_queue_order),
		cmocka_unit_test(test_sample_layouts),
		cmocka_unit_test(test_sample_hostile),
		cmocka_unit_test(test_record_copy_cuts_stack),
		cmocka_unit_test(test_sideband),
		cmocka_unit_test(test_callchain_contexts),
		cmocka_unit_test(test_callgraph_modes),
		cmocka_unit_test(test_callgraph_sizes),
		cmocka_unit_test(test_jvm_passes_over),
		cmocka_unit_test(test_event_policy),
		cmocka_unit_test(test_pid_list),
		cmocka_unit_test(test_callgraph_is_mode),
		cmocka_unit_test(test_cpu_list),
		cmocka_unit_test(test_record_numbers),
		cmocka_unit_test(test_callgraph_getopt),
		cmocka_unit_test(test_targets_settle),
		cmocka_unit_test(test_record_status),
		cmocka_unit_test(test_ring_fit),
		cmocka_unit_test(test_names_layout),
		cmocka_unit_test(test_event_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
