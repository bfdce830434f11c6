/* Growable strings. */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs_strbuf_release(struct hs_strbuf *sb)
{
	if (!sb)
		return;
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void hs_strbuf_reset(struct hs_strbuf *sb)
{
	hs_strbuf_setlen(sb, 0);
}

void hs_strbuf_setlen(struct hs_strbuf *sb, size_t len)
{
	sb->len = len;
	if (sb->buf)
		sb->buf[len] = '\0';
}

static void strbuf_grow(struct hs_strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 < sb->len)
		hs_die_oom();
	hs_xgrow((void **)&sb->buf, &sb->cap, sb->len + extra + 1, 1);
}

void hs_strbuf_add(struct hs_strbuf *sb, const void *p, size_t n)
{
	strbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void hs_strbuf_adds(struct hs_strbuf *sb, const char *s)
{
	hs_strbuf_add(sb, s, strlen(s));
}

void hs_strbuf_add_each(struct hs_strbuf *sb, const char *sep, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		hs_strbuf_adds(sb, sep);
		hs_strbuf_adds(sb, v[i]);
	}
}

void hs_strbuf_addc(struct hs_strbuf *sb, char c)
{
	if (sb->len + 2 > sb->cap)
		strbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void hs_strbuf_vaddf(struct hs_strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->cap - sb->len) {
		strbuf_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void hs_strbuf_addf(struct hs_strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hs_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *hs_strbuf_detach(struct hs_strbuf *sb)
{
	char *r = sb->buf ? sb->buf : hs_xstrdup("");

	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return r;
}

void hs_strbuf_add_shell_word(struct hs_strbuf *sb, const char *w)
{
	bool plain = *w != 0;

	for (const char *c = w; *c && plain; c++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%^", *c) != NULL;
	if (plain) {
		hs_strbuf_adds(sb, w);
		return;
	}
	hs_strbuf_addc(sb, '\'');
	for (const char *c = w; *c; c++) {
		if (*c == '\'')
			hs_strbuf_adds(sb, "'\\''");
		else
			hs_strbuf_addc(sb, *c);
	}
	hs_strbuf_addc(sb, '\'');
}
