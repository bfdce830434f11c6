#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static void set(struct hs_error *e, int code, uint64_t offset, const char *fmt, va_list ap)
{
	e->code = code;
	e->offset = offset;
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
}

int hs_error_set(struct hs_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e || e->detail[0])
		return code;
	va_start(ap, fmt);
	set(e, code, e->offset, fmt, ap);
	va_end(ap);
	return code;
}

void hs_error_at(struct hs_error *e, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!e || e->detail[0])
		return;
	va_start(ap, fmt);
	set(e, -EBADMSG, offset, fmt, ap);
	va_end(ap);
}
