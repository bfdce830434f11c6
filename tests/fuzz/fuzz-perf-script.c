/* libFuzzer target: the perf script text reader behind `hotstack collapse`, twice per input:
 * with the defaults and whole reads, then with -F+srcline, small caps (to reach the overflow
 * paths) and short reads (to move line and peek boundaries across buffer refills).
 * Corpus: tests/fuzz/corpus/perf-script/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/perf-script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *p;
	size_t n, off;
	size_t chunk; /* 0: as much as asked for; else at most 1 .. chunk bytes a read */
};

static ssize_t input_read(void *ctx, void *buf, size_t n)
{
	struct input *in = ctx;
	size_t k = in->n - in->off;

	if (k > n)
		k = n;
	if (in->chunk && k > 1)
		k = 1 + (in->off * 7 + in->p[in->off]) % (k < in->chunk ? k : in->chunk);
	memcpy(buf, in->p + in->off, k);
	in->off += k;
	return (ssize_t)k;
}

static void run(const uint8_t *data, size_t size, const struct hs_perf_script_opts *o, size_t chunk)
{
	struct input in = {data, size, 0, chunk};
	struct hs_perf_script *r = hs_perf_script_new(input_read, &in, o);
	struct hs_error err = {0};
	struct hs_ps_sample s;

	while (hs_perf_script_next(r, &s, &err) > 0) {
		for (size_t i = 0; i < s.nframes; i++) {
			const struct hs_ps_frame *f = &s.frames[i];
			struct hs_ps_parts it;
			struct hs_ps_str part;

			if (f->srcline + f->nsrcline > s.nsrclines)
				abort(); /* the header's contract */
			hs_perf_script_srclines(f);
			hs_ps_parts_init(&it, f->sym);
			while (hs_ps_parts_next(&it, &part))
				;
		}
	}
	hs_perf_script_event(r);
	hs_perf_script_stats(r);
	hs_perf_script_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_perf_script_opts small = {
		.srcline = true, .max_line = 200, .max_frames = 16, .max_sample = 1024, .max_known = 2048,
	};

	run(data, size, NULL, 0);
	run(data, size, &small, 61);
	return 0;
}
