/* The one way an error travels up from a stage to the CLI: a negative errno, where the code alone
 * does not say what failed the stage's cause for it, where in an input the fault was found, and
 * one line for a person. A stage says what went wrong, never what to do about it: advice, the
 * input's name in front and the exit status are the CLI's (docs/architecture.md). */
#ifndef HS_UTIL_ERROR_H
#define HS_UTIL_ERROR_H

#include <stdint.h>

#include "util/util.h"

struct hs_error {
	int code;         /* negative errno; 0 until an error is recorded */
	int cause;        /* the failing stage's own enum, where it has one (enum hs_record_failure,
	                   * enum hs_tracepoint_failure); 0 otherwise */
	uint64_t offset;  /* an input's byte offset where the fault was found */
	uint64_t line;    /* text inputs: the line (from 1) of the fault; 0 otherwise */
	char detail[512]; /* empty when no detail was recorded */
};

/* Records code and the detail, only if no detail was recorded before (the first error is the
 * useful one); e may be NULL. Returns code, so that `return hs_error_set(e, -EIO, ...)` reads. */
int hs_error_set(struct hs_error *e, int code, const char *fmt, ...) HS_PRINTF(3, 4);
/* The same for a fault in an input at a byte offset, code -EBADMSG. */
void hs_error_at(struct hs_error *e, uint64_t offset, const char *fmt, ...) HS_PRINTF(3, 4);

#endif
