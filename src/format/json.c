/* The bounded JSON pull reader (json.h). Nothing recurses: nesting is a counter checked against
 * its cap, so hostile nesting costs neither stack nor memory. */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(struct hs_json *j, int code, const char *fmt, ...) HS_PRINTF(3, 4);

static bool fail(struct hs_json *j, int code, const char *fmt, ...)
{
	va_list ap;

	if (j->err)
		return false;
	j->err = code;
	j->err_off = (size_t)(j->p - j->start);
	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
	return false;
}

static bool cut(struct hs_json *j)
{
	return fail(j, -ENODATA, "JSON text ends early");
}

void hs_json_init(struct hs_json *j, const void *buf, size_t len)
{
	memset(j, 0, sizeof(*j));
	j->start = j->p = buf;
	j->end = j->start + len;
	/* a UTF-8 byte order mark, as some editors write */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		j->p += 3;
}

static void ws(struct hs_json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

char hs_json_peek(struct hs_json *j)
{
	char c;

	if (j->err)
		return 0;
	ws(j);
	if (j->p == j->end)
		return cut(j), 0;
	c = *j->p;
	if (c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n')
		return c;
	if (c == '-' || (c >= '0' && c <= '9'))
		return '0';
	fail(j, -EBADMSG, "JSON: unexpected '%c'", c >= 0x20 && c < 0x7f ? c : '?');
	return 0;
}

bool hs_json_enter(struct hs_json *j, char open)
{
	if (hs_json_peek(j) != open)
		return j->err ? false : fail(j, -EBADMSG, "JSON: %s expected", open == '{' ? "an object" : "an array");
	if (j->depth >= HS_JSON_MAX_DEPTH)
		return fail(j, -EOVERFLOW, "JSON nested deeper than %u", HS_JSON_MAX_DEPTH);
	j->depth++;
	j->p++;
	return true;
}

bool hs_json_more(struct hs_json *j, char close, size_t *count)
{
	if (j->err)
		return false;
	ws(j);
	if (j->p == j->end)
		return cut(j);
	if (*j->p == close) {
		j->p++;
		j->depth--;
		return false;
	}
	if (*count) {
		if (*j->p != ',')
			return fail(j, -EBADMSG, "JSON: ',' or '%c' expected", close);
		j->p++;
	}
	ws(j);
	if (j->p < j->end && *j->p == close)
		return fail(j, -EBADMSG, "JSON: a value expected after ','");
	(*count)++;
	return true;
}

static int hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static void add_utf8(struct hs_strbuf *sb, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		hs_strbuf_addc(sb, (char)cp);
		return;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		hs_strbuf_add(sb, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		hs_strbuf_add(sb, b, 3);
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		hs_strbuf_add(sb, b, 4);
	}
}

bool hs_json_string(struct hs_json *j, struct hs_strbuf *sb)
{
	hs_strbuf_reset(sb);
	if (hs_json_peek(j) != '"')
		return j->err ? false : fail(j, -EBADMSG, "JSON: a string expected");
	j->p++;
	for (;;) {
		const char *run = j->p;

		while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20)
			j->p++;
		hs_strbuf_add(sb, run, (size_t)(j->p - run));
		if (sb->len > HS_JSON_MAX_STRING)
			return fail(j, -EOVERFLOW, "JSON string longer than %zu bytes", HS_JSON_MAX_STRING);
		if (j->p == j->end)
			return cut(j);
		if (*j->p == '"') {
			j->p++;
			hs_strbuf_str(sb);
			return true;
		}
		if (*j->p != '\\')
			return fail(j, -EBADMSG, "JSON: a control character in a string");
		if (j->end - j->p < 2)
			return cut(j);
		switch (j->p[1]) {
		case '"':
			hs_strbuf_addc(sb, '"');
			break;
		case '\\':
			hs_strbuf_addc(sb, '\\');
			break;
		case '/':
			hs_strbuf_addc(sb, '/');
			break;
		case 'b':
			hs_strbuf_addc(sb, '\b');
			break;
		case 'f':
			hs_strbuf_addc(sb, '\f');
			break;
		case 'n':
			hs_strbuf_addc(sb, '\n');
			break;
		case 'r':
			hs_strbuf_addc(sb, '\r');
			break;
		case 't':
			hs_strbuf_addc(sb, '\t');
			break;
		case 'u': {
			int hi, lo;
			uint32_t cp;

			if (j->end - j->p < 6)
				return cut(j);
			if ((hi = hex4(j->p + 2)) < 0)
				return fail(j, -EBADMSG, "JSON: a bad \\u escape");
			cp = (uint32_t)hi;
			if (hi >= 0xd800 && hi < 0xdc00 && j->end - j->p >= 12 && j->p[6] == '\\' && j->p[7] == 'u' &&
			    (lo = hex4(j->p + 8)) >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((uint32_t)(hi - 0xd800) << 10) + (uint32_t)(lo - 0xdc00);
				j->p += 6;
			} else if (hi >= 0xd800 && hi < 0xe000) {
				cp = 0xfffd; /* a lone surrogate: no character of its own */
			}
			add_utf8(sb, cp);
			j->p += 4;
			break;
		}
		default:
			return fail(j, -EBADMSG, "JSON: a bad escape in a string");
		}
		j->p += 2;
	}
}

bool hs_json_number(struct hs_json *j, double *ret)
{
	const char *s;
	char buf[64], *e;
	double v;

	if (hs_json_peek(j) != '0')
		return j->err ? false : fail(j, -EBADMSG, "JSON: a number expected");
	s = j->p;
	while (j->p < j->end && (strchr("0123456789+-.eE", *j->p)))
		j->p++;
	if ((size_t)(j->p - s) >= sizeof(buf))
		return fail(j, -EOVERFLOW, "JSON: a number of more than %zu characters", sizeof(buf) - 1);
	memcpy(buf, s, (size_t)(j->p - s));
	buf[j->p - s] = '\0';
	v = strtod(buf, &e);
	if (*e || e == buf)
		return fail(j, -EBADMSG, "JSON: a bad number '%.20s'", buf);
	*ret = v;
	return true;
}

static bool literal(struct hs_json *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n)
		return cut(j);
	if (memcmp(j->p, word, n))
		return fail(j, -EBADMSG, "JSON: unexpected '%c'", *j->p);
	j->p += n;
	return true;
}

bool hs_json_skip(struct hs_json *j)
{
	uint64_t objs = 0; /* bit k: the container k levels into the skipped value is an object */
	uint32_t lvl = 0;
	struct hs_strbuf sb = {0};
	bool value = true; /* a value comes next (else: what follows one) */

	while (!j->err) {
		if (value) {
			char c = hs_json_peek(j);
			double d;

			if (c == '{' || c == '[') {
				if (!hs_json_enter(j, c))
					break;
				objs = (objs & ~((uint64_t)1 << lvl)) | (uint64_t)(c == '{') << lvl;
				lvl++;
				ws(j);
				if (j->p < j->end && *j->p == (c == '{' ? '}' : ']')) {
					j->p++;
					j->depth--;
					lvl--;
					value = false;
				} else if (c == '{') {
					hs_json_key(j, &sb);
				}
				continue;
			}
			if (c == '"')
				hs_json_string(j, &sb);
			else if (c == '0')
				hs_json_number(j, &d);
			else if (c)
				literal(j, c == 't' ? "true" : c == 'f' ? "false" : "null");
			value = false;
			continue;
		}
		if (!lvl)
			break;
		ws(j);
		if (j->p == j->end) {
			cut(j);
			break;
		}
		bool obj = objs >> (lvl - 1) & 1;
		if (*j->p == (obj ? '}' : ']')) {
			j->p++;
			j->depth--;
			lvl--;
			continue;
		}
		if (*j->p != ',') {
			fail(j, -EBADMSG, "JSON: ',' or '%c' expected", obj ? '}' : ']');
			break;
		}
		j->p++;
		if (obj)
			hs_json_key(j, &sb);
		value = true;
	}
	hs_strbuf_release(&sb);
	return !j->err;
}

bool hs_json_end(struct hs_json *j)
{
	if (j->err)
		return false;
	ws(j);
	if (j->p != j->end)
		return fail(j, -EBADMSG, "JSON: text after the end of the document");
	return true;
}

bool hs_json_key(struct hs_json *j, struct hs_strbuf *sb)
{
	if (!hs_json_string(j, sb))
		return false;
	ws(j);
	if (j->p == j->end)
		return cut(j);
	if (*j->p != ':')
		return fail(j, -EBADMSG, "JSON: ':' expected after a key");
	j->p++;
	return true;
}
