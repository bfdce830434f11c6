/* What every bounded reader in format/ shares: the first parse error, with the byte offset at
 * which it was found, for the CLI to print as "FILE: offset 0x1a30: MESSAGE". */
#ifndef HS_FORMAT_H
#define HS_FORMAT_H

#include <stdint.h>

#include "util/util.h"

struct hs_parse_error {
	uint64_t offset;
	uint64_t line; /* text formats: the line number (from 1) of the error; 0 otherwise */
	char msg[160]; /* empty when no error was recorded */
};

/* Records the error only if none was recorded before (the first error is the useful one). */
void hs_parse_error_set(struct hs_parse_error *e, uint64_t offset, const char *fmt, ...) HS_PRINTF(3, 4);

#endif
