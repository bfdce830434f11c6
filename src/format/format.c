/* Shared parse-error bookkeeping. */
#include "format.h"

#include <stdarg.h>
#include <stdio.h>

void hs_parse_error_set(struct hs_parse_error *e, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!e || e->msg[0])
		return;
	e->offset = offset;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}
