/* The Perl script's name tidying for hotstack collapse (tidy.h). */
#include <stdbool.h>
#include <string.h>

#include "collapse/tidy.h"

void hs_collapse_srcline(struct hs_strbuf *sb, struct hs_ps_str s)
{
	struct hs_strbuf *t = sb;
	size_t start = t->len, i = 0, b, e;

	hs_strbuf_addc(t, ':');
	while (i < s.n) {
		const char *lb = memchr(s.p + i, '[', s.n - i), *rb;
		if (!lb) {
			hs_strbuf_add(t, s.p + i, s.n - i);
			break;
		}
		rb = memchr(lb + 1, ']', (size_t)(s.p + s.n - lb - 1));
		if (!rb) {
			hs_strbuf_add(t, s.p + i, s.n - i);
			break;
		}
		hs_strbuf_add(t, s.p + i, (size_t)(lb - (s.p + i)));
		i = (size_t)(rb + 1 - s.p);
	}
	for (b = start + 1; b < t->len && (t->buf[b] == ' ' || (t->buf[b] >= '\t' && t->buf[b] <= '\r')); b++)
		;
	for (e = t->len; e > b && (t->buf[e - 1] == ' ' || (t->buf[e - 1] >= '\t' && t->buf[e - 1] <= '\r')); e--)
		;
	if (e == b) {
		t->len = start;
	} else {
		memmove(t->buf + start + 1, t->buf + b, e - b);
		t->len = start + 1 + (e - b);
	}
	t->buf[t->len] = '\0';
}

/* Whether the name looks like a Go method, "pkg.(*T).M": m/\.\(.*\)\./ */
static bool go_like(const char *p, size_t n)
{
	const char *a = NULL;

	for (size_t i = 0; i + 1 < n; i++)
		if (p[i] == '.' && p[i + 1] == '(') {
			a = p + i;
			break;
		}
	if (!a)
		return false;
	for (size_t i = n - 1; i >= 1 && p + i - 1 >= a + 2; i--)
		if (p[i] == '.' && p[i - 1] == ')')
			return true;
	return false;
}

void hs_collapse_tidy(struct hs_strbuf *sb, const char *p, size_t n)
{
	static const char anon[] = "anonymous namespace)";
	const char *lp = memchr(p, '(', n);
	size_t cut = n, i, run;

	if (lp && !go_like(p, n)) {
		for (; lp; lp = memchr(lp + 1, '(', (size_t)(p + n - lp - 1))) {
			size_t left = (size_t)(p + n - lp - 1);
			if (left < sizeof(anon) - 1 || memcmp(lp + 1, anon, sizeof(anon) - 1)) {
				cut = (size_t)(lp - p);
				break;
			}
		}
	}
	hs_strbuf_add(sb, p, cut); /* then fixed up in place */
	for (i = sb->len - cut, run = i; i < sb->len; i++) {
		char ch = sb->buf[i];
		if (ch == '"' || ch == '\'')
			continue;
		sb->buf[run++] = ch == ';' ? ':' : ch;
	}
	hs_strbuf_setlen(sb, run);
}
