/* libFuzzer target: /proc/PID/maps text into the model (hs_model_add_proc_maps), then lookups
 * of the addresses it mapped. Corpus: tests/fuzz/corpus/proc-maps/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/model.h"
#include "model/proc-maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void capture(void *ctx, int32_t pid, struct hs_map *map)
{
	size_t *n = ctx;

	if (map->end <= map->start || map->dso->kind == HS_DSO_ANON)
		abort();
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_model m;
	struct hs_process *p;
	size_t captured = 0;

	hs_model_init(&m);
	hs_model_add_proc_maps(&m, 42, (const char *)data, size, capture, &captured);
	p = hs_model_process(&m, 42);
	for (size_t i = 0; i < p->maps.n; i++) {
		const struct hs_map *mp = &p->maps.v[i];
		/* sorted, non-overlapping, and each found at both of its ends */
		if (mp->end <= mp->start || (i && p->maps.v[i - 1].end > mp->start))
			abort();
		if (hs_model_find_map(&m, 42, mp->start) != mp || hs_model_find_map(&m, 42, mp->end - 1) != mp)
			abort();
		hs_model_find_map(&m, 42, mp->end);
	}
	hs_model_release(&m);
	return 0;
}
