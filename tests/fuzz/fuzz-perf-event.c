/* libFuzzer target: the perf_event record parser for every layout. The input is a layout
 * (sample_type, read_format, branch_sample_type, sample_regs_user, sample_regs_intr: five
 * u64; one flags byte: bit 0 sample_id_all, bit 1 keep the record's own header size, bit 2
 * the event asked for build-ids in its MMAP2 records) then one record. Corpus:
 * tests/fuzz/corpus/perf-event/ (records of the perf.data fixtures). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/perf-event.h"

#define LAYOUT_SIZE 41

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything a parsed record points at lies inside it. */
static void check(const struct hs_perf_event *ev, const uint8_t *rec, size_t n)
{
	const uint8_t *end = rec + n;

	if (ev->type == PERF_RECORD_SAMPLE) {
		const struct hs_perf_sample *s = &ev->sample;

		if ((s->callchain && (const uint8_t *)s->callchain + s->nr_callchain * 8 > end) ||
		    (s->raw && (const uint8_t *)s->raw + s->raw_size > end) ||
		    (s->branches && (const uint8_t *)s->branches + s->nr_branches * 24 > end) ||
		    (s->user_regs && (const uint8_t *)s->user_regs + s->nr_user_regs * 8ull > end) ||
		    (s->intr_regs && (const uint8_t *)s->intr_regs + s->nr_intr_regs * 8ull > end) ||
		    (s->stack && (const uint8_t *)s->stack + s->stack_size > end) ||
		    (s->stack_dyn_size > s->stack_size) ||
		    (s->read && (const uint8_t *)s->read + s->read_size > end) ||
		    (s->aux && (const uint8_t *)s->aux + s->aux_size > end))
			abort();
	} else if (ev->type == PERF_RECORD_MMAP || ev->type == PERF_RECORD_MMAP2) {
		if (ev->mmap.filename && (const uint8_t *)ev->mmap.filename + strlen(ev->mmap.filename) >= end)
			abort();
	} else if (ev->type == PERF_RECORD_COMM) {
		if (ev->comm.comm && (const uint8_t *)ev->comm.comm + strlen(ev->comm.comm) >= end)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_perf_layout l = {0};
	struct hs_error err = {0};
	struct hs_perf_event ev;
	uint8_t *rec;
	size_t n;

	if (size < LAYOUT_SIZE)
		return 0;
	memcpy(&l.sample_type, data, 8);
	memcpy(&l.read_format, data + 8, 8);
	memcpy(&l.branch_sample_type, data + 16, 8);
	memcpy(&l.sample_regs_user, data + 24, 8);
	memcpy(&l.sample_regs_intr, data + 32, 8);
	l.sample_id_all = data[40] & 1;
	l.build_id = data[40] & 4;
	n = size - LAYOUT_SIZE;
	if (n > UINT16_MAX)
		n = UINT16_MAX;
	/* records are 8-byte aligned in the ring buffer and in the reader's copies */
	rec = malloc(n ? n : 1);
	memcpy(rec, data + LAYOUT_SIZE, n);
	if (!(data[40] & 2) && n >= sizeof(struct perf_event_header))
		((struct perf_event_header *)rec)->size = (uint16_t)n;
	hs_perf_sample_id_size(&l);
	hs_perf_id_pos_sample(&l);
	hs_perf_id_pos_trailer(&l);
	if (hs_perf_event_parse(rec, n, &l, 0, &ev, &err) == 0)
		check(&ev, rec, n);
	free(rec);
	return 0;
}
