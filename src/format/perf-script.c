/* perf script text, read line by line the way FlameGraph's stackcollapse-perf.pl reads it.
 * Its two line patterns are regular expressions with backtracking; the matchers below reach
 * the same splits without backtracking (the comments say why each shortcut is exact), and
 * the sample state machine keeps its rules: a sample ends only at a blank line, frames with
 * no accepted header before them are dropped, a header of another event is skipped without
 * ending the sample before it. Character classes are Perl's on bytes: \s is [ \t\n\v\f\r],
 * \w is [0-9A-Za-z_], \d is [0-9]. */
#include "perf-script.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

#define READ_CHUNK (1u << 20)

static inline bool is_ws(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_word(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
}

static inline int hex_val(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static uint64_t parse_dec(const char *s, size_t n, bool *overflow)
{
	uint64_t v = 0;

	*overflow = false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10) {
			*overflow = true;
			return UINT64_MAX;
		}
		v = v * 10 + d;
	}
	return v;
}

static int64_t parse_id(const char *s, size_t n)
{
	bool ovf;
	uint64_t v;

	if (!n)
		return -1;
	v = parse_dec(s, n, &ovf);
	return ovf || v > INT32_MAX ? -1 : (int64_t)v;
}

static struct hs_ps_str str(const char *line, size_t b, size_t e)
{
	return (struct hs_ps_str){line + b, e - b};
}

/* "SEC.FRAC" as nanoseconds, FRAC of 1 to 9 digits (perf prints 6, or 9 with --ns). */
static uint64_t parse_time(const char *s, size_t n)
{
	const char *dot = memchr(s, '.', n);
	size_t ni = dot ? (size_t)(dot - s) : n;
	uint64_t sec, frac = 0;
	size_t k;
	bool ovf;

	sec = parse_dec(s, ni, &ovf);
	if (ovf || sec > UINT64_MAX / 1000000000u)
		return 0;
	if (dot) {
		for (k = ni + 1; k < n && k < ni + 10; k++)
			frac = frac * 10 + (unsigned)(s[k] - '0');
		for (; k < ni + 10; k++)
			frac *= 10;
	}
	return sec * 1000000000u + frac;
}

/*
 * The header pattern is /^(\S.+?)\s+(\d+)\/{0,}(\d+){0,}\s+/: the command name is the shortest
 * prefix of at least two bytes, starting with a non-space, that is followed by blanks, a
 * number (or "number/number"), and another blank. Where a blank run is followed by such a
 * number, every position inside the run is too, so the shortest prefix ends where the run
 * starts (or at 2, inside a run that starts at 1): trying each run once is enough. Within a
 * run's number the greedy split is the only one that can match, since whatever a shorter
 * digit run leaves is a digit or a '/', never the blank the pattern needs next.
 *
 * The event pattern is /:\s*(\d+)*\s+(\S+):\s*$/: the line (trailing blanks aside) ends in
 * ':', the name is the whole non-blank token before that colon, and what lies between the
 * previous ':' and the token must be blanks, optional digits (the period), blanks.
 */
bool hs_perf_script_parse_header(const char *s, size_t n, struct hs_ps_sample *ret)
{
	size_t e = 2, j = 0, k = 0, k2 = 0, k3 = 0, i, t;
	bool found = false;

	if (n < 2 || is_ws((unsigned char)s[0]))
		return false;
	while (e < n) {
		if (!is_ws((unsigned char)s[e])) {
			e++;
			continue;
		}
		for (j = e; j < n && is_ws((unsigned char)s[j]); j++)
			;
		for (k = j; k < n && is_digit((unsigned char)s[k]); k++)
			;
		if (k > j) {
			for (k2 = k; k2 < n && s[k2] == '/'; k2++)
				;
			for (k3 = k2; k3 < n && is_digit((unsigned char)s[k3]); k3++)
				;
			if (k3 < n && is_ws((unsigned char)s[k3])) {
				found = true;
				break;
			}
		}
		e = j;
	}
	if (!found)
		return false;

	memset(ret, 0, sizeof(*ret));
	ret->comm = str(s, 0, e);
	if (k3 > k2) {
		ret->pid_text = str(s, j, k);
		ret->tid_text = str(s, k2, k3);
	} else {
		ret->pid_text = str(s, j, j);
		ret->tid_text = str(s, j, k);
	}
	ret->pid = parse_id(ret->pid_text.p, ret->pid_text.n);
	ret->tid = parse_id(ret->tid_text.p, ret->tid_text.n);
	ret->cpu = -1;

	/* Not part of the Perl patterns, for other readers: "[CPU]" and "SEC.FRAC:" after the ids. */
	for (i = k3; i < n && is_ws((unsigned char)s[i]); i++)
		;
	if (i < n && s[i] == '[') {
		size_t d = i + 1;
		while (d < n && is_digit((unsigned char)s[d]))
			d++;
		if (d > i + 1 && d < n && s[d] == ']' && d - i <= 10) {
			ret->cpu = (int)parse_id(s + i + 1, d - i - 1);
			for (i = d + 1; i < n && is_ws((unsigned char)s[i]); i++)
				;
		}
	}
	if (i < n && is_digit((unsigned char)s[i])) {
		size_t d = i;
		while (d < n && is_digit((unsigned char)s[d]))
			d++;
		if (d < n && s[d] == '.') {
			d++;
			while (d < n && is_digit((unsigned char)s[d]))
				d++;
		}
		if (d < n && s[d] == ':') {
			ret->time_text = str(s, i, d);
			ret->time_ns = parse_time(s + i, d - i);
		}
	}

	for (t = n; t > 0 && is_ws((unsigned char)s[t - 1]); t--)
		;
	if (t >= 2 && s[t - 1] == ':') {
		size_t c = t - 1, b = c, a, d;
		const char *colon;

		while (b > 0 && !is_ws((unsigned char)s[b - 1]))
			b--;
		colon = b > 0 && b < c ? memrchr(s, ':', b) : NULL;
		if (colon) {
			size_t p = (size_t)(colon - s);
			bool ok;

			for (a = p + 1; is_ws((unsigned char)s[a]); a++)
				;
			for (d = a; d < b && is_digit((unsigned char)s[d]); d++)
				;
			if (d == a) {
				ok = a == b && b > p + 1;
			} else {
				size_t q = d;
				while (is_ws((unsigned char)s[q]))
					q++;
				ok = q == b && b > d;
			}
			if (ok) {
				bool ovf;
				ret->event = str(s, b, c);
				ret->period_text = str(s, a, d);
				ret->period = parse_dec(s + a, d - a, &ovf);
			}
		}
	}
	if (!ret->event.p)
		ret->event = ret->period_text = str(s, n, n);
	if (!ret->time_text.p)
		ret->time_text = str(s, n, n);
	return true;
}

static bool module_is_jit(const char *m, size_t n)
{
	static const char pre[] = "/tmp/perf-";
	const size_t np = sizeof(pre) - 1;
	const char *p = m, *end = m + n;

	while ((p = memmem(p, (size_t)(end - p), pre, np))) {
		const char *d = p + np, *q = d;
		while (q < end && is_digit((unsigned char)*q))
			q++;
		if (q > d && end - q >= 4 && !memcmp(q, ".map", 4))
			return true;
		p++;
	}
	return false;
}

static unsigned module_flags(const char *m, size_t n)
{
	unsigned f = 0;

	if (n && (m[0] == '[' || (n >= 7 && !memcmp(m + n - 7, "vmlinux", 7))) && !memmem(m, n, "unknown", 7))
		f |= HS_PS_KERNEL;
	if (n >= 14 && module_is_jit(m, n))
		f |= HS_PS_JIT;
	if (n == 7 && !memcmp(m, "inlined", 7))
		f |= HS_PS_INLINED;
	return f;
}

/*
 * The frame pattern is /^\s*(\w+)\s*(.+) \((.*)\)/. With (.+) and (.*) greedy, the module
 * opens at the last " (" that has a ')' somewhere after it (call it g) and closes at the last
 * ')' of the line, whatever the symbol started with. The first try (the whole word as the
 * address, every blank after it skipped) matches when g leaves the symbol a byte. Otherwise
 * the pattern backtracks: the symbol starts one byte before g, inside the blanks after the
 * word, or at the word's last byte when g is right after the word.
 */
bool hs_perf_script_parse_frame(const char *s, size_t n, struct hs_ps_frame *ret)
{
	size_t i0 = 0, we, se, lp, g, ab, ae, rb, re, h;
	const char *rp;

	while (i0 < n && is_ws((unsigned char)s[i0]))
		i0++;
	if (i0 == n || !is_word((unsigned char)s[i0]))
		return false;
	for (we = i0; we < n && is_word((unsigned char)s[we]); we++)
		;
	for (se = we; se < n && is_ws((unsigned char)s[se]); se++)
		;
	rp = memrchr(s, ')', n);
	if (!rp || rp - s < 2)
		return false;
	lp = (size_t)(rp - s);
	for (g = lp - 2;; g--) {
		if (s[g] == ' ' && s[g + 1] == '(')
			break;
		if (!g)
			return false;
	}
	if (g >= se + 1) {
		ab = i0, ae = we, rb = se, re = g;
	} else if (g > we) {
		ab = i0, ae = we, rb = g - 1, re = g;
	} else if (g == we && we - i0 >= 2) {
		ab = i0, ae = we - 1, rb = we - 1, re = we;
	} else {
		return false;
	}

	memset(ret, 0, sizeof(*ret));
	ret->addr = str(s, ab, ae);
	if (ae - ab <= 16) {
		uint64_t v = 0;
		size_t k;
		for (k = ab; k < ae; k++) {
			int x = hex_val((unsigned char)s[k]);
			if (x < 0)
				break;
			v = v << 4 | (unsigned)x;
		}
		ret->ip = k == ae ? v : 0;
	}
	ret->rawsym = str(s, rb, re);
	ret->sym = ret->rawsym;
	/* s/\+0x[\da-f]+$//: '+' and 'x' are not hex digits, so the offset is the whole run of
	 * lower-case hex digits at the end, right after "+0x". */
	for (h = re; h > rb && (is_digit((unsigned char)s[h - 1]) || (s[h - 1] >= 'a' && s[h - 1] <= 'f')); h--)
		;
	if (h < re && h >= rb + 3 && !memcmp(s + h - 3, "+0x", 3)) {
		ret->sym.n = h - 3 - rb;
		for (size_t k = h; k < re; k++)
			ret->offset = ret->offset << 4 | (unsigned)hex_val((unsigned char)s[k]);
	}
	ret->module = str(s, g + 2, lp);
	ret->flags = module_flags(ret->module.p, ret->module.n);
	return true;
}

void hs_ps_parts_init(struct hs_ps_parts *it, struct hs_ps_str sym)
{
	/* "->" cannot overlap itself, so the separators found from the right are the ones a
	 * left-to-right split finds: trailing empty names are the "->"s at the end. */
	size_t n = sym.n;

	while (n >= 2 && sym.p[n - 2] == '-' && sym.p[n - 1] == '>')
		n -= 2;
	it->p = sym.p;
	it->end = sym.p + n;
	it->done = n == 0;
}

bool hs_ps_parts_next(struct hs_ps_parts *it, struct hs_ps_str *ret)
{
	const char *q;

	if (it->done)
		return false;
	q = it->p;
	for (;;) {
		q = memchr(q, '-', (size_t)(it->end - q));
		if (!q || q + 1 >= it->end || q[1] == '>')
			break;
		q++;
	}
	if (!q || q + 1 >= it->end) {
		ret->p = it->p;
		ret->n = (size_t)(it->end - it->p);
		it->done = true;
	} else {
		ret->p = it->p;
		ret->n = (size_t)(q - it->p);
		it->p = q + 2;
	}
	return true;
}

/* A frame of the sample being gathered: offsets into the reader's arena. */
struct frame_off {
	size_t addr, rawsym, module; /* start offsets */
	uint32_t addr_n, rawsym_n, sym_n, module_n;
	uint64_t ip, offset;
	unsigned flags;
	uint32_t srcline, nsrcline;
};

struct srcline_off {
	size_t off, n;
};

struct hs_perf_script {
	hs_ps_read_fn read;
	void *ctx;
	struct hs_perf_script_opts opts;
	char *event; /* the filter in force */
	struct hs_perf_script_stats stats;
	int err;     /* sticky: the error returned, or 0 */
	struct hs_parse_error perr;

	char *buf;
	size_t cap, start, end, scanned;
	uint64_t base;       /* input offset of buf[0] */
	uint64_t line_off;   /* input offset of the last line returned */
	bool eof, sniffed;

	/* the sample being gathered */
	bool active, returned;
	struct hs_strbuf header; /* a copy of its header line */
	uint64_t header_line;
	HS_VEC(struct frame_off) frames;
	HS_VEC(struct srcline_off) srclines;
	struct hs_strbuf arena;

	/* what was returned */
	HS_VEC(struct hs_ps_frame) out_frames;
	HS_VEC(struct hs_ps_str) out_srclines;
};

static ssize_t no_read(void *ctx, void *buf, size_t n)
{
	return 0;
}

struct hs_perf_script *hs_perf_script_new(hs_ps_read_fn read, void *ctx, const struct hs_perf_script_opts *opts)
{
	struct hs_perf_script *r = hs_xcalloc(1, sizeof(*r));

	r->read = read ? read : no_read;
	r->ctx = ctx;
	if (opts)
		r->opts = *opts;
	r->opts.event_filter = NULL;
	if (opts && opts->event_filter && *opts->event_filter)
		r->event = hs_xstrdup(opts->event_filter);
	if (!r->opts.max_line)
		r->opts.max_line = HS_PS_MAX_LINE;
	if (!r->opts.max_frames)
		r->opts.max_frames = HS_PS_MAX_FRAMES;
	if (!r->opts.max_sample)
		r->opts.max_sample = HS_PS_MAX_SAMPLE;
	r->cap = READ_CHUNK;
	r->buf = hs_xmalloc(r->cap);
	return r;
}

void hs_perf_script_free(struct hs_perf_script *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r->event);
	hs_strbuf_release(&r->header);
	hs_strbuf_release(&r->arena);
	hs_vec_free(&r->frames);
	hs_vec_free(&r->srclines);
	hs_vec_free(&r->out_frames);
	hs_vec_free(&r->out_srclines);
	free(r);
}

const char *hs_perf_script_event(const struct hs_perf_script *r)
{
	return r->event;
}

const struct hs_perf_script_stats *hs_perf_script_stats(const struct hs_perf_script *r)
{
	return &r->stats;
}

static int fail(struct hs_perf_script *r, int rc, uint64_t line, uint64_t off, const char *fmt, ...)
	HS_PRINTF(5, 6);

static int fail(struct hs_perf_script *r, int rc, uint64_t line, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	r->err = rc;
	r->perr.offset = off;
	r->perr.line = line;
	va_start(ap, fmt);
	vsnprintf(r->perr.msg, sizeof(r->perr.msg), fmt, ap);
	va_end(ap);
	return rc;
}

/* The next line without its '\n': 1, 0 at the end of input, or a negative errno. The line is
 * valid until the next call. */
static int next_line(struct hs_perf_script *r, const char **line, size_t *len)
{
	for (;;) {
		const char *nl = NULL;
		size_t have = r->end - r->start;

		if (!r->sniffed && (r->base || r->start || r->end >= 8 || r->eof)) {
			r->sniffed = true;
			if (!r->base && !r->start && r->end >= 8 && !memcmp(r->buf, "PERFILE", 7))
				return fail(r, -EBADMSG, 1, 0, "this is a perf.data file: run 'perf script' on it");
		}

		if (r->scanned < r->end)
			nl = memchr(r->buf + r->scanned, '\n', r->end - r->scanned);
		if (nl || (r->eof && have)) {
			size_t n = nl ? (size_t)(nl - (r->buf + r->start)) : have;

			r->stats.lines++;
			r->line_off = r->base + r->start;
			if (n > r->opts.max_line)
				return fail(r, -EOVERFLOW, r->stats.lines, r->line_off, "line longer than %zu bytes",
					    r->opts.max_line);
			*line = r->buf + r->start;
			*len = n;
			r->start += n + (nl != NULL);
			r->scanned = r->start;
			return 1;
		}
		if (r->eof)
			return 0;
		if (have > r->opts.max_line)
			return fail(r, -EOVERFLOW, r->stats.lines + 1, r->base + r->start, "line longer than %zu bytes",
				    r->opts.max_line);
		if (r->start) {
			memmove(r->buf, r->buf + r->start, have);
			r->base += r->start;
			r->start = 0;
			r->end = have;
		}
		r->scanned = r->end;
		if (r->end == r->cap) {
			r->cap *= 2;
			r->buf = hs_xrealloc(r->buf, r->cap);
		}
		for (;;) {
			ssize_t got = r->read(r->ctx, r->buf + r->end, r->cap - r->end);
			if (got == -EINTR)
				continue;
			if (got < 0)
				return fail(r, (int)got, r->stats.lines + 1, r->base + r->end, "read error: %s",
					    strerror((int)-got));
			if (!got)
				r->eof = true;
			r->end += (size_t)got;
			break;
		}
	}
}

static size_t arena_add(struct hs_perf_script *r, struct hs_ps_str s)
{
	size_t off = r->arena.len;
	hs_strbuf_add(&r->arena, s.p, s.n);
	return off;
}

static int add_frame(struct hs_perf_script *r, const struct hs_ps_frame *f)
{
	struct frame_off fo;
	uint32_t want = 0;

	if (r->frames.n >= r->opts.max_frames)
		return fail(r, -EOVERFLOW, r->stats.lines, r->line_off, "sample with more than %zu frames",
			    r->opts.max_frames);
	if (r->arena.len + f->addr.n + f->rawsym.n + f->module.n > r->opts.max_sample)
		return fail(r, -EOVERFLOW, r->stats.lines, r->line_off, "sample longer than %zu bytes",
			    r->opts.max_sample);
	fo.addr = arena_add(r, f->addr);
	fo.rawsym = arena_add(r, f->rawsym);
	fo.module = arena_add(r, f->module);
	fo.addr_n = (uint32_t)f->addr.n;
	fo.rawsym_n = (uint32_t)f->rawsym.n;
	fo.sym_n = (uint32_t)f->sym.n;
	fo.module_n = (uint32_t)f->module.n;
	fo.ip = f->ip;
	fo.offset = f->offset;
	fo.flags = f->flags;
	fo.srcline = (uint32_t)r->srclines.n;
	fo.nsrcline = 0;

	if (r->opts.srcline) {
		/* One source line per name, until a name that is "[unknown]" in an "[unknown]"
		 * module (those have none). A name "(...)" is a process name, not a frame. */
		struct hs_ps_parts it;
		struct hs_ps_str part;
		bool unknown_mod = f->module.n == 9 && !memcmp(f->module.p, "[unknown]", 9);

		if (!(f->sym.n && f->sym.p[0] == '(')) {
			hs_ps_parts_init(&it, f->sym);
			while (hs_ps_parts_next(&it, &part)) {
				if (unknown_mod && part.n == 9 && !memcmp(part.p, "[unknown]", 9))
					break;
				want++;
			}
		}
	}
	hs_vec_push(&r->frames, fo);

	/* f points into the line buffer, which reading on invalidates: everything needed was
	 * copied above. */
	for (uint32_t i = 0; i < want; i++) {
		const char *l;
		size_t n;
		int rc = next_line(r, &l, &n);
		struct srcline_off so;

		if (rc < 0)
			return rc;
		if (!rc)
			break;
		if (r->arena.len + n > r->opts.max_sample)
			return fail(r, -EOVERFLOW, r->stats.lines, r->line_off, "sample longer than %zu bytes",
				    r->opts.max_sample);
		so.off = arena_add(r, (struct hs_ps_str){l, n});
		so.n = n;
		hs_vec_push(&r->srclines, so);
		r->frames.v[r->frames.n - 1].nsrcline++;
	}
	return 0;
}

static void fill_sample(struct hs_perf_script *r, struct hs_ps_sample *ret)
{
	const char *a = r->arena.buf;

	hs_perf_script_parse_header(r->header.buf, r->header.len, ret);
	ret->line = r->header_line;
	hs_vec_reserve(&r->out_frames, r->frames.n);
	hs_vec_reserve(&r->out_srclines, r->srclines.n);
	for (size_t i = 0; i < r->frames.n; i++) {
		const struct frame_off *fo = &r->frames.v[i];
		struct hs_ps_frame *f = &r->out_frames.v[i];

		f->addr = (struct hs_ps_str){a + fo->addr, fo->addr_n};
		f->rawsym = (struct hs_ps_str){a + fo->rawsym, fo->rawsym_n};
		f->sym = (struct hs_ps_str){a + fo->rawsym, fo->sym_n};
		f->module = (struct hs_ps_str){a + fo->module, fo->module_n};
		f->ip = fo->ip;
		f->offset = fo->offset;
		f->flags = fo->flags;
		f->srcline = fo->srcline;
		f->nsrcline = fo->nsrcline;
	}
	for (size_t i = 0; i < r->srclines.n; i++)
		r->out_srclines.v[i] = (struct hs_ps_str){a + r->srclines.v[i].off, r->srclines.v[i].n};
	ret->frames = r->out_frames.v;
	ret->nframes = r->frames.n;
	ret->srclines = r->out_srclines.v;
	ret->nsrclines = r->srclines.n;
}

int hs_perf_script_next(struct hs_perf_script *r, struct hs_ps_sample *ret, struct hs_parse_error *err)
{
	const char *l;
	size_t n;
	int rc;

	if (r->err)
		goto out;
	if (r->returned) {
		r->returned = false;
		r->active = false;
		r->frames.n = r->srclines.n = 0;
		hs_strbuf_reset(&r->arena);
	}
	while ((rc = next_line(r, &l, &n)) > 0) {
		struct hs_ps_sample h;
		struct hs_ps_frame f;

		if (n && l[0] == '#')
			continue;
		if (!n) {
			if (!r->active)
				continue;
			r->stats.samples++;
			r->returned = true;
			fill_sample(r, ret);
			return 1;
		}
		if (hs_perf_script_parse_header(l, n, &h)) {
			if (h.event.n) {
				if (!r->event) {
					r->event = hs_xstrndup(h.event.p, h.event.n);
				} else if (strlen(r->event) != h.event.n || memcmp(r->event, h.event.p, h.event.n)) {
					r->stats.filtered++;
					continue;
				}
			}
			r->stats.headers++;
			if (r->active)
				r->stats.merged_headers++;
			r->active = true;
			r->header_line = r->stats.lines;
			hs_strbuf_reset(&r->header);
			hs_strbuf_add(&r->header, l, n);
		} else if (hs_perf_script_parse_frame(l, n, &f)) {
			if (!r->active) {
				r->stats.orphan_frames++;
				continue;
			}
			if ((rc = add_frame(r, &f)) < 0)
				goto out;
		} else {
			if (!r->stats.unrecognized++)
				r->stats.first_unrecognized = r->stats.lines;
		}
	}
	if (!rc) {
		r->stats.truncated = r->active;
		r->active = false;
		return 0;
	}
out:
	if (err && !err->msg[0])
		*err = r->perr;
	return r->err;
}
