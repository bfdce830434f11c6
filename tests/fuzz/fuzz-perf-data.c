/* libFuzzer target: the perf.data reader and loader on arbitrary bytes. Build with
 * `meson setup build-fuzz -Dfuzz=enabled` (clang); without libFuzzer the same function runs
 * over the stored corpus (tests/fuzz/corpus/perf-data/) as the fuzz-replay test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/perf-data.h"
#include "profile/perf-data-load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_perf_data d;
	struct hs_error err = {0};
	struct hs_perf_data_rec r;
	struct hs_profile *p = NULL;
	struct hs_perf_data_load_info info;
	struct hs_perf_data_load_opts o = {0};
	/* the reader may rely on 8-byte alignment of its buffer, as a mapped file has */
	uint8_t *copy = malloc(size ? size : 1);

	memcpy(copy, data, size);
	if (hs_perf_data_open(&d, copy, size, &err) == 0)
		while (hs_perf_data_next(&d, &r, &err) == 1)
			;
	hs_perf_data_close(&d);
	/* and the whole path to a profile, without touching the files the input names */
	o.no_kernel = true;
	o.no_inline = true; /* no DWARF: opening a library's debug information takes 0.1 s */
	memset(&err, 0, sizeof(err));
	if (hs_perf_data_load(copy, size, &o, &p, &info, &err) == 0) {
		hs_perf_data_load_info_release(&info);
		hs_profile_free(p);
	}
	free(copy);
	return 0;
}
