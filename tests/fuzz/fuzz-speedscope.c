/* libFuzzer target: the speedscope reader (the bounded JSON reader under it) and its content
 * probe on arbitrary bytes. Corpus: tests/fuzz/corpus/speedscope/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/speedscope-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_error err = {0};
	struct hs_profile *p = NULL;

	hs_speedscope_sniff(data, size);
	if (hs_speedscope_read(data, size, size, &p, &err) == 0)
		hs_profile_free(p);
	return 0;
}
