/* A growable, always NUL-terminated byte string (git's strbuf, reduced). */
#ifndef HS_STRBUF_H
#define HS_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "util.h"

struct hs_strbuf {
	char *buf; /* NULL until something is added; use hs_strbuf_str() to read */
	size_t len, cap;
};

void hs_strbuf_release(struct hs_strbuf *sb);
void hs_strbuf_reset(struct hs_strbuf *sb);
/* Cuts sb back to its first len (at most sb->len) bytes. */
void hs_strbuf_setlen(struct hs_strbuf *sb, size_t len);
void hs_strbuf_add(struct hs_strbuf *sb, const void *p, size_t n);
void hs_strbuf_adds(struct hs_strbuf *sb, const char *s);
void hs_strbuf_addc(struct hs_strbuf *sb, char c);
void hs_strbuf_addf(struct hs_strbuf *sb, const char *fmt, ...) HS_PRINTF(2, 3);
/* Each of the n strings of v, each after sep: a command line from its argv. */
void hs_strbuf_add_each(struct hs_strbuf *sb, const char *sep, char *const *v, size_t n);
void hs_strbuf_vaddf(struct hs_strbuf *sb, const char *fmt, va_list ap);
/* w as one word of a shell command line: as it is where it holds nothing the shell reads,
 * else in single quotes. */
void hs_strbuf_add_shell_word(struct hs_strbuf *sb, const char *w);
/* Takes ownership of the buffer away from sb; never NULL. */
char *hs_strbuf_detach(struct hs_strbuf *sb);
static inline const char *hs_strbuf_str(const struct hs_strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

#endif
