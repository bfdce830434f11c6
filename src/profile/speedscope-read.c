/* speedscope files into the profile IR (speedscope-read.h). The document is read in one pass
 * with the bounded pull reader of format/json.h; "shared" may come after "profiles", so
 * profiles are kept as frame indices until the frames are known, then turned into samples. */
#include "speedscope-read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/json.h"
#include "util/strbuf.h"

enum unit_class { U_NONE, U_TIME, U_BYTES };

struct event {
	double at;
	uint32_t frame;
	bool open;
};

struct prof {
	uint32_t name; /* string id */
	bool evented;
	double scale; /* to nanoseconds (time) or 1 */
	enum unit_class unit;
	double start, end;
	size_t s0, ns; /* samples: soff[s0 .. s0 + ns) */
	size_t w0, nw; /* weights */
	size_t e0, ne; /* events */
	bool has_type, has_unit;
	size_t off; /* where it starts, for messages */
};

struct reader {
	struct hs_json j;
	struct hs_profile *p;
	struct hs_strbuf key, str;
	HS_VEC(uint32_t) fname, ffile;
	HS_VEC(int64_t) fline;
	HS_VEC(uint32_t) idx; /* frame indices of all samples, root first */
	HS_VEC(size_t) soff;  /* sample k is idx[soff[k] .. soff[k + 1]) */
	HS_VEC(double) weights;
	HS_VEC(struct event) events;
	HS_VEC(struct prof) profs;
	uint32_t title;
};

static bool bad(struct reader *r, int code, size_t off, const char *fmt, ...) HS_PRINTF(4, 5);

static bool bad(struct reader *r, int code, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (r->j.err)
		return false;
	r->j.err = code;
	r->j.err_off = off;
	va_start(ap, fmt);
	vsnprintf(r->j.msg, sizeof(r->j.msg), fmt, ap);
	va_end(ap);
	return false;
}

static size_t here(const struct reader *r)
{
	return (size_t)(r->j.p - r->j.start);
}

/* A frame index: a whole number that fits 32 bits (checked against the frames at the end). */
static bool index_value(struct reader *r, uint32_t *ret)
{
	size_t off = here(r);
	double d;

	if (!hs_json_number(&r->j, &d))
		return false;
	if (!(d >= 0 && d < 4294967295.0) || d != floor(d))
		return bad(r, -EBADMSG, off, "speedscope: frame index %g is not an index", d);
	*ret = (uint32_t)d;
	return true;
}

static bool read_frames(struct reader *r)
{
	size_t n = 0;

	if (!hs_json_enter(&r->j, '['))
		return false;
	while (hs_json_more(&r->j, ']', &n)) {
		size_t m = 0;
		uint32_t name = UINT32_MAX, file = 0;
		int64_t line = 0;
		size_t off = here(r);

		if (!hs_json_enter(&r->j, '{'))
			return false;
		while (hs_json_more(&r->j, '}', &m)) {
			double d;

			if (!hs_json_key(&r->j, &r->key))
				return false;
			if (!strcmp(r->key.buf, "name") || !strcmp(r->key.buf, "file")) {
				bool is_name = r->key.buf[0] == 'n';
				if (!hs_json_string(&r->j, &r->str))
					return false;
				*(is_name ? &name : &file) = hs_profile_intern(r->p, r->str.buf, r->str.len);
			} else if (!strcmp(r->key.buf, "line")) {
				if (!hs_json_number(&r->j, &d))
					return false;
				line = d >= 1 && d < 1e15 ? (int64_t)d : 0;
			} else if (!hs_json_skip(&r->j)) {
				return false;
			}
		}
		if (r->j.err)
			return false;
		if (name == UINT32_MAX)
			return bad(r, -EBADMSG, off, "speedscope: frame %zu has no name", n - 1);
		hs_vec_push(&r->fname, name);
		hs_vec_push(&r->ffile, file);
		hs_vec_push(&r->fline, line);
	}
	return !r->j.err;
}

static bool read_shared(struct reader *r)
{
	size_t n = 0;

	if (!hs_json_enter(&r->j, '{'))
		return false;
	while (hs_json_more(&r->j, '}', &n)) {
		if (!hs_json_key(&r->j, &r->key))
			return false;
		if (!strcmp(r->key.buf, "frames") ? !read_frames(r) : !hs_json_skip(&r->j))
			return false;
	}
	return !r->j.err;
}

static bool read_unit(struct reader *r, struct prof *pr)
{
	static const struct {
		const char *name;
		enum unit_class unit;
		double scale;
	} units[] = {{"none", U_NONE, 1},           {"nanoseconds", U_TIME, 1}, {"microseconds", U_TIME, 1e3},
		     {"milliseconds", U_TIME, 1e6}, {"seconds", U_TIME, 1e9},   {"bytes", U_BYTES, 1}};
	size_t off = here(r);

	if (!hs_json_string(&r->j, &r->str))
		return false;
	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++)
		if (!strcmp(r->str.buf, units[i].name)) {
			pr->unit = units[i].unit;
			pr->scale = units[i].scale;
			pr->has_unit = true;
			return true;
		}
	return bad(r, -EOPNOTSUPP, off, "speedscope: unknown unit '%.40s'", r->str.buf);
}

static bool read_samples(struct reader *r, struct prof *pr)
{
	size_t n = 0;

	if (!hs_json_enter(&r->j, '['))
		return false;
	pr->s0 = r->soff.n;
	while (hs_json_more(&r->j, ']', &n)) {
		size_t m = 0, off = here(r);

		hs_vec_push(&r->soff, r->idx.n);
		if (!hs_json_enter(&r->j, '['))
			return false;
		while (hs_json_more(&r->j, ']', &m)) {
			uint32_t f;
			if (m > HS_SPEEDSCOPE_MAX_DEPTH)
				return bad(r, -EOVERFLOW, off, "speedscope: a sample deeper than %u frames",
					   HS_SPEEDSCOPE_MAX_DEPTH);
			if (!index_value(r, &f))
				return false;
			hs_vec_push(&r->idx, f);
		}
	}
	pr->ns = r->soff.n - pr->s0;
	return !r->j.err;
}

static bool read_weights(struct reader *r, struct prof *pr)
{
	size_t n = 0;

	if (!hs_json_enter(&r->j, '['))
		return false;
	pr->w0 = r->weights.n;
	while (hs_json_more(&r->j, ']', &n)) {
		double d;
		if (!hs_json_number(&r->j, &d))
			return false;
		hs_vec_push(&r->weights, d);
	}
	pr->nw = r->weights.n - pr->w0;
	return !r->j.err;
}

static bool read_events(struct reader *r, struct prof *pr)
{
	size_t n = 0;

	if (!hs_json_enter(&r->j, '['))
		return false;
	pr->e0 = r->events.n;
	while (hs_json_more(&r->j, ']', &n)) {
		struct event e = {NAN, UINT32_MAX, false};
		size_t m = 0, off = here(r);
		bool typed = false;

		if (!hs_json_enter(&r->j, '{'))
			return false;
		while (hs_json_more(&r->j, '}', &m)) {
			if (!hs_json_key(&r->j, &r->key))
				return false;
			if (!strcmp(r->key.buf, "type")) {
				if (!hs_json_string(&r->j, &r->str))
					return false;
				if (strcmp(r->str.buf, "O") && strcmp(r->str.buf, "C"))
					return bad(r, -EBADMSG, off, "speedscope: event type '%.20s' (not O or C)",
						   r->str.buf);
				e.open = r->str.buf[0] == 'O';
				typed = true;
			} else if (!strcmp(r->key.buf, "frame")) {
				if (!index_value(r, &e.frame))
					return false;
			} else if (!strcmp(r->key.buf, "at")) {
				if (!hs_json_number(&r->j, &e.at))
					return false;
			} else if (!hs_json_skip(&r->j)) {
				return false;
			}
		}
		if (r->j.err)
			return false;
		if (!typed || e.frame == UINT32_MAX || isnan(e.at))
			return bad(r, -EBADMSG, off, "speedscope: an event without its type, frame or time");
		hs_vec_push(&r->events, e);
	}
	pr->ne = r->events.n - pr->e0;
	return !r->j.err;
}

static bool read_profile(struct reader *r)
{
	struct prof pr = {0};
	size_t n = 0;

	pr.off = here(r);
	pr.scale = 1;
	if (!hs_json_enter(&r->j, '{'))
		return false;
	while (hs_json_more(&r->j, '}', &n)) {
		const char *k;
		bool ok;

		if (!hs_json_key(&r->j, &r->key))
			return false;
		k = r->key.buf;
		if (!strcmp(k, "type")) {
			size_t off = here(r);
			if (!hs_json_string(&r->j, &r->str))
				return false;
			if (strcmp(r->str.buf, "sampled") && strcmp(r->str.buf, "evented"))
				return bad(r, -EOPNOTSUPP, off, "speedscope: profile type '%.40s'", r->str.buf);
			pr.evented = r->str.buf[0] == 'e';
			pr.has_type = ok = true;
		} else if (!strcmp(k, "name")) {
			ok = hs_json_string(&r->j, &r->str);
			if (ok)
				pr.name = hs_profile_intern(r->p, r->str.buf, r->str.len);
		} else if (!strcmp(k, "unit")) {
			ok = read_unit(r, &pr);
		} else if (!strcmp(k, "startValue")) {
			ok = hs_json_number(&r->j, &pr.start);
		} else if (!strcmp(k, "endValue")) {
			ok = hs_json_number(&r->j, &pr.end);
		} else if (!strcmp(k, "samples")) {
			ok = read_samples(r, &pr);
		} else if (!strcmp(k, "weights")) {
			ok = read_weights(r, &pr);
		} else if (!strcmp(k, "events")) {
			ok = read_events(r, &pr);
		} else {
			ok = hs_json_skip(&r->j);
		}
		if (!ok)
			return false;
	}
	if (r->j.err)
		return false;
	if (!pr.has_type)
		return bad(r, -EBADMSG, pr.off, "speedscope: a profile without its type");
	if (!pr.evented && pr.nw != pr.ns)
		return bad(r, -EBADMSG, pr.off, "speedscope: %zu samples but %zu weights", pr.ns, pr.nw);
	hs_vec_push(&r->profs, pr);
	return true;
}

static bool read_document(struct reader *r)
{
	size_t n = 0;

	if (!hs_json_enter(&r->j, '{'))
		return false;
	while (hs_json_more(&r->j, '}', &n)) {
		bool ok;

		if (!hs_json_key(&r->j, &r->key))
			return false;
		if (!strcmp(r->key.buf, "shared")) {
			ok = read_shared(r);
		} else if (!strcmp(r->key.buf, "profiles")) {
			size_t m = 0;
			ok = hs_json_enter(&r->j, '[');
			while (ok && hs_json_more(&r->j, ']', &m))
				ok = read_profile(r);
			ok = ok && !r->j.err;
		} else if (!strcmp(r->key.buf, "name")) {
			ok = hs_json_string(&r->j, &r->str);
			if (ok)
				r->title = hs_profile_intern(r->p, r->str.buf, r->str.len);
		} else {
			ok = hs_json_skip(&r->j);
		}
		if (!ok)
			return false;
	}
	return !r->j.err && hs_json_end(&r->j);
}

/* ---- the profile ---- */

/* A stack an evented profile opened: its location on the stack of its parent node. */
struct node {
	uint32_t parent, loc, depth;
	uint32_t stack; /* its stack in the profile, 0 until first sampled */
};

struct build {
	struct reader *r;
	HS_VEC(uint32_t) loc_of; /* per frame */
	HS_VEC(uint32_t) locs;   /* one stack, leaf first */
	/* the stacks evented profiles open, as a trie: (node below << 32 | location) -> node */
	HS_VEC(struct node) nodes; /* 0: the empty stack */
	struct hs_u64map trie;
	uint32_t comm;
	int32_t pid, tid;
	bool two; /* a second value: the weight in its unit */
};

/* A weight in its profile's unit as a value: -1 where out of range (an error). */
static int64_t weight(double w, const struct prof *pr)
{
	double v = w * pr->scale;

	if (!(v >= 0) || v >= 4611686018427387904.0) /* 2^62 */
		return -1;
	return (int64_t)llround(v);
}

static bool add(struct build *b, const struct prof *pr, const uint32_t *frames, size_t nf, bool root_first, int64_t v,
		uint64_t time)
{
	struct reader *r = b->r;
	int64_t vals[2] = {1, v};

	b->locs.n = 0;
	for (size_t i = 0; i < nf; i++) {
		uint32_t f = frames[root_first ? nf - 1 - i : i];
		if (f >= b->loc_of.n)
			return bad(r, -EBADMSG, pr->off, "speedscope: frame index %u out of range (%zu frames)", f,
				   b->loc_of.n);
		hs_vec_push(&b->locs, b->loc_of.v[f]);
	}
	if (!b->two)
		vals[0] = v;
	if (!vals[0] && !vals[1])
		return true;
	hs_profile_add_sample(r->p, hs_profile_stack(r->p, b->locs.v, (uint32_t)b->locs.n), b->comm, b->pid, b->tid,
			      time ? time : 1, vals);
	return true;
}

static uint64_t at_ns(double at, const struct prof *pr)
{
	double v = at * (pr->unit == U_TIME ? pr->scale : 1);
	return v > 0 && v < 1.8e19 ? (uint64_t)v : 0;
}

static bool build_sampled(struct build *b, const struct prof *pr)
{
	struct reader *r = b->r;
	double t = pr->start;

	for (size_t k = 0; k < pr->ns; k++) {
		size_t s = pr->s0 + k, a = r->soff.v[s], e = s + 1 < r->soff.n ? r->soff.v[s + 1] : r->idx.n;
		double w = r->weights.v[pr->w0 + k];
		int64_t v = weight(w, pr);

		if (v < 0)
			return bad(r, v < 0 && w < 0 ? -EBADMSG : -EOVERFLOW, pr->off,
				   "speedscope: weight %g out of range", w);
		if (!add(b, pr, r->idx.v + a, e - a, true, v, at_ns(t, pr) + 1))
			return false;
		t += w;
	}
	return true;
}

/* The stack of the frame just opened on the stack of node below (0: none), as a node of the
 * trie of the stacks the evented profiles open: one look-up, however deep. */
static uint32_t opened(struct build *b, uint32_t below, uint32_t frame)
{
	uint32_t loc = b->loc_of.v[frame];
	uint64_t key = (uint64_t)below << 32 | loc, v;
	struct node n = {below, loc, b->nodes.v[below].depth + 1, 0};

	if (hs_u64map_get(&b->trie, key, &v))
		return (uint32_t)v;
	hs_vec_push(&b->nodes, n);
	hs_u64map_put(&b->trie, key, b->nodes.n - 1);
	return (uint32_t)(b->nodes.n - 1);
}

/* A sample of the stack of node over an interval. Each interval is a sample of its own (its
 * time kept for flame charts), within the frames the profile lets all samples have
 * (hs_profile_add_sample()). A node's stack is spelled out (its locations copied and hashed)
 * when it is first sampled, and only when those frames leave room for it, so the work is
 * linear in the events and in the frames the profile may hold, however deep the stacks. */
static void add_stack(struct build *b, uint32_t node, int64_t v, uint64_t time)
{
	struct hs_profile *p = b->r->p;
	struct node *n = &b->nodes.v[node];
	int64_t vals[2] = {b->two ? 1 : v, v};
	uint32_t stack = n->stack;

	if (!vals[0] && !vals[1])
		return;
	if (!stack && n->depth > p->max_frames - HS_MIN(p->sample_frames, p->max_frames)) {
		stack = hs_profile_over_cap_stack(p);
		p->samples_over_cap++;
	} else if (!stack) {
		b->locs.n = 0;
		for (uint32_t k = node; k; k = b->nodes.v[k].parent)
			hs_vec_push(&b->locs, b->nodes.v[k].loc);
		stack = n->stack = hs_profile_stack(p, b->locs.v, (uint32_t)b->locs.n);
	}
	hs_profile_add_sample(p, stack, b->comm, b->pid, b->tid, time ? time : 1, vals);
}

static bool build_evented(struct build *b, const struct prof *pr)
{
	struct reader *r = b->r;
	HS_VEC(uint32_t) open = {0};  /* frames, root first */
	HS_VEC(uint32_t) stack = {0}; /* stack[k]: the node of open[0 .. k] */
	double prev = pr->start;
	bool ok = true;

	for (size_t k = 0; ok && k < pr->ne; k++) {
		const struct event *e = &r->events.v[pr->e0 + k];

		if (e->at < prev && k) {
			ok = bad(r, -EBADMSG, pr->off, "speedscope: event %zu at %g comes before the one at %g", k,
				 e->at, prev);
			break;
		}
		if (open.n && e->at > prev) {
			int64_t v = weight(e->at - prev, pr);
			if (v >= 0)
				add_stack(b, stack.v[stack.n - 1], v, at_ns(prev, pr) + 1);
			else
				ok = bad(r, -EOVERFLOW, pr->off, "speedscope: an interval of %g out of range",
					 e->at - prev);
		}
		if (!ok)
			break;
		if (e->open) {
			if (open.n >= HS_SPEEDSCOPE_MAX_DEPTH) {
				ok = bad(r, -EOVERFLOW, pr->off, "speedscope: more than %u frames open",
					 HS_SPEEDSCOPE_MAX_DEPTH);
			} else if (e->frame >= b->loc_of.n) {
				ok = bad(r, -EBADMSG, pr->off, "speedscope: frame index %u out of range (%zu frames)",
					 e->frame, b->loc_of.n);
			} else {
				uint32_t node = opened(b, stack.n ? stack.v[stack.n - 1] : 0, e->frame);
				hs_vec_push(&open, e->frame);
				hs_vec_push(&stack, node);
			}
		} else if (!open.n || open.v[open.n - 1] != e->frame) {
			ok = bad(r, -EBADMSG, pr->off,
				 "speedscope: event %zu closes frame %u, which is not the innermost "
				 "open one",
				 k, e->frame);
		} else {
			open.n--;
			stack.n--;
		}
		prev = e->at > prev || !k ? e->at : prev;
	}
	/* frames still open run to the profile's end */
	if (ok && open.n && pr->end > prev) {
		int64_t v = weight(pr->end - prev, pr);
		if (v >= 0)
			add_stack(b, stack.v[stack.n - 1], v, at_ns(prev, pr) + 1);
		else
			ok = bad(r, -EOVERFLOW, pr->off, "speedscope: an interval of %g out of range", pr->end - prev);
	}
	hs_vec_free(&open);
	hs_vec_free(&stack);
	return ok;
}

/* "comm (pid/tid)", as hotstack names a thread's profile; name_id: the profile's name, a string
 * of the profile (read from a copy: interning its prefix may move the string pool). */
static void thread_of(struct build *b, uint32_t name_id)
{
	char *name = hs_xstrdup(hs_profile_str(b->r->p, name_id));
	const char *paren = strrchr(name, '(');
	int pid, tid, end = 0;

	b->pid = b->tid = -1;
	if (paren && paren > name && paren[-1] == ' ' && sscanf(paren, "(%d/%d)%n", &pid, &tid, &end) == 2 &&
	    !paren[end] && pid >= 0 && tid >= 0) {
		b->pid = pid;
		b->tid = tid;
		b->comm = hs_profile_intern(b->r->p, name, (size_t)(paren - 1 - name));
	} else {
		b->comm = *name ? name_id : hs_profile_intern_str(b->r->p, "[unknown]");
	}
	free(name);
}

static bool build(struct reader *r)
{
	struct build b = {r, {0}, {0}, {0}, {0}, 0, -1, -1, false};
	struct hs_profile *p = r->p;
	enum unit_class unit = r->profs.n ? r->profs.v[0].unit : U_NONE;
	bool ok = true;

	for (size_t i = 0; i < r->profs.n; i++)
		if (r->profs.v[i].unit != unit)
			return bad(r, -EBADMSG, r->profs.v[i].off, "speedscope: profiles in units of different kinds");
	hs_profile_add_type(p, "samples", "count");
	if (unit == U_TIME)
		hs_profile_add_type(p, "time", "nanoseconds");
	else if (unit == U_BYTES)
		hs_profile_add_type(p, "space", "bytes");
	b.two = unit != U_NONE;
	hs_vec_push(&b.nodes, ((struct node){0, 0, 0, 0}));
	for (size_t f = 0; f < r->fname.n; f++) {
		const char *file = hs_profile_str(p, r->ffile.v[f]);
		const char *name = hs_profile_str(p, r->fname.v[f]);
		struct hs_mapping m = {0};
		struct hs_line ln;
		uint32_t fn;
		uint8_t kind;
		uint8_t script = hs_script_kind(file);
		bool py = script != HS_KIND_USER;

		/* a file without a line is the frame's module, as hotstack writes frames; a script's
		 * frame's file is its source, line or not (hs_script_kind()) */
		if (!r->fline.v[f] && *file && !py) {
			m.file = r->ffile.v[f];
			m.kind = (uint8_t)hs_kind_guess(file, 0, name);
		}
		fn = hs_profile_function(p, r->fname.v[f], r->fname.v[f], r->fline.v[f] || py ? r->ffile.v[f] : 0, 0);
		ln = (struct hs_line){fn, r->fline.v[f]};
		kind = py ? script : (uint8_t)hs_kind_guess(m.file ? file : NULL, 0, name);
		hs_vec_push(&b.loc_of, hs_profile_location(p, m.file ? hs_profile_mapping(p, &m) : 0, 0, kind, &ln, 1));
	}
	for (size_t i = 0; ok && i < r->profs.n; i++) {
		const struct prof *pr = &r->profs.v[i];

		thread_of(&b, pr->name);
		ok = pr->evented ? build_evented(&b, pr) : build_sampled(&b, pr);
	}
	hs_vec_free(&b.loc_of);
	hs_vec_free(&b.locs);
	hs_vec_free(&b.nodes);
	hs_u64map_release(&b.trie);
	return ok;
}

int hs_speedscope_read(const void *buf, size_t len, uint64_t input_bytes, struct hs_profile **ret, struct hs_error *err)
{
	struct reader r = {0};
	int rc = 0;

	hs_json_init(&r.j, buf, len);
	r.p = hs_profile_new();
	r.p->max_frames = HS_PROFILE_FRAMES_MIN +
			  HS_MIN(input_bytes, UINT64_MAX / 2 / HS_SPEEDSCOPE_FRAMES_PER_BYTE) * HS_SPEEDSCOPE_FRAMES_PER_BYTE;
	if (!read_document(&r) || !build(&r)) {
		rc = r.j.err ? r.j.err : -EBADMSG;
		if (err && !err->detail[0]) {
			hs_error_at(err, r.j.err_off, "%s", r.j.msg[0] ? r.j.msg : "speedscope: malformed");
			err->code = rc;
		}
		hs_profile_free(r.p);
	} else {
		if (r.title)
			hs_vec_push(&r.p->comments, r.title);
		*ret = r.p;
	}
	hs_strbuf_release(&r.key);
	hs_strbuf_release(&r.str);
	hs_vec_free(&r.fname);
	hs_vec_free(&r.ffile);
	hs_vec_free(&r.fline);
	hs_vec_free(&r.idx);
	hs_vec_free(&r.soff);
	hs_vec_free(&r.weights);
	hs_vec_free(&r.events);
	hs_vec_free(&r.profs);
	return rc;
}

bool hs_speedscope_sniff(const void *buf, size_t len)
{
	const char *s = buf, *end = s + len;

	if (!s)
		return false;
	if (len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	if (s == end || *s != '{')
		return false;
	return memmem(s, (size_t)(end - s), "speedscope.app/file-format-schema", 33) ||
	       (memmem(s, (size_t)(end - s), "\"profiles\"", 10) && memmem(s, (size_t)(end - s), "\"shared\"", 8));
}
