/* libFuzzer target: the pprof reader (gzip, then profile.proto through the protobuf decoder)
 * and its content probe on arbitrary bytes. Corpus: tests/fuzz/corpus/pprof/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/pprof-read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_error err = {0};
	struct hs_profile *p = NULL;

	hs_pprof_probe(data, size);
	if (hs_pprof_read(data, size, &p, &err) == 0)
		hs_profile_free(p);
	return 0;
}
