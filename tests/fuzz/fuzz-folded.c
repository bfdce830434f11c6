/* libFuzzer target: the folded-stacks reader (hs_folded_sniff, hs_folded_read) on arbitrary
 * text. Without libFuzzer the same function runs over tests/fuzz/corpus/folded/ (replay.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/folded-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_error err = {0};
	struct hs_profile *p = NULL;
	const char *text = (const char *)data;

	hs_folded_sniff(text, size);
	hs_folded_sniff_prefix(text, size, true);
	if (hs_folded_read(text, size, &p, &err) == 0)
		hs_profile_free(p);
	return 0;
}
