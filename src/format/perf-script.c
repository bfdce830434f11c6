/* perf script text, read sample by sample the way FlameGraph's stackcollapse-perf.pl reads
 * it: lines from a bounded buffer, each distinct frame line parsed once (perf-script-line.c
 * matches the lines), and the sample state machine with the script's rules: a sample ends only
 * at a blank line, frames with no accepted header before them are dropped, a header of another
 * event is skipped without ending the sample before it. */
#include "perf-script.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/strbuf.h"

#define READ_CHUNK (1u << 20)

/* Frame lines repeat: the same return address in the same function recurs in sample after
 * sample. Each distinct frame line is parsed once and kept, its parse as offsets into the
 * line, the line's bytes right after (one or two cache lines for a lookup), in blocks that
 * never move. A repeat costs a hash and a compare. */
struct known_frame {
	uint64_t ip, offset;
	uint32_t len; /* of the line */
	uint32_t want_srclines; /* with opts.srcline: how many source lines follow it;
				 * UINT32_MAX until it is first in a sample */
	uint32_t addr, addr_n, rawsym, rawsym_n, sym_n, module, module_n;
	unsigned flags;
	char line[];
};

struct block {
	struct block *next;
	size_t used, cap;
	char data[];
};

/* A frame of the sample being gathered. */
struct frame_ref {
	uint32_t known;  /* index in known, or UINT32_MAX when the table is full: then the line */
	uint32_t header; /* index in hdrs */
	uint32_t srcline, nsrcline;
	size_t line, len; /* a copy of the line in the arena, parsed again when the sample is returned */
};

struct span {
	size_t off, n;
};

/* A header line kept in the arena, with its parse as offsets from the line's start. */
struct header {
	struct span line;
	struct span comm, pid_text, tid_text, time_text, period_text, event;
	struct hs_ps_sample h; /* its strings are set from the spans when the sample is returned */
};

struct hs_perf_script {
	hs_ps_read_fn read;
	void *ctx;
	struct hs_perf_script_opts opts;
	char *event; /* the filter in force */
	struct hs_perf_script_stats stats;
	int err;     /* sticky: the error returned, or 0 */
	struct hs_error perr;

	char *buf;
	size_t cap, start, end, scanned;
	uint64_t base;     /* input offset of buf[0] */
	uint64_t line_off; /* input offset of the last line returned */
	bool eof, sniffed;
	/* The line after the current one, looked at ahead: found to be the known line that
	 * followed the current one last time (peek_id), or else hashed, so that its lookup's
	 * first cache miss overlaps the work on the current line. */
	uint64_t peek_off, peek_hash; /* peek_off: its input offset, UINT64_MAX when none */
	size_t peek_len;
	uint32_t peek_id;
	bool peek_hashed;
	uint32_t prev_known; /* the known line just read, or UINT32_MAX */

	HS_VEC(struct known_frame *) known;
	HS_VEC(uint32_t) next_known; /* per known line: the known line after it last time */
	struct hs_index known_ix;
	struct block *blocks;
	size_t known_bytes;

	/* the sample being gathered */
	bool active, returned;
	HS_VEC(struct header) hdrs; /* its header lines; the last rules */
	uint64_t header_line;
	HS_VEC(struct frame_ref) frames;
	HS_VEC(struct span) srclines;
	struct hs_strbuf arena;

	/* what was returned */
	HS_VEC(struct hs_ps_frame) out_frames;
	HS_VEC(struct hs_ps_str) out_srclines;
	HS_VEC(struct hs_ps_str) out_comms;
};

static uint64_t line_hash(const char *p, size_t n)
{
	return hs_hash_mem(p, n);
}

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
	if (r->opts.max_line > UINT32_MAX / 2)
		r->opts.max_line = UINT32_MAX / 2; /* known frames keep 32-bit offsets */
	if (!r->opts.max_frames)
		r->opts.max_frames = HS_PS_MAX_FRAMES;
	if (!r->opts.max_sample)
		r->opts.max_sample = HS_PS_MAX_SAMPLE;
	if (!r->opts.max_known)
		r->opts.max_known = HS_PS_MAX_KNOWN;
	r->cap = READ_CHUNK;
	r->buf = hs_xmalloc(r->cap);
	r->peek_off = UINT64_MAX;
	r->prev_known = UINT32_MAX;
	return r;
}

void hs_perf_script_free(struct hs_perf_script *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r->event);
	while (r->blocks) {
		struct block *b = r->blocks;
		r->blocks = b->next;
		free(b);
	}
	hs_vec_free(&r->known);
	hs_vec_free(&r->next_known);
	hs_index_release(&r->known_ix);
	hs_vec_free(&r->hdrs);
	hs_vec_free(&r->frames);
	hs_vec_free(&r->srclines);
	hs_strbuf_release(&r->arena);
	hs_vec_free(&r->out_frames);
	hs_vec_free(&r->out_srclines);
	hs_vec_free(&r->out_comms);
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
	vsnprintf(r->perr.detail, sizeof(r->perr.detail), fmt, ap);
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
				return fail(r, -EMEDIUMTYPE, 1, 0, "this is a perf.data file");
		}
		if (r->peek_off == r->base + r->start)
			nl = r->buf + r->start + r->peek_len;
		else if (r->scanned < r->end)
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

struct known_key {
	const struct hs_perf_script *r;
	const char *p;
	size_t n;
};

static bool known_eq(const void *ctx, uint32_t id)
{
	const struct known_key *k = ctx;
	const struct known_frame *kf = k->r->known.v[id];

	return kf->len == k->n && !memcmp(kf->line, k->p, k->n);
}

static void *block_alloc(struct hs_perf_script *r, size_t n)
{
	struct block *b = r->blocks;
	void *d;

	n = (n + 7) & ~(size_t)7;
	if (!b || b->cap - b->used < n) {
		size_t cap = HS_MAX(n, (size_t)1 << 20);
		b = hs_xmalloc(sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = r->blocks;
		r->blocks = b;
	}
	d = b->data + b->used;
	b->used += n;
	return d;
}

static void known_frame_get(const struct known_frame *kf, uint32_t id, struct hs_ps_frame *ret)
{
	/* member by member: what a compound literal adds, zeroing, costs here */
	ret->addr = (struct hs_ps_str){kf->line + kf->addr, kf->addr_n};
	ret->ip = kf->ip;
	ret->rawsym = (struct hs_ps_str){kf->line + kf->rawsym, kf->rawsym_n};
	ret->sym = (struct hs_ps_str){kf->line + kf->rawsym, kf->sym_n};
	ret->offset = kf->offset;
	ret->module = (struct hs_ps_str){kf->line + kf->module, kf->module_n};
	ret->flags = kf->flags;
	ret->comm = (struct hs_ps_str){NULL, 0};
	ret->id = id;
	ret->srcline = ret->nsrcline = 0;
}

/* The known frame for this line: 1 (index in *ret), 0 when the line is no frame line, or
 * 2 when it is one but the table is full. */
static int know_frame(struct hs_perf_script *r, const char *l, size_t n, uint64_t h, uint32_t *ret)
{
	struct known_frame *kf;
	struct hs_ps_frame f;

	if (!hs_perf_script_parse_frame(l, n, &f))
		return 0;
	if (r->known_bytes + n > r->opts.max_known || r->known.n >= UINT32_MAX - 1)
		return 2;
	kf = block_alloc(r, sizeof(*kf) + n);
	kf->ip = f.ip;
	kf->offset = f.offset;
	kf->len = (uint32_t)n;
	kf->want_srclines = r->opts.srcline ? UINT32_MAX : 0;
	kf->addr = (uint32_t)(f.addr.p - l);
	kf->addr_n = (uint32_t)f.addr.n;
	kf->rawsym = (uint32_t)(f.rawsym.p - l);
	kf->rawsym_n = (uint32_t)f.rawsym.n;
	kf->sym_n = (uint32_t)f.sym.n;
	kf->module = (uint32_t)(f.module.p - l);
	kf->module_n = (uint32_t)f.module.n;
	kf->flags = f.flags;
	memcpy(kf->line, l, n);
	r->known_bytes += n;
	*ret = (uint32_t)r->known.n;
	hs_vec_push(&r->known, kf);
	hs_vec_push(&r->next_known, UINT32_MAX);
	hs_index_insert(&r->known_ix, h, *ret);
	return 1;
}

static uint32_t srclines_wanted(struct hs_perf_script *r, const struct hs_ps_frame *f)
{
	int n = r->opts.srclines ? r->opts.srclines(r->opts.srclines_ctx, f) : -1;

	return n >= 0 ? (uint32_t)n : hs_perf_script_srclines(f);
}

static int sample_room(struct hs_perf_script *r, size_t n)
{
	if (r->arena.len + n > r->opts.max_sample)
		return fail(r, -EOVERFLOW, r->stats.lines, r->line_off, "sample longer than %zu bytes",
			    r->opts.max_sample);
	return 0;
}

static size_t arena_add(struct hs_perf_script *r, const char *p, size_t n)
{
	size_t off = r->arena.len;
	hs_strbuf_add(&r->arena, p, n);
	return off;
}

/* Adds the frame on line l (known[known], or parsed again later), then its source lines. */
static int add_frame(struct hs_perf_script *r, uint32_t known, const char *l, size_t n)
{
	struct frame_ref fr = {known, (uint32_t)(r->hdrs.n - 1), (uint32_t)r->srclines.n, 0, 0, 0};
	uint32_t want;
	int rc;

	if (r->frames.n >= r->opts.max_frames)
		return fail(r, -EOVERFLOW, r->stats.lines, r->line_off, "sample with more than %zu frames",
			    r->opts.max_frames);
	if (known != UINT32_MAX) {
		struct known_frame *kf = r->known.v[known];
		if (kf->want_srclines == UINT32_MAX) {
			struct hs_ps_frame f;
			known_frame_get(kf, known, &f);
			kf->want_srclines = srclines_wanted(r, &f);
		}
		want = kf->want_srclines;
	} else {
		struct hs_ps_frame f;
		if ((rc = sample_room(r, n)))
			return rc;
		hs_perf_script_parse_frame(l, n, &f);
		f.id = UINT32_MAX;
		want = r->opts.srcline ? srclines_wanted(r, &f) : 0;
		fr.line = arena_add(r, l, n);
		fr.len = n;
	}
	hs_vec_push(&r->frames, fr);

	/* l is in the line buffer, which reading on reuses: what is needed of it was kept. */
	for (uint32_t i = 0; i < want; i++) {
		struct span sp;

		rc = next_line(r, &l, &n);
		if (rc < 0)
			return rc;
		if (!rc)
			break;
		if ((rc = sample_room(r, n)))
			return rc;
		sp.off = arena_add(r, l, n);
		sp.n = n;
		hs_vec_push(&r->srclines, sp);
		r->frames.v[r->frames.n - 1].nsrcline++;
	}
	return 0;
}

static struct hs_ps_str unspan(const char *base, struct span sp)
{
	return (struct hs_ps_str){base + sp.off, sp.n};
}

static struct span span_of(const char *line, struct hs_ps_str s)
{
	return (struct span){(size_t)(s.p - line), s.n};
}

static void fill_sample(struct hs_perf_script *r, struct hs_ps_sample *ret)
{
	const char *a = r->arena.buf;
	const struct header *h = &r->hdrs.v[r->hdrs.n - 1];
	const char *hl = a + h->line.off;

	hs_vec_reserve(&r->out_comms, r->hdrs.n);
	for (size_t i = 0; i < r->hdrs.n; i++)
		r->out_comms.v[i] = unspan(a + r->hdrs.v[i].line.off, r->hdrs.v[i].comm);
	*ret = h->h;
	ret->comm = unspan(hl, h->comm);
	ret->pid_text = unspan(hl, h->pid_text);
	ret->tid_text = unspan(hl, h->tid_text);
	ret->time_text = unspan(hl, h->time_text);
	ret->period_text = unspan(hl, h->period_text);
	ret->event = unspan(hl, h->event);
	ret->line = r->header_line;
	hs_vec_reserve(&r->out_frames, r->frames.n);
	hs_vec_reserve(&r->out_srclines, r->srclines.n);
	for (size_t i = 0; i < r->frames.n; i++) {
		const struct frame_ref *fr = &r->frames.v[i];
		struct hs_ps_frame *f = &r->out_frames.v[i];

		if (fr->known != UINT32_MAX) {
			known_frame_get(r->known.v[fr->known], fr->known, f);
		} else {
			hs_perf_script_parse_frame(a + fr->line, fr->len, f);
			f->id = UINT32_MAX;
		}
		f->srcline = fr->srcline;
		f->nsrcline = fr->nsrcline;
		f->comm = r->out_comms.v[fr->header];
	}
	for (size_t i = 0; i < r->srclines.n; i++)
		r->out_srclines.v[i] = (struct hs_ps_str){a + r->srclines.v[i].off, r->srclines.v[i].n};
	ret->frames = r->out_frames.v;
	ret->nframes = r->frames.n;
	ret->srclines = r->out_srclines.v;
	ret->nsrclines = r->srclines.n;
}

static int add_header(struct hs_perf_script *r, const struct hs_ps_sample *h, const char *l, size_t n)
{
	struct header hd;
	int rc;

	if (h->event.n) {
		if (!r->event) {
			r->event = hs_xstrndup(h->event.p, h->event.n);
		} else if (strlen(r->event) != h->event.n || memcmp(r->event, h->event.p, h->event.n)) {
			/* skipped, and the sample before it (if any) goes on */
			r->stats.filtered++;
			return 0;
		}
	}
	r->stats.headers++;
	if (r->active)
		r->stats.merged_headers++;
	/* A header no frame followed is forgotten (it is the last thing in the arena), so that
	 * header lines without blank lines between them (perf script without call chains) take
	 * no memory. */
	if (r->hdrs.n && (!r->frames.n || r->frames.v[r->frames.n - 1].header != r->hdrs.n - 1)) {
		r->hdrs.n--;
		r->arena.len = r->hdrs.v[r->hdrs.n].line.off;
	}
	if ((rc = sample_room(r, n)))
		return rc;
	r->active = true;
	r->header_line = r->stats.lines;
	hd.line.off = arena_add(r, l, n);
	hd.line.n = n;
	hd.comm = span_of(l, h->comm);
	hd.pid_text = span_of(l, h->pid_text);
	hd.tid_text = span_of(l, h->tid_text);
	hd.time_text = span_of(l, h->time_text);
	hd.period_text = span_of(l, h->period_text);
	hd.event = span_of(l, h->event);
	hd.h = *h;
	hs_vec_push(&r->hdrs, hd);
	return 0;
}

/* Looks at the line after the current one, which was the known line cur (or UINT32_MAX). A
 * caller follows its callee: the line after a frame line is most often the one that followed
 * it before, and comparing with that one is cheaper than a lookup. */
static void peek(struct hs_perf_script *r, uint32_t cur)
{
	const char *p = r->buf + r->start;
	const char *nl = memchr(p, '\n', r->end - r->start);
	uint32_t guess = cur == UINT32_MAX ? UINT32_MAX : r->next_known.v[cur];
	size_t n;

	r->peek_off = UINT64_MAX;
	if (!nl || nl == p || (size_t)(nl - p) > r->opts.max_line)
		return;
	n = (size_t)(nl - p);
	r->peek_off = r->base + r->start;
	r->peek_len = n;
	r->peek_id = UINT32_MAX;
	r->peek_hashed = false;
	if (guess != UINT32_MAX && r->known.v[guess]->len == n && !memcmp(r->known.v[guess]->line, p, n)) {
		r->peek_id = guess;
		return;
	}
	if (!hs_ps_is_space((unsigned char)p[0]))
		return; /* most likely a header, looked at before the table */
	r->peek_hashed = true;
	r->peek_hash = line_hash(p, n);
	hs_index_prefetch(&r->known_ix, r->peek_hash);
}

int hs_perf_script_next(struct hs_perf_script *r, struct hs_ps_sample *ret, struct hs_error *err)
{
	const char *l;
	size_t n;
	int rc;

	if (r->err)
		goto out;
	if (r->returned) {
		r->returned = false;
		r->active = false;
		r->frames.n = r->srclines.n = r->hdrs.n = 0;
		hs_strbuf_reset(&r->arena);
	}
	while ((rc = next_line(r, &l, &n)) > 0) {
		struct known_key k = {r, l, n};
		struct hs_ps_sample h;
		bool peeked = r->line_off == r->peek_off && n == r->peek_len;
		uint32_t prev = r->prev_known, id = peeked ? r->peek_id : UINT32_MAX;
		uint64_t hash = 0;

		r->prev_known = UINT32_MAX;
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
		/* A known line is a frame line (it was no header before), and a header starts
		 * with a non-blank: such a line is tried as a header before the table. */
		if (id == UINT32_MAX && !hs_ps_is_space((unsigned char)l[0]) && hs_perf_script_parse_header(l, n, &h)) {
			peek(r, UINT32_MAX);
			if ((rc = add_header(r, &h, l, n)) < 0)
				goto out;
			continue;
		}
		if (id == UINT32_MAX) {
			hash = peeked && r->peek_hashed ? r->peek_hash : line_hash(l, n);
			id = hs_index_find(&r->known_ix, hash, known_eq, &k);
		}
		if (id == UINT32_MAX) {
			switch (know_frame(r, l, n, hash, &id)) {
			case 0:
				if (!r->stats.unrecognized++)
					r->stats.first_unrecognized = r->stats.lines;
				continue;
			case 2:
				id = UINT32_MAX;
				break;
			}
		}
		if (id != UINT32_MAX) {
			if (prev != UINT32_MAX)
				r->next_known.v[prev] = id;
			r->prev_known = id;
		}
		peek(r, id);
		if (!r->active) {
			r->stats.orphan_frames++;
			continue;
		}
		if ((rc = add_frame(r, id, l, n)) < 0)
			goto out;
	}
	if (!rc) {
		r->stats.truncated = r->active;
		r->active = false;
		return 0;
	}
out:
	if (err && !err->detail[0])
		*err = r->perr;
	return r->err;
}
