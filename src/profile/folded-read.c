/* Folded stacks reader: the FlameGraph text format back into the profile IR, a line at a time
 * from a stream. */
#include "folded-read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define READ_CHUNK ((size_t)64 << 10)

enum count_kind { COUNT_OK, COUNT_NONE, COUNT_NEGATIVE, COUNT_FRACTION, COUNT_TOO_LARGE };

/* The count that ends a line, after its last space: *frames_end is that space. A last word that
 * is no number at all means the line has no count; one that is a number, but not a sample count
 * (negative, fractional, past INT64_MAX), is named as such. */
static enum count_kind find_count(const char *line, size_t n, const char **frames_end, int64_t *ret)
{
	const char *end = line + n, *p = end, *q;
	bool neg = false, dot = false, digit = false;
	int64_t v = 0;

	while (p > line && p[-1] != ' ')
		p--;
	if (p == line || p == end)
		return COUNT_NONE;
	*frames_end = p - 1;
	q = p;
	if (*q == '-') {
		neg = true;
		q++;
	}
	for (; q < end; q++) {
		if (*q >= '0' && *q <= '9')
			digit = true;
		else if (*q == '.' && !dot)
			dot = true;
		else
			return COUNT_NONE;
	}
	if (!digit)
		return COUNT_NONE;
	if (neg)
		return COUNT_NEGATIVE;
	if (dot)
		return COUNT_FRACTION;
	for (q = p; q < end; q++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *q - '0', &v))
			return COUNT_TOO_LARGE;
	*ret = v;
	return COUNT_OK;
}

/* Control characters other than tab do not occur in folded text; they do in binary files. */
static bool text_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
			return false;
	return true;
}

bool hs_folded_sniff_prefix(const char *buf, size_t len, bool more)
{
	size_t off = 0;
	int seen = 0;

	while (off < len && seen < 5) {
		const char *line = buf + off, *nl = memchr(line, '\n', len - off), *fe;
		size_t n = nl ? (size_t)(nl - line) : len - off;
		int64_t v;

		off += n + 1;
		if (n && line[n - 1] == '\r')
			n--;
		if (!text_only(line, n))
			return false;
		if (!nl && more)
			return seen > 0 || n > 0; /* a line longer than what was read: its frames are text */
		if (!n || line[0] == '#')
			continue;
		if (find_count(line, n, &fe, &v) == COUNT_NONE)
			return false;
		seen++;
	}
	return seen > 0;
}

int hs_folded_sniff(const char *buf, size_t len)
{
	return hs_folded_sniff_prefix(buf, len, false);
}

/* Whether a frame's name (n bytes, its suffix off) is a Java method's as hotstack writes them,
 * "long Hot.fib(int)" (and a file and line after it): an interpreted or C1 frame is Java's then,
 * else JavaScript's, whose names have no parentheses. */
static bool java_method(const char *s, size_t n)
{
	const char *open = memchr(s, '(', n);

	return open && memchr(open, ')', n - (size_t)(open - s)) && memchr(s, ' ', (size_t)(open - s));
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
		case '0':
			*n -= 4;
			return java_method(*s, *n) ? HS_KIND_JAVA_INTERP : HS_KIND_JS_INTERP;
		case '1':
			*n -= 4;
			return java_method(*s, *n) ? HS_KIND_JAVA_C1 : HS_KIND_JS_BASELINE;
		case 'b':
			*n -= 4;
			return HS_KIND_JS_BUILTIN;
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

struct folded {
	struct hs_profile *p;
	struct hs_folded_stats stats;
	HS_VEC(uint32_t) locs;
	/* the location under construction: its lines outermost first, as the text has them
	 * (reversed when it is closed: the IR wants the innermost first) */
	HS_VEC(struct hs_line) lines;
	uint8_t kind;
};

static void close_location(struct folded *f)
{
	struct hs_line *v = f->lines.v;
	size_t n = f->lines.n;

	if (!n)
		return;
	for (size_t i = 0; i < n / 2; i++) {
		struct hs_line t = v[i];
		v[i] = v[n - 1 - i];
		v[n - 1 - i] = t;
	}
	hs_vec_push(&f->locs, hs_profile_location(f->p, 0, 0, f->kind, v, (uint32_t)n));
	f->lines.n = 0;
}

static int take_line(struct folded *f, const char *line, size_t n, uint64_t off, struct hs_error *err)
{
	const char *fe = NULL, *s, *e;
	uint32_t comm = 0, frames = 0;
	int64_t v = 0;

	f->stats.lines++;
	if (n && line[n - 1] == '\r')
		n--;
	if (!n || line[0] == '#')
		return 0;
	switch (find_count(line, n, &fe, &v)) {
	case COUNT_OK:
		break;
	case COUNT_NONE:
		hs_error_at(err, off, "line %llu: no sample count at the end", (unsigned long long)f->stats.lines);
		return -EBADMSG;
	case COUNT_NEGATIVE:
	case COUNT_FRACTION:
		hs_error_at(err, off + (uint64_t)(fe + 1 - line), "line %llu: count '%.*s' is not a whole number of samples",
				   (unsigned long long)f->stats.lines, (int)HS_MIN(line + n - fe - 1, 40), fe + 1);
		return -EBADMSG;
	case COUNT_TOO_LARGE:
		hs_error_at(err, off + (uint64_t)(fe + 1 - line), "line %llu: count %.*s is too large (more than %lld)",
				   (unsigned long long)f->stats.lines, (int)HS_MIN(line + n - fe - 1, 40), fe + 1,
				   (long long)INT64_MAX);
		return -EBADMSG;
	}
	f->locs.n = f->lines.n = 0;
	for (s = line; s <= fe; s = e + 1) {
		const char *name = s;
		size_t k;
		int inlined;
		uint8_t kind;
		uint32_t nm;
		struct hs_line ln = {0, 0};

		e = memchr(s, ';', (size_t)(fe - s));
		if (!e)
			e = fe;
		k = (size_t)(e - s);
		if (s == line) {
			comm = hs_profile_intern(f->p, name, k);
			continue;
		}
		if (frames++ == HS_FOLDED_MAX_FRAMES) {
			f->stats.lines_cut++;
			break;
		}
		kind = strip_annotation(&name, &k, &inlined);
		/* an inlined frame joins the location before it as its new innermost line */
		if (!inlined)
			close_location(f);
		if (!f->lines.n)
			f->kind = kind;
		nm = hs_profile_intern(f->p, name, k);
		ln.function = hs_profile_function(f->p, nm, nm, 0, 0);
		hs_vec_push(&f->lines, ln);
	}
	close_location(f);
	/* root first in the text; leaf first in the IR */
	for (size_t i = 0; i < f->locs.n / 2; i++) {
		uint32_t t = f->locs.v[i];
		f->locs.v[i] = f->locs.v[f->locs.n - 1 - i];
		f->locs.v[f->locs.n - 1 - i] = t;
	}
	hs_profile_add_sample(f->p, hs_profile_stack(f->p, f->locs.v, (uint32_t)f->locs.n), comm, -1, -1, 0, &v);
	return 0;
}

int hs_folded_read_stream(hs_folded_read_fn read, void *ctx, struct hs_profile **ret, struct hs_folded_stats *stats,
			  struct hs_error *err)
{
	struct folded f = {0};
	HS_VEC(char) buf = {0};
	size_t start = 0, scan = 0;
	uint64_t base = 0; /* input offset of buf.v[0] */
	bool eof = false;
	int rc = 0;

	f.p = hs_profile_new();
	hs_profile_add_type(f.p, "samples", "count");
	f.p->period_type = f.p->types.v[0];
	f.p->period = 1;
	while (!rc) {
		char *nl = scan < buf.n ? memchr(buf.v + scan, '\n', buf.n - scan) : NULL;
		ssize_t r;

		if (nl || (eof && start < buf.n)) {
			size_t end = nl ? (size_t)(nl - buf.v) : buf.n;
			rc = take_line(&f, buf.v + start, end - start, base + start, err);
			start = scan = nl ? end + 1 : buf.n;
			continue;
		}
		if (eof)
			break;
		scan = buf.n;
		if (buf.n - start > HS_FOLDED_MAX_LINE) {
			hs_error_at(err, base + start, "line %llu: longer than %zu bytes",
					   (unsigned long long)f.stats.lines + 1, HS_FOLDED_MAX_LINE);
			rc = -EOVERFLOW;
			break;
		}
		/* what was taken goes; the line begun stays */
		if (start) {
			memmove(buf.v, buf.v + start, buf.n - start);
			buf.n -= start;
			scan -= start;
			base += start;
			start = 0;
		}
		hs_vec_reserve(&buf, buf.n + READ_CHUNK);
		r = read(ctx, buf.v + buf.n, READ_CHUNK);
		if (r < 0)
			rc = (int)r;
		else if (r == 0)
			eof = true;
		else
			buf.n += (size_t)r;
	}
	hs_vec_free(&buf);
	hs_vec_free(&f.locs);
	hs_vec_free(&f.lines);
	if (stats)
		*stats = f.stats;
	if (rc) {
		hs_profile_free(f.p);
		return rc;
	}
	*ret = f.p;
	return 0;
}

struct mem_src {
	const char *buf;
	size_t len, pos;
};

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
	struct mem_src *m = ctx;

	n = HS_MIN(n, m->len - m->pos);
	if (n)
		memcpy(buf, m->buf + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

int hs_folded_read(const char *buf, size_t len, struct hs_profile **ret, struct hs_error *err)
{
	struct mem_src m = {buf, len, 0};

	return hs_folded_read_stream(mem_read, &m, ret, NULL, err);
}
