/* The profile IR: interning tables and sample aggregation. */
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/debug-advice.h"
#include "util/strbuf.h"

struct hs_profile *hs_profile_new(void)
{
	struct hs_profile *p = hs_xcalloc(1, sizeof(*p));
	struct hs_mapping m0 = {0};
	struct hs_function f0 = {0};
	struct hs_location l0 = {0};
	struct hs_stack s0 = {0};
	struct hs_line ln0 = {0};

	hs_vec_push(&p->str_off, 0);
	hs_vec_push(&p->str_len, 0);
	hs_vec_push(&p->str_pool, '\0');
	hs_vec_push(&p->mappings, m0);
	hs_vec_push(&p->functions, f0);
	hs_vec_push(&p->locations, l0);
	hs_vec_push(&p->stacks, s0);
	hs_vec_push(&p->lines, ln0);
	p->max_stacks = HS_PROFILE_MAX_STACKS;
	return p;
}

void hs_profile_reserve(struct hs_profile *q, const struct hs_profile *p)
{
	hs_vec_reserve(&q->str_off, p->str_off.n);
	hs_vec_reserve(&q->str_len, p->str_len.n);
	hs_vec_reserve(&q->str_pool, p->str_pool.n);
	hs_vec_reserve(&q->mappings, p->mappings.n);
	hs_vec_reserve(&q->functions, p->functions.n);
	hs_vec_reserve(&q->lines, p->lines.n);
	hs_vec_reserve(&q->locations, p->locations.n);
	hs_vec_reserve(&q->stack_locs, p->stack_locs.n);
	hs_vec_reserve(&q->stacks, p->stacks.n);
	hs_vec_reserve(&q->samples, p->samples.n);
	hs_vec_reserve(&q->values, p->values.n);
	hs_index_reserve(&q->str_ix, p->str_ix.n);
	hs_index_reserve(&q->map_ix, p->map_ix.n);
	hs_index_reserve(&q->func_ix, p->func_ix.n);
	hs_index_reserve(&q->loc_ix, p->loc_ix.n);
	hs_index_reserve(&q->stack_ix, p->stack_ix.n);
	hs_index_reserve(&q->sample_ix, p->sample_ix.n);
}

void hs_profile_free(struct hs_profile *p)
{
	if (!p)
		return;
	hs_vec_free(&p->str_off);
	hs_vec_free(&p->str_len);
	hs_vec_free(&p->str_pool);
	hs_vec_free(&p->types);
	hs_vec_free(&p->type_events);
	hs_vec_free(&p->comments);
	hs_vec_free(&p->mappings);
	hs_vec_free(&p->functions);
	hs_vec_free(&p->lines);
	hs_vec_free(&p->locations);
	hs_vec_free(&p->stack_locs);
	hs_vec_free(&p->stacks);
	hs_vec_free(&p->samples);
	hs_vec_free(&p->values);
	hs_index_release(&p->str_ix);
	hs_index_release(&p->map_ix);
	hs_index_release(&p->func_ix);
	hs_index_release(&p->loc_ix);
	hs_index_release(&p->stack_ix);
	hs_index_release(&p->sample_ix);
	free(p);
}

/* ---- strings ---- */

struct str_key {
	const struct hs_profile *p;
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t id)
{
	const struct str_key *k = ctx;
	return k->p->str_len.v[id] == k->len && !memcmp(k->p->str_pool.v + k->p->str_off.v[id], k->s, k->len);
}

uint32_t hs_profile_intern(struct hs_profile *p, const char *s, size_t len)
{
	struct str_key k = {p, s, len};
	uint64_t h;
	uint32_t id;

	if (!len)
		return 0;
	h = hs_hash_bytes(s, len, 0);
	id = hs_index_find(&p->str_ix, h, str_eq, &k);
	if (id != UINT32_MAX)
		return id;
	if (p->str_pool.n + len + 1 > UINT32_MAX)
		hs_die_oom();
	id = (uint32_t)p->str_off.n;
	hs_vec_push(&p->str_off, (uint32_t)p->str_pool.n);
	hs_vec_push(&p->str_len, (uint32_t)len);
	hs_vec_reserve(&p->str_pool, p->str_pool.n + len + 1);
	memcpy(p->str_pool.v + p->str_pool.n, s, len);
	p->str_pool.n += len;
	p->str_pool.v[p->str_pool.n++] = '\0';
	hs_index_insert(&p->str_ix, h, id);
	return id;
}

uint32_t hs_profile_find_str(const struct hs_profile *p, const char *s, size_t len)
{
	struct str_key k = {p, s, len};

	if (!len)
		return 0;
	return hs_index_find(&p->str_ix, hs_hash_bytes(s, len, 0), str_eq, &k);
}

uint32_t hs_profile_intern_str(struct hs_profile *p, const char *s)
{
	return s ? hs_profile_intern(p, s, strlen(s)) : 0;
}

const char *hs_profile_str(const struct hs_profile *p, uint32_t id)
{
	if (id >= p->str_off.n)
		return "";
	return p->str_pool.v + p->str_off.v[id];
}

/* ---- value types ---- */

uint32_t hs_profile_add_type(struct hs_profile *p, const char *type, const char *unit)
{
	struct hs_value_type t = {hs_profile_intern_str(p, type), hs_profile_intern_str(p, unit)};

	hs_vec_push(&p->types, t);
	return (uint32_t)p->types.n - 1;
}

int hs_profile_find_type(const struct hs_profile *p, const char *type)
{
	for (size_t i = 0; i < p->types.n; i++)
		if (!strcmp(hs_profile_str(p, p->types.v[i].type), type))
			return (int)i;
	return -1;
}

int hs_profile_value_index(const struct hs_profile *p, const char *type, int *ret, struct hs_strbuf *have)
{
	int i = hs_profile_find_type(p, type);

	if (i >= 0) {
		*ret = i;
		return 0;
	}
	if (have && !p->types.n)
		hs_strbuf_adds(have, "none");
	for (size_t t = 0; have && t < p->types.n; t++)
		hs_strbuf_addf(have, "%s%s", t ? ", " : "", hs_profile_str(p, p->types.v[t].type));
	return -ENOENT;
}

/* ---- mappings ---- */

struct map_key {
	const struct hs_profile *p;
	const struct hs_mapping *m;
};

static bool map_eq(const void *ctx, uint32_t id)
{
	const struct map_key *k = ctx;
	const struct hs_mapping *a = &k->p->mappings.v[id], *b = k->m;
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->file == b->file && a->build_id == b->build_id && a->kind == b->kind;
}

uint32_t hs_profile_mapping(struct hs_profile *p, const struct hs_mapping *m)
{
	struct map_key k = {p, m};
	uint64_t h = hs_hash_combine(hs_hash_combine(hs_hash_u64(m->start), m->limit),
				     hs_hash_combine(hs_hash_combine(m->offset, m->file), m->build_id));
	uint32_t id = hs_index_find(&p->map_ix, h, map_eq, &k);

	if (id != UINT32_MAX)
		return id;
	id = (uint32_t)p->mappings.n;
	hs_vec_push(&p->mappings, *m);
	hs_index_insert(&p->map_ix, h, id);
	return id;
}

/* ---- functions ---- */

struct func_key {
	const struct hs_profile *p;
	struct hs_function f;
};

static bool func_key_eq(const void *ctx, uint32_t id)
{
	const struct func_key *k = ctx;
	const struct hs_function *a = &k->p->functions.v[id];
	return a->name == k->f.name && a->system_name == k->f.system_name && a->filename == k->f.filename &&
	       a->start_line == k->f.start_line;
}

uint32_t hs_profile_function(struct hs_profile *p, uint32_t name, uint32_t system_name,
			     uint32_t filename, int64_t start_line)
{
	struct func_key k = {p, {name, system_name, filename, start_line}};
	uint64_t h = hs_hash_combine(hs_hash_combine(hs_hash_u64(name), system_name),
				     hs_hash_combine(filename, (uint64_t)start_line));
	uint32_t id = hs_index_find(&p->func_ix, h, func_key_eq, &k);

	if (id != UINT32_MAX)
		return id;
	id = (uint32_t)p->functions.n;
	hs_vec_push(&p->functions, k.f);
	hs_index_insert(&p->func_ix, h, id);
	return id;
}

/* ---- locations ---- */

struct loc_key {
	const struct hs_profile *p;
	uint32_t mapping;
	uint64_t address;
	uint8_t kind;
	const struct hs_line *lines;
	uint32_t nlines;
};

static bool loc_eq(const void *ctx, uint32_t id)
{
	const struct loc_key *k = ctx;
	const struct hs_location *l = &k->p->locations.v[id];

	if (l->mapping != k->mapping || l->address != k->address || l->kind != k->kind || l->nlines != k->nlines)
		return false;
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct hs_line *a = &k->p->lines.v[l->line0 + i];
		if (a->function != k->lines[i].function || a->line != k->lines[i].line)
			return false;
	}
	return true;
}

uint32_t hs_profile_location(struct hs_profile *p, uint32_t mapping, uint64_t address, uint8_t kind,
			     const struct hs_line *lines, uint32_t nlines)
{
	struct loc_key k = {p, mapping, address, kind, lines, nlines};
	uint64_t h = hs_hash_combine(hs_hash_combine(hs_hash_u64(mapping), address), kind);
	struct hs_location l;
	uint32_t id;

	for (uint32_t i = 0; i < nlines; i++)
		h = hs_hash_combine(hs_hash_combine(h, lines[i].function), (uint64_t)lines[i].line);
	id = hs_index_find(&p->loc_ix, h, loc_eq, &k);
	if (id != UINT32_MAX)
		return id;
	l.mapping = mapping;
	l.address = address;
	l.kind = kind;
	l.line0 = (uint32_t)p->lines.n;
	l.nlines = nlines;
	for (uint32_t i = 0; i < nlines; i++)
		hs_vec_push(&p->lines, lines[i]);
	id = (uint32_t)p->locations.n;
	hs_vec_push(&p->locations, l);
	hs_index_insert(&p->loc_ix, h, id);
	return id;
}

/* ---- stacks ---- */

struct stack_key {
	const struct hs_profile *p;
	const uint32_t *locs;
	uint32_t n;
};

static bool stack_eq(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct hs_stack *s = &k->p->stacks.v[id];
	return s->nlocs == k->n && !memcmp(&k->p->stack_locs.v[s->loc0], k->locs, k->n * sizeof(*k->locs));
}

/* The one stack every stack past the caps becomes: a pseudo-frame saying so. */
static uint32_t over_cap(struct hs_profile *p)
{
	p->stacks_over_cap++;
	return hs_profile_over_cap_stack(p);
}

uint32_t hs_profile_over_cap_stack(struct hs_profile *p)
{
	if (!p->over_cap_stack) {
		struct hs_line ln = {0, 0};
		struct hs_stack s;
		uint32_t loc;

		ln.function = hs_profile_function(p, hs_profile_intern_str(p, HS_PROFILE_OVER_CAP_NAME), 0, 0, 0);
		loc = hs_profile_location(p, 0, 0, HS_KIND_PSEUDO, &ln, 1);
		s.loc0 = (uint32_t)p->stack_locs.n;
		s.nlocs = s.frames = 1;
		hs_vec_push(&p->stack_locs, loc);
		p->over_cap_stack = (uint32_t)p->stacks.n;
		hs_vec_push(&p->stacks, s);
		/* not in the index: no stack of locations asked for is this one */
	}
	return p->over_cap_stack;
}

uint32_t hs_profile_stack(struct hs_profile *p, const uint32_t *locs, uint32_t nlocs)
{
	struct stack_key k = {p, locs, nlocs};
	uint64_t h = hs_hash_bytes(locs, nlocs * sizeof(*locs), 0x57ac), frames = 0;
	struct hs_stack s;
	uint32_t id;

	if (!nlocs)
		return 0;
	id = hs_index_find(&p->stack_ix, h, stack_eq, &k);
	if (id != UINT32_MAX)
		return id;
	if (p->stacks.n >= (p->max_stacks ? p->max_stacks : HS_PROFILE_MAX_STACKS) ||
	    p->stack_locs.n + nlocs > HS_PROFILE_MAX_STACK_LOCS)
		return over_cap(p);
	for (uint32_t i = 0; i < nlocs; i++) {
		uint32_t n = locs[i] < p->locations.n ? p->locations.v[locs[i]].nlines : 0;
		frames += n ? n : 1;
	}
	if (p->max_frames) {
		if (frames > p->max_frames - HS_MIN(p->frames, p->max_frames)) {
			p->frames_over_cap = true;
			return over_cap(p);
		}
		p->frames += frames;
	}
	s.loc0 = (uint32_t)p->stack_locs.n;
	s.nlocs = nlocs;
	s.frames = (uint32_t)HS_MIN(frames, UINT32_MAX);
	hs_vec_reserve(&p->stack_locs, p->stack_locs.n + nlocs);
	memcpy(p->stack_locs.v + p->stack_locs.n, locs, nlocs * sizeof(*locs));
	p->stack_locs.n += nlocs;
	id = (uint32_t)p->stacks.n;
	hs_vec_push(&p->stacks, s);
	hs_index_insert(&p->stack_ix, h, id);
	return id;
}

/* ---- samples ---- */

struct sample_key {
	const struct hs_profile *p;
	struct hs_sample s;
};

static bool sample_eq(const void *ctx, uint32_t id)
{
	const struct sample_key *k = ctx;
	const struct hs_sample *a = &k->p->samples.v[id];
	return a->stack == k->s.stack && a->comm == k->s.comm && a->pid == k->s.pid && a->tid == k->s.tid &&
	       a->time == k->s.time;
}

static uint64_t sample_hash(const struct hs_sample *s)
{
	return hs_hash_combine(hs_hash_combine(hs_hash_u64(s->stack), s->comm),
			       hs_hash_combine(((uint64_t)(uint32_t)s->pid << 32) | (uint32_t)s->tid, s->time));
}

uint32_t hs_profile_add_sample(struct hs_profile *p, uint32_t stack, uint32_t comm, int32_t pid,
			       int32_t tid, uint64_t time, const int64_t *values)
{
	struct sample_key k = {p, {stack, comm, pid, tid, time}};
	uint64_t h = sample_hash(&k.s);
	uint32_t id = hs_index_find(&p->sample_ix, h, sample_eq, &k);
	size_t nt = p->types.n;

	if (id == UINT32_MAX && p->max_frames) {
		/* a new sample: its frames are what writers go through once more */
		if (p->stacks.v[stack].frames > p->max_frames - HS_MIN(p->sample_frames, p->max_frames) &&
		    (!p->over_cap_stack || stack != p->over_cap_stack)) {
			k.s.stack = hs_profile_over_cap_stack(p);
			h = sample_hash(&k.s);
			id = hs_index_find(&p->sample_ix, h, sample_eq, &k);
			p->samples_over_cap += id == UINT32_MAX;
		}
		p->sample_frames += id == UINT32_MAX ? p->stacks.v[k.s.stack].frames : 0;
	}
	if (id == UINT32_MAX) {
		id = (uint32_t)p->samples.n;
		hs_vec_push(&p->samples, k.s);
		hs_vec_reserve(&p->values, p->values.n + nt);
		memset(p->values.v + p->values.n, 0, nt * sizeof(*p->values.v));
		p->values.n += nt;
		hs_index_insert(&p->sample_ix, h, id);
	}
	hs_profile_add_values(p, id, values);
	return id;
}

void hs_profile_add_values(struct hs_profile *p, uint32_t sample, const int64_t *values)
{
	size_t nt = p->types.n;

	for (size_t i = 0; i < nt; i++) {
		int64_t *v = &p->values.v[(size_t)sample * nt + i];
		/* values come from files too: saturate rather than overflow, and count it */
		if (__builtin_add_overflow(*v, values[i], v)) {
			*v = values[i] > 0 ? INT64_MAX : INT64_MIN;
			p->values_saturated++;
		}
	}
}

const char *hs_profile_location_name(const struct hs_profile *p, uint32_t loc)
{
	const struct hs_location *l = &p->locations.v[loc];

	if (!l->nlines)
		return "[unknown]";
	return hs_profile_str(p, p->functions.v[p->lines.v[l->line0 + l->nlines - 1].function].name);
}

int64_t hs_profile_total(const struct hs_profile *p, uint32_t vi)
{
	int64_t t = 0;

	for (size_t i = 0; i < p->samples.n; i++)
		t = hs_add_sat(t, p->values.v[i * p->types.n + vi]);
	return t;
}

bool hs_profile_sums_saturate(const struct hs_profile *p, uint32_t vi)
{
	/* every partial sum lies between the sum of the negative values and that of the positive
	 * ones: when neither overflows, no sum of some of the values does */
	int64_t pos = 0, neg = 0;

	if (p->values_saturated)
		return true;
	if (vi >= p->types.n)
		return false;
	for (size_t i = 0; i < p->samples.n; i++) {
		int64_t v = p->values.v[i * p->types.n + vi];
		if (v > 0 ? __builtin_add_overflow(pos, v, &pos) : __builtin_add_overflow(neg, v, &neg))
			return true;
	}
	return false;
}

int hs_profile_saturated_type(const struct hs_profile *p)
{
	for (size_t i = 0; i < p->types.n; i++)
		if (hs_profile_sums_saturate(p, (uint32_t)i))
			return (int)i;
	return -1;
}

size_t hs_profile_held_notes(const struct hs_profile *q, struct hs_strbuf *sb)
{
	size_t n = 0;
	int t;

	if (q->samples_over_cap && ++n)
		hs_strbuf_addf(sb,
			       "the samples' stacks have more than %llu frames in all, the most an input of this size "
			       "may ask for: %llu more samples are counted under one '" HS_PROFILE_OVER_CAP_NAME
			       "' frame\n",
			       (unsigned long long)q->max_frames, (unsigned long long)q->samples_over_cap);
	if (q->stacks_over_cap && q->frames_over_cap && ++n)
		hs_strbuf_addf(sb,
			       "the stacks have more than %llu frames in all, the most an input of this size may ask "
			       "for: %llu more distinct stacks are counted as one '" HS_PROFILE_OVER_CAP_NAME
			       "' frame\n",
			       (unsigned long long)q->max_frames, (unsigned long long)q->stacks_over_cap);
	else if (q->stacks_over_cap && ++n)
		hs_strbuf_addf(sb,
			       "more than %u distinct stacks: %llu more are counted as one '" HS_PROFILE_OVER_CAP_NAME
			       "' frame\n",
			       (unsigned)(q->stacks.n - 2), (unsigned long long)q->stacks_over_cap);
	if ((t = hs_profile_saturated_type(q)) >= 0 && ++n)
		hs_strbuf_addf(sb,
			       "'%s' values add up past %lld: sums are held there, so totals and shares are not "
			       "exact\n",
			       hs_profile_str(q, q->types.v[t].type), (long long)INT64_MAX);
	return n;
}

void hs_profile_bound_frames(struct hs_profile *p, uint64_t input_bytes)
{
	uint64_t per = HS_MIN(input_bytes, UINT64_MAX / 2 / HS_PROFILE_FRAMES_PER_BYTE);

	p->max_frames = HS_PROFILE_FRAMES_MIN + per * HS_PROFILE_FRAMES_PER_BYTE;
}

bool hs_profile_has_time(const struct hs_profile *p)
{
	for (size_t i = 0; i < p->samples.n; i++)
		if (p->samples.v[i].time)
			return true;
	return false;
}

uint32_t hs_profile_main_mapping(const struct hs_profile *p)
{
	uint32_t other = 0;

	if (p->main_mapping && p->main_mapping < p->mappings.n)
		return p->main_mapping;
	for (uint32_t i = 1; i < p->mappings.n; i++) {
		const struct hs_mapping *m = &p->mappings.v[i];
		if (m->kind == HS_KIND_USER && hs_profile_str(p, m->file)[0] != '[')
			return i;
		if (!other && m->kind != HS_KIND_KERNEL)
			other = i;
	}
	return other ? other : p->mappings.n > 1;
}

uint32_t hs_profile_note_lost(struct hs_profile *p, uint64_t got, uint64_t lost)
{
	struct hs_strbuf sb = {0};
	uint32_t id;
	double pct = got + lost ? 100.0 * (double)lost / (double)(got + lost) : 0.0;

	/* every sample lost is said in words; a share under 100% never rounds up to it */
	if (!got && lost)
		hs_strbuf_addf(&sb, "lost all %llu samples (100%%)", (unsigned long long)lost);
	else
		hs_strbuf_addf(&sb, "lost %llu samples (%s%.1f%%)", (unsigned long long)lost, pct > 99.9 ? "over " : "",
			       pct > 99.9 ? 99.9 : pct);
	id = hs_profile_intern_str(p, hs_strbuf_str(&sb));
	hs_vec_push(&p->comments, id);
	hs_strbuf_release(&sb);
	return id;
}

uint32_t hs_profile_note_lost_records(struct hs_profile *p, uint64_t n, bool side_band)
{
	struct hs_strbuf sb = {0};
	uint32_t id;

	if (side_band)
		hs_strbuf_addf(&sb, "lost %llu side-band record%s (mappings, names, forks, exits)",
			       (unsigned long long)n, n == 1 ? "" : "s");
	else
		hs_strbuf_addf(&sb,
			       "lost %llu record%s, samples and side-band (mappings, names, forks, exits) together",
			       (unsigned long long)n, n == 1 ? "" : "s");
	id = hs_profile_intern_str(p, hs_strbuf_str(&sb));
	hs_vec_push(&p->comments, id);
	hs_strbuf_release(&sb);
	return id;
}

bool hs_profile_address_name(const char *name, const char *file)
{
	const char *base = strrchr(file, '/'), *hex;
	size_t n;

	base = base ? base + 1 : file;
	n = strlen(base);
	if (!n || strncmp(name, base, n) || strncmp(name + n, "+0x", 3))
		return false;
	hex = name + n + 3;
	return *hex && hex[strspn(hex, "0123456789abcdef")] == '\0';
}

bool hs_profile_unnamed_share(const struct hs_profile *p, uint32_t vi, struct hs_unnamed_share *ret)
{
	struct hs_u64map by_file = {0};
	struct hs_unnamed_share u = {0};

	for (size_t i = 0; i < p->samples.n && vi < p->types.n; i++) {
		const struct hs_stack *st = &p->stacks.v[p->samples.v[i].stack];
		const struct hs_location *l;
		const char *name;
		int64_t v = p->values.v[i * p->types.n + vi];
		uint64_t sum = 0;
		size_t n;

		if (!st->nlocs || v <= 0)
			continue;
		l = &p->locations.v[p->stack_locs.v[st->loc0]];
		if (l->kind != HS_KIND_USER || !l->mapping)
			continue;
		u.user = hs_add_sat(u.user, v);
		name = hs_profile_location_name(p, p->stack_locs.v[st->loc0]);
		n = strlen(name);
		if ((!n || name[0] != '[' || name[n - 1] != ']') &&
		    !hs_profile_address_name(name, hs_profile_str(p, p->mappings.v[l->mapping].file)))
			continue;
		u.unnamed = hs_add_sat(u.unnamed, v);
		hs_u64map_get(&by_file, l->mapping, &sum);
		hs_u64map_put(&by_file, l->mapping, (uint64_t)hs_add_sat((int64_t)sum, v));
	}
	/* by mapping, then by file: a file has a mapping per segment and per process */
	for (size_t i = 0; i < by_file.cap; i++) {
		const struct hs_mapping *m;
		int64_t t = 0;
		if (!hs_u64map_used(&by_file, i))
			continue;
		m = &p->mappings.v[by_file.keys[i]];
		for (size_t j = 0; j < by_file.cap; j++)
			if (hs_u64map_used(&by_file, j) && p->mappings.v[by_file.keys[j]].file == m->file)
				t = hs_add_sat(t, (int64_t)by_file.vals[j]);
		if (t > u.top || (t == u.top && m->build_id && !u.build_id && m->file == u.file)) {
			u.top = t;
			u.file = m->file;
			u.build_id = m->build_id;
		}
	}
	hs_u64map_release(&by_file);
	if (u.file) {
		const char *f = hs_profile_str(p, u.file);
		/* /usr/..., /lib/, /lib64/, /libx32/: where a distribution's packages put files */
		u.distro = (!strncmp(f, "/usr/", 5) && strncmp(f, "/usr/local/", 11)) ||
			   (!strncmp(f, "/lib", 4) && f[4 + strspn(f + 4, "0123456789x")] == '/');
	}
	if (u.build_id) {
		const char *id = hs_profile_str(p, u.build_id);
		snprintf(u.debug_file, sizeof(u.debug_file), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	}
	*ret = u;
	return u.unnamed > u.user / 2 && u.file;
}

uint32_t hs_profile_location_module(const struct hs_profile *p, const struct hs_location *l)
{
	if (l->mapping)
		return p->mappings.v[l->mapping].file;
	if (hs_kind_is_script(l->kind) && l->nlines)
		return p->functions.v[p->lines.v[l->line0 + l->nlines - 1].function].filename;
	return 0;
}

bool hs_python_file(const char *file)
{
	size_t n = file ? strlen(file) : 0;

	if ((n > 3 && !strcmp(file + n - 3, ".py")) || (n > 4 && !strcmp(file + n - 4, ".pyw")))
		return true;
	return n && (!strncmp(file, "<frozen ", 8) || !strcmp(file, "<string>") || !strcmp(file, "<stdin>"));
}

bool hs_kind_is_script(uint8_t kind)
{
	return kind == HS_KIND_PYTHON || kind == HS_KIND_RUBY || kind == HS_KIND_PHP || kind == HS_KIND_PERL;
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);

	return n > t && !strcmp(s + n - t, tail);
}

uint8_t hs_script_kind(const char *file)
{
	size_t n = file ? strlen(file) : 0;

	if (hs_python_file(file))
		return HS_KIND_PYTHON;
	if (ends_with(file, n, ".rb") || ends_with(file, n, ".rake") || ends_with(file, n, ".ru"))
		return HS_KIND_RUBY;
	if (ends_with(file, n, ".php") || ends_with(file, n, ".phtml") || ends_with(file, n, ".inc") ||
	    (n && strstr(file, ".php(") && strstr(file, "eval()'d code")))
		return HS_KIND_PHP;
	if (ends_with(file, n, ".pl") || ends_with(file, n, ".pm") || ends_with(file, n, ".t") ||
	    (n > 6 && !strncmp(file, "(eval ", 6)))
		return HS_KIND_PERL;
	return HS_KIND_USER;
}

bool hs_kind_is_jit(uint8_t kind)
{
	return kind == HS_KIND_JIT || kind == HS_KIND_JAVA_INTERP || kind == HS_KIND_JAVA_C1 || kind == HS_KIND_JAVA_C2 ||
	       kind == HS_KIND_JS_INTERP || kind == HS_KIND_JS_BASELINE || kind == HS_KIND_JS_OPT ||
	       kind == HS_KIND_JS_BUILTIN;
}

enum hs_kind hs_kind_guess(const char *file, uint64_t address, const char *fn)
{
	if (file && *file) {
		if (!strncmp(file, "[kernel.kallsyms]", 17))
			return HS_KIND_KERNEL;
		if (!strcmp(file, HS_JAVA_INTERP_MODULE))
			return HS_KIND_JAVA_INTERP;
		if (!strcmp(file, HS_JAVA_C1_MODULE))
			return HS_KIND_JAVA_C1;
		if (!strcmp(file, HS_JAVA_C2_MODULE))
			return HS_KIND_JAVA_C2;
		if (!strcmp(file, HS_JS_INTERP_MODULE))
			return HS_KIND_JS_INTERP;
		if (!strcmp(file, HS_JS_BASELINE_MODULE))
			return HS_KIND_JS_BASELINE;
		if (!strcmp(file, HS_JS_OPT_MODULE))
			return HS_KIND_JS_OPT;
		if (!strcmp(file, HS_JS_BUILTIN_MODULE))
			return HS_KIND_JS_BUILTIN;
		if (!strcmp(file, "[jit]") || !strncmp(file, "/tmp/perf-", 10) || strstr(file, "jitted-") ||
		    !strcmp(file, "//anon") || !strcmp(file, "[anon]"))
			return HS_KIND_JIT;
	}
	/* x86-64 and arm64 keep the kernel in the upper half of the address space */
	if (address >= 0xffff800000000000ULL)
		return HS_KIND_KERNEL;
	if ((!file || !*file) && fn && fn[0] == '[')
		return HS_KIND_PSEUDO;
	return HS_KIND_USER;
}

const char *hs_profile_command(const struct hs_profile *p, struct hs_strbuf *sb)
{
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = hs_profile_str(p, p->comments.v[i]);
		const char *dash = strstr(c, " -- ");

		/* what hotstack record (add_comments) and perf record (its cmdline) write */
		if (!dash || (strncmp(c, "hotstack ", 9) && !strstr(c, "perf record ")) || !dash[4])
			continue;
		hs_strbuf_reset(sb);
		hs_strbuf_adds(sb, dash + 4);
		return hs_strbuf_str(sb);
	}
	return NULL;
}

static bool time_unit(const char *u)
{
	return !strcmp(u, "nanoseconds") || !strcmp(u, "microseconds") || !strcmp(u, "milliseconds") ||
	       !strcmp(u, "seconds");
}

uint32_t hs_profile_time_value(const struct hs_profile *p, uint32_t vi)
{
	if (vi >= p->types.n || time_unit(hs_profile_str(p, p->types.v[vi].unit)))
		return vi;
	for (uint32_t i = 0; i < p->types.n; i++)
		if (time_unit(hs_profile_str(p, p->types.v[i].unit)))
			return i;
	return vi;
}

void hs_profile_unnamed_note(const struct hs_profile *p, bool debuginfod_set, struct hs_strbuf *sb)
{
	struct hs_unnamed_share u;
	const char *f;
	bool bid;

	if (!hs_profile_unnamed_share(p, 0, &u))
		return;
	f = hs_profile_str(p, u.file);
	bid = u.debug_file[0]; /* never a placeholder path */
	hs_strbuf_addf(sb, "%.0f%% of the user-space samples are in code without function names, %.0f%% in %s",
		       100.0 * (double)u.unnamed / (double)u.user, 100.0 * (double)u.top / (double)u.user, f);
	if (u.distro) { /* the distribution's file: its debug package, found by asking dpkg */
		struct hs_debug_advice_env env = {.debuginfod_set = debuginfod_set};
		hs_debug_advice(f, u.build_id ? hs_profile_str(p, u.build_id) : NULL, &env, sb);
		hs_strbuf_addc(sb, '\n');
	} else { /* one's own, built or installed without symbols */
		hs_strbuf_addf(sb,
			       ", which has no symbols (stripped?): build it with -g and keep its symbols, or give "
			       "hotstack a "
			       "debug file for it (%s%s%swhere its .gnu_debuglink says, or under --symfs DIR)\n",
			       bid ? "at " : "", u.debug_file, bid ? ", " : "");
	}
}
