/* Folded stacks reader: the FlameGraph text format back into the profile IR. */
#include "folded-read.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FOLDED_MAX_DEPTH 65536

static const char *find_count(const char *line, size_t n, long long *ret)
{
	const char *end = line + n, *p = end;
	long long v = 0;

	while (p > line && isdigit((unsigned char)p[-1]))
		p--;
	if (p == end || p == line || p[-1] != ' ' || end - p > 18)
		return NULL;
	for (const char *q = p; q < end; q++)
		v = v * 10 + (*q - '0');
	*ret = v;
	return p - 1;
}

int hs_folded_sniff(const char *buf, size_t len)
{
	size_t off = 0;
	int seen = 0;

	while (off < len && seen < 5) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
		long long v;

		if (n && buf[off + n - 1] == '\r')
			n--;
		if (n) {
			if (!find_count(buf + off, n, &v) || memchr(buf + off, '\0', n))
				return 0;
			seen++;
		}
		off += n + 1;
		if (nl)
			off = (size_t)(nl - buf) + 1;
	}
	return seen > 0;
}

static uint8_t strip_annotation(const char **s, size_t *n, int *inlined)
{
	*inlined = 0;
	if (*n > 4 && (*s)[*n - 4] == '_' && (*s)[*n - 3] == '[' && (*s)[*n - 1] == ']') {
		switch ((*s)[*n - 2]) {
		case 'k':
			*n -= 4;
			return HS_KIND_KERNEL;
		case 'j':
			*n -= 4;
			return HS_KIND_JIT;
		case 'i':
			*n -= 4;
			*inlined = 1;
			return HS_KIND_USER;
		case 'w': /* waker stacks in FlameGraph's off-CPU tools */
			*n -= 4;
			return HS_KIND_USER;
		}
	}
	if (*n && (*s)[0] == '[' && (*s)[*n - 1] == ']')
		return HS_KIND_PSEUDO;
	return HS_KIND_USER;
}

/* A location under construction: its lines innermost first, as the IR wants them. */
struct pending {
	HS_VEC(struct hs_line) lines;
	uint8_t kind;
};

int hs_folded_read(const char *buf, size_t len, struct hs_profile **ret, struct hs_parse_error *err)
{
	struct hs_profile *p = hs_profile_new();
	HS_VEC(uint32_t) locs = {0};
	struct pending cur = {{0}, 0};
	size_t off = 0, lineno = 0;
	int rc = 0;

	hs_profile_add_type(p, "samples", "count");
	p->period_type = p->types.v[0];
	p->period = 1;
	while (off < len) {
		const char *line = buf + off, *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		const char *cnt, *s, *e;
		long long v;
		uint32_t comm = 0;
		int first = 1, have = 0;

		lineno++;
		off += n + (nl ? 1 : 0);
		if (n && line[n - 1] == '\r')
			n--;
		if (!n || line[0] == '#')
			continue;
		cnt = find_count(line, n, &v);
		if (!cnt) {
			hs_parse_error_set(err, (uint64_t)(line - buf), "line %zu: no sample count at the end", lineno);
			rc = -EBADMSG;
			break;
		}
		locs.n = 0;
		for (s = line; s <= cnt; s = e + 1) {
			const char *name;
			size_t k;
			int inlined;
			uint8_t kind;

			e = memchr(s, ';', (size_t)(cnt - s));
			if (!e)
				e = cnt;
			name = s;
			k = (size_t)(e - s);
			if (first) {
				comm = hs_profile_intern(p, name, k);
				first = 0;
				if (e == cnt)
					break;
				continue;
			}
			kind = strip_annotation(&name, &k, &inlined);
			if (!inlined && have) {
				/* close the previous location: stack_locs want leaf first, we go root first */
				uint32_t l = hs_profile_location(p, 0, 0, cur.kind, cur.lines.v, (uint32_t)cur.lines.n);
				hs_vec_push(&locs, l);
				cur.lines.n = 0;
				have = 0;
			}
			{
				uint32_t nm = hs_profile_intern(p, name, k);
				struct hs_line ln = {hs_profile_function(p, nm, nm, 0, 0), 0};
				/* an inlined frame is the new innermost line of the current location */
				hs_vec_push(&cur.lines, ln);
				if (cur.lines.n > 1)
					memmove(cur.lines.v + 1, cur.lines.v, (cur.lines.n - 1) * sizeof(*cur.lines.v));
				cur.lines.v[0] = ln;
				if (!have)
					cur.kind = kind;
				have = 1;
			}
			if (locs.n > FOLDED_MAX_DEPTH)
				break;
			if (e == cnt)
				break;
		}
		if (have) {
			uint32_t l = hs_profile_location(p, 0, 0, cur.kind, cur.lines.v, (uint32_t)cur.lines.n);
			hs_vec_push(&locs, l);
			cur.lines.n = 0;
		}
		for (size_t i = 0; i < locs.n / 2; i++) {
			uint32_t t = locs.v[i];
			locs.v[i] = locs.v[locs.n - 1 - i];
			locs.v[locs.n - 1 - i] = t;
		}
		{
			int64_t val = v;
			uint32_t st = hs_profile_stack(p, locs.v, (uint32_t)locs.n);
			hs_profile_add_sample(p, st, comm, -1, -1, 0, &val);
		}
	}
	hs_vec_free(&locs);
	hs_vec_free(&cur.lines);
	if (rc) {
		hs_profile_free(p);
		return rc;
	}
	*ret = p;
	return 0;
}
