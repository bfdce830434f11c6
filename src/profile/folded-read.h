/* Reading folded stacks ("root;caller;...;leaf count") back into a profile, streamed: memory
 * grows with the distinct stacks, not with the input. */
#ifndef HS_FOLDED_READ_H
#define HS_FOLDED_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/format.h"
#include "profile/profile.h"

/* Caps: a longer line is an error (its count comes last: it cannot be cut); the frames of a
 * line past FOLDED_MAX_FRAMES (inlined ones included) are cut, and counted. */
#define HS_FOLDED_MAX_LINE ((size_t)64 << 20)
#define HS_FOLDED_MAX_FRAMES 65536u

/* Reads up to n bytes into buf; returns the count, 0 at the end, or a negative errno (the
 * reader returns it; the source may have recorded a message in err first). */
typedef ssize_t (*hs_folded_read_fn)(void *ctx, void *buf, size_t n);

struct hs_folded_stats {
	uint64_t lines;       /* lines read */
	uint64_t lines_cut;   /* lines whose frames past HS_FOLDED_MAX_FRAMES were cut */
};

/* Parses folded text pulled from read(ctx, ...). The root frame becomes the samples' command
 * name; "_[k]", "_[j]" and "_[i]" suffixes set kernel, JIT and inlined frames; lines starting
 * with '#' are comments. Returns 0, -EBADMSG (a line without a count, or with a count that is
 * negative, not a whole number or past INT64_MAX; err says which line and why), -EOVERFLOW (a
 * line over HS_FOLDED_MAX_LINE), or read()'s error. *ret is set only on success; stats (may be
 * NULL) says what was cut. */
int hs_folded_read_stream(hs_folded_read_fn read, void *ctx, struct hs_profile **ret, struct hs_folded_stats *stats,
			  struct hs_error *err);
/* The same over buf (len bytes). */
int hs_folded_read(const char *buf, size_t len, struct hs_profile **ret, struct hs_error *err);

/* Whether buf, the first len bytes of an input, looks like folded text: its first non-empty,
 * non-comment lines (up to 5) end in a count — or in a negative or oversized number, which the
 * reader then names as such — and hold no control characters. With more (more input follows
 * buf), an unterminated last line is judged on its frames alone. */
bool hs_folded_sniff_prefix(const char *buf, size_t len, bool more);
/* hs_folded_sniff_prefix() of a whole input. */
int hs_folded_sniff(const char *buf, size_t len);

#endif
