/* What every runtime's records share: their length, checked (runtime.h). */
#include "runtime/runtime.h"

size_t hs_rt_record_size(const void *rec, size_t size, size_t head, size_t frame, unsigned max)
{
	const struct hs_rt_head *h = rec;
	size_t want;

	if (size < head || size < sizeof(*h) || h->nframes > max)
		return 0;
	want = head + (size_t)h->nframes * frame;
	return size < want ? 0 : want;
}
