/* libFuzzer target: perf map text through the line parser (every entry's range and name inside
 * bounds), then into the model's JIT store as a runtime's map, with lookups at each entry's start
 * and end: the last line always owns its own start. Corpus: tests/fuzz/corpus/perf-map/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/perf-map.h"
#include "model/jit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct hs_jit j;
	struct hs_jit_opts o = {0};
	struct hs_perf_map_entry last = {0};
	uint64_t starts[256], start;
	size_t n = 0, line = 0;
	bool have_last = false;

	for (size_t i = 0; i <= size; i++) {
		struct hs_perf_map_entry e;
		if (i < size && text[i] != '\n')
			continue;
		if (hs_perf_map_parse_line(text + line, i - line, &e)) {
			if (!e.size || e.start + e.size < e.start || e.name < text + line || e.name + e.name_len > text + i ||
			    e.name_len > HS_PERF_MAP_MAX_NAME)
				abort();
			if (n < 256)
				starts[n++] = e.start;
			last = e;
			have_last = true;
		}
		line = i + 1;
	}
	hs_jit_init(&j, &o);
	if (hs_jit_perfmap_feed(&j, 7, text, size, true) != size)
		abort();
	for (size_t i = 0; i < n; i++) {
		hs_jit_perfmap_find(&j, 7, starts[i], &start);
		hs_jit_perfmap_find(&j, 7, starts[i] - 1, &start);
	}
	if (have_last && (!hs_jit_perfmap_find(&j, 7, last.start, &start) || start != last.start))
		abort();
	hs_jit_release(&j);
	return 0;
}
