/* Reading folded stacks ("root;caller;...;leaf count") back into a profile. */
#ifndef HS_FOLDED_READ_H
#define HS_FOLDED_READ_H

#include <stddef.h>

#include "format/format.h"
#include "profile/profile.h"

/* Parses buf (len bytes) as folded text. The root frame becomes the samples' command name;
 * "_[k]", "_[j]" and "_[i]" suffixes set kernel, JIT and inlined frames. Returns 0, or
 * -EBADMSG (a line without a count; err says where). *ret is set only on success. */
int hs_folded_read(const char *buf, size_t len, struct hs_profile **ret, struct hs_parse_error *err);
/* Whether buf looks like folded text (its first non-empty lines end in a count). */
int hs_folded_sniff(const char *buf, size_t len);

#endif
