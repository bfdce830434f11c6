/* What every bounded reader in format/ shares: its errors are a struct hs_error (util/error.h)
 * with the byte offset at which the fault was found, for the CLI to print as
 * "FILE: offset 0x1a30: MESSAGE"; and the bound on what compressed input may expand to. The
 * readers' codes mean the same everywhere: -EBADMSG malformed, -ENODATA cut short, -EOVERFLOW
 * over a cap, -EOPNOTSUPP a version (or variant, such as the other byte order) that the reader
 * does not read. */
#ifndef HS_FORMAT_H
#define HS_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "util/util.h"


/* Compressed input (gzip, the zstd of perf.data) may decompress to HS_DECOMPRESS_MIN bytes, and
 * to HS_DECOMPRESS_RATIO times the compressed bytes read beyond that; more is refused as a
 * decompression bomb. Real files expand far less: pprof 3 to 10 times, perf.data (perf record
 * -z) 3 to 10, folded and perf script text up to about 80, which the minimum covers for inputs
 * up to a megabyte. */
#ifndef HS_FUZZING_BUILD
#define HS_DECOMPRESS_MIN ((uint64_t)64 << 20)
#else
/* a fuzzer's bombs reach the bound in a millisecond, not in 64 MiB of work per input */
#define HS_DECOMPRESS_MIN ((uint64_t)1 << 20)
#endif
#define HS_DECOMPRESS_RATIO 64u

/* Whether out bytes decompressed from in compressed ones are past the bound above. */
static inline bool hs_decompress_over(uint64_t out, uint64_t in)
{
	return out > HS_DECOMPRESS_MIN && (out - HS_DECOMPRESS_MIN) / HS_DECOMPRESS_RATIO > in;
}


#endif
