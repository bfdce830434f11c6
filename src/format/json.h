/* A bounded pull reader of JSON text (RFC 8259): values are read in document order with no tree
 * built, nesting is capped, strings are decoded into a caller's buffer up to a cap, and the
 * first fault is kept with its byte offset. Not thread-safe; borrows the buffer it reads. */
#ifndef HS_FORMAT_JSON_H
#define HS_FORMAT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

#define HS_JSON_MAX_DEPTH 64u                /* nested objects and arrays */
#define HS_JSON_MAX_STRING ((size_t)1 << 20) /* bytes of one decoded string */

struct hs_json {
	const char *start, *p, *end;
	uint32_t depth;
	int err;        /* 0, or the first fault: -EBADMSG malformed, -ENODATA cut short,
	                   * -EOVERFLOW nesting, a string or a number over its cap */
	size_t err_off; /* byte offset of the first fault */
	char msg[96];   /* what the first fault was */
};

void hs_json_init(struct hs_json *j, const void *buf, size_t len);
/* The kind of the next value: '{', '[', '"', '0' (a number), 't', 'f', 'n' (null); 0 at a fault
 * or where no value starts (a fault is then recorded). */
char hs_json_peek(struct hs_json *j);
/* Enters the object or array that comes next (open '{' or '['): false at a fault. */
bool hs_json_enter(struct hs_json *j, char open);
/* Inside an entered object or array: true when another member follows (after its comma, once
 * *count > 0), false at its end (consumed) or at a fault; counts members in *count. */
bool hs_json_more(struct hs_json *j, char close, size_t *count);
/* An object's key and its ':' into sb (reset first): false at a fault. */
bool hs_json_key(struct hs_json *j, struct hs_strbuf *sb);
/* A string value into sb (reset first), escapes decoded to UTF-8: false at a fault. */
bool hs_json_string(struct hs_json *j, struct hs_strbuf *sb);
/* A number value: false at a fault. */
bool hs_json_number(struct hs_json *j, double *ret);
/* Skips one value of any kind, however nested (up to HS_JSON_MAX_DEPTH): false at a fault. */
bool hs_json_skip(struct hs_json *j);
/* After the top-level value: only white space may follow. */
bool hs_json_end(struct hs_json *j);

#endif
