/* Profile filters: which samples to keep, then a copy of the profile with only those samples
 * and the stacks, locations, functions, mappings and strings they refer to. */
#include "filter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/copy.h"
#include "util/hashmap.h"

static void free_regexes(regex_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		regfree(&v[i]);
}

int hs_filter_add_regex(struct hs_filter *f, enum hs_filter_re which, const char *pattern, struct hs_error *err)
{
	regex_t re;
	int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);

	if (rc) {
		if (err) {
			err->code = -EINVAL;
			regerror(rc, &re, err->detail, sizeof(err->detail));
		}
		regfree(&re);
		return -EINVAL;
	}
	switch (which) {
	case HS_FILTER_COMM: hs_vec_push(&f->comm, re); break;
	case HS_FILTER_INCLUDE: hs_vec_push(&f->include, re); break;
	case HS_FILTER_EXCLUDE: hs_vec_push(&f->exclude, re); break;
	}
	return 0;
}

void hs_filter_release(struct hs_filter *f)
{
	if (!f)
		return;
	free_regexes(f->comm.v, f->comm.n);
	free_regexes(f->include.v, f->include.n);
	free_regexes(f->exclude.v, f->exclude.n);
	hs_vec_free(&f->comm);
	hs_vec_free(&f->include);
	hs_vec_free(&f->exclude);
	hs_vec_free(&f->pids);
	hs_vec_free(&f->tids);
}

bool hs_filter_active(const struct hs_filter *f)
{
	return f->pids.n || f->tids.n || f->comm.n || f->include.n || f->exclude.n || f->time || f->min_percent > 0 ||
	       f->since;
}

int hs_filter_add_ids(struct hs_filter *f, bool tids, const char *list)
{
	const char *p = list;
	size_t n0 = tids ? f->tids.n : f->pids.n;

	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
			/* the ids of this list taken back: f as it was */
			if (tids)
				f->tids.n = n0;
			else
				f->pids.n = n0;
			return -EINVAL;
		}
		if (tids)
			hs_vec_push(&f->tids, (int32_t)v);
		else
			hs_vec_push(&f->pids, (int32_t)v);
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Seconds from 0 to 1e9, the len bytes at s, into *ret. */
static int parse_seconds(const char *s, size_t len, double *ret)
{
	char buf[64];

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	return hs_duration_parse(buf, 1, ret) || *ret > 1e9 ? -1 : 0;
}

int hs_filter_set_time(struct hs_filter *f, const char *window)
{
	const char *comma = strchr(window, ',');
	double start = 0, end = -1;

	if (!comma || (comma > window && parse_seconds(window, (size_t)(comma - window), &start)) ||
	    (comma[1] && parse_seconds(comma + 1, strlen(comma + 1), &end)) || (end >= 0 && end <= start))
		return -EINVAL;
	f->time = true;
	f->time_start = start;
	f->time_end = end;
	return 0;
}

int hs_filter_set_min_percent(struct hs_filter *f, const char *percent)
{
	char *end;
	double v = strtod(percent, &end);

	if (end == percent || *end || !(v >= 0) || v > 100)
		return -EINVAL;
	f->min_percent = v;
	return 0;
}

static bool any_match(const regex_t *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!regexec(&v[i], s, 0, NULL, 0))
			return true;
	return false;
}

static bool has_id(const int32_t *v, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

/* The function name of every frame of a stack, inlined ones included, matched against v. The
 * result is cached per name string: profiles repeat few names many times. */
struct name_cache {
	struct hs_u64map m; /* string id -> 1 match, 2 no match */
};

static bool name_matches(const struct hs_profile *p, const regex_t *v, size_t n, struct name_cache *c, uint32_t name)
{
	uint64_t r;

	if (!hs_u64map_get(&c->m, name, &r)) {
		r = any_match(v, n, name ? hs_profile_str(p, name) : "[unknown]") ? 1 : 2;
		hs_u64map_put(&c->m, name, r);
	}
	return r == 1;
}

static bool stack_matches(const struct hs_profile *p, uint32_t stack, const regex_t *v, size_t n,
			  struct name_cache *c)
{
	const struct hs_stack *st = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);

	for (uint32_t i = 0; i < st->nlocs; i++) {
		const struct hs_location *l = &p->locations.v[locs[i]];

		if (!l->nlines && name_matches(p, v, n, c, 0))
			return true;
		for (uint32_t j = 0; j < l->nlines; j++)
			if (name_matches(p, v, n, c, p->functions.v[p->lines.v[l->line0 + j].function].name))
				return true;
	}
	return false;
}

/* ---- copying what the kept samples refer to ---- */

/* The copy's header, with the value types first: samples need them. */
static void copy_header(struct hs_copier *c)
{
	const struct hs_profile *p = c->p;
	struct hs_profile *q = c->q;

	for (size_t i = 0; i < p->types.n; i++) {
		struct hs_value_type t = {hs_copy_str(c, p->types.v[i].type), hs_copy_str(c, p->types.v[i].unit)};
		hs_vec_push(&q->types, t);
	}
	for (size_t i = 0; i < p->type_events.n; i++)
		hs_vec_push(&q->type_events, hs_copy_str(c, p->type_events.v[i]));
	q->period_type.type = hs_copy_str(c, p->period_type.type);
	q->period_type.unit = hs_copy_str(c, p->period_type.unit);
	q->period = p->period;
	q->time_nanos = p->time_nanos;
	q->duration_nanos = p->duration_nanos;
	for (size_t i = 0; i < p->comments.n; i++)
		hs_vec_push(&q->comments, hs_copy_str(c, p->comments.v[i]));
	/* what reading the profile cut or held, still to be said about the copy */
	q->stacks_over_cap = p->stacks_over_cap;
	q->samples_over_cap = p->samples_over_cap;
	q->frames_over_cap = p->frames_over_cap;
	q->values_saturated = p->values_saturated;
}

/* ---- min_percent: the call tree of the kept samples ---- */

/* Nodes are (parent node, function name) pairs, found through a map keyed by both: the kind
 * of code is left out of the key, which at worst merges a kernel and a user function of the
 * same name in the share computed here. */
struct cut_tree {
	struct hs_u64map ix; /* parent << 32 | name -> node */
	HS_VEC(int64_t) total;
};

static uint32_t cut_node(struct cut_tree *t, uint32_t parent, uint32_t name, bool add)
{
	uint64_t key = (uint64_t)parent << 32 | name, id;

	if (hs_u64map_get(&t->ix, key, &id))
		return (uint32_t)id;
	if (!add)
		return UINT32_MAX;
	id = t->total.n;
	hs_vec_push(&t->total, 0);
	hs_u64map_put(&t->ix, key, id);
	return (uint32_t)id;
}

/* The function name id of frame j (innermost 0) of location l, 0 for a location with none. */
static uint32_t frame_name(const struct hs_profile *p, const struct hs_location *l, uint32_t j)
{
	return l->nlines ? p->functions.v[p->lines.v[l->line0 + j].function].name : 0;
}

static void cut_add(struct cut_tree *t, const struct hs_profile *p, uint32_t stack, int64_t v)
{
	const struct hs_stack *st = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);
	uint32_t node = 0; /* 0: the root, above every thread */

	for (uint32_t i = st->nlocs; i-- > 0;) {
		const struct hs_location *l = &p->locations.v[locs[i]];
		for (uint32_t j = l->nlines ? l->nlines : 1; j-- > 0;) {
			node = cut_node(t, node, frame_name(p, l, j), true);
			t->total.v[node] = hs_add_sat(t->total.v[node], v);
		}
	}
}

/* The new stack of a sample: frames from the root while their node holds at least thr, then
 * the pseudo-frame named small_name (its location made on first use, in *small_loc) for the
 * rest. */
static uint32_t cut_stack(struct hs_copier *c, struct cut_tree *t, uint32_t stack, double thr, const char *small_name,
			  uint32_t *small_loc)
{
	const struct hs_profile *p = c->p;
	const struct hs_stack *st = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);
	uint32_t node = 0, cut_loc = UINT32_MAX, cut_line = 0;

	for (uint32_t i = st->nlocs; i-- > 0 && cut_loc == UINT32_MAX;) {
		const struct hs_location *l = &p->locations.v[locs[i]];
		for (uint32_t j = l->nlines ? l->nlines : 1; j-- > 0;) {
			node = cut_node(t, node, frame_name(p, l, j), false);
			if (node == UINT32_MAX || (double)t->total.v[node] < thr) {
				cut_loc = i;
				cut_line = j;
				break;
			}
		}
	}
	if (cut_loc == UINT32_MAX)
		return hs_copy_stack(c, stack);
	c->locs.n = 0;
	/* leaf first: the pseudo-frame, then what is kept of the location cut inside its inline
	 * chain (its lines outside frame cut_line), then the whole locations towards the root */
	if (!*small_loc) {
		uint32_t fn = hs_profile_intern_str(c->q, small_name);
		fn = hs_profile_function(c->q, fn, fn, 0, 0);
		*small_loc = hs_profile_location(c->q, 0, 0, HS_KIND_PSEUDO, &(struct hs_line){fn, 0}, 1);
	}
	hs_vec_push(&c->locs, *small_loc);
	if (cut_line + 1 < p->locations.v[locs[cut_loc]].nlines)
		hs_vec_push(&c->locs, hs_copy_location(c, locs[cut_loc], cut_line + 1));
	for (uint32_t i = cut_loc + 1; i < st->nlocs; i++)
		hs_vec_push(&c->locs, hs_copy_location(c, locs[i], 0));
	return hs_profile_stack(c->q, c->locs.v, (uint32_t)c->locs.n);
}

/* ---- the filter ---- */

/* Whether sample i has values now that it did not have at f->since */
static bool added_since(const struct hs_profile *p, const struct hs_filter *f, uint32_t i)
{
	size_t nt = p->types.n, at = (size_t)i * nt;

	if (at + nt > f->nsince)
		return true;
	for (size_t k = 0; k < nt; k++)
		if (p->values.v[at + k] != f->since[at + k])
			return true;
	return false;
}

/* Sample i's values, less what it had at f->since (into scratch, room for one sample's) */
static const int64_t *sample_values(const struct hs_profile *p, const struct hs_filter *f, uint32_t i,
				    int64_t *scratch)
{
	size_t nt = p->types.n, at = (size_t)i * nt;

	if (!f->since || at + nt > f->nsince)
		return hs_profile_sample_values(p, i);
	for (size_t k = 0; k < nt; k++)
		scratch[k] = p->values.v[at + k] - f->since[at + k];
	return scratch;
}

int hs_profile_filter(const struct hs_profile *p, const struct hs_filter *f, struct hs_profile **ret)
{
	struct hs_profile *q;
	struct hs_copier c;
	struct name_cache inc = {{0}}, exc = {{0}};
	struct hs_u64map comm_ok = {0};
	struct cut_tree tree = {{0}};
	uint8_t *keep = hs_xcalloc(p->samples.n ? p->samples.n : 1, 1);
	uint64_t t0 = UINT64_MAX, tstart = 0, tend = UINT64_MAX;
	uint32_t vi = p->types.n && f->value_index < p->types.n ? f->value_index : 0;
	uint32_t small_loc = 0;
	int64_t *vals = hs_xcalloc(p->types.n + 1, sizeof(*vals));
	char small_name[64];
	bool cut = false;
	double thr = 0;

	if (f->time) {
		for (size_t i = 0; i < p->samples.n; i++)
			if (p->samples.v[i].time && p->samples.v[i].time < t0)
				t0 = p->samples.v[i].time;
		if (t0 == UINT64_MAX) {
			free(keep);
			free(vals);
			return -ENODATA;
		}
		tstart = t0 + (uint64_t)(HS_MAX(f->time_start, 0.0) * 1e9);
		if (f->time_end >= 0)
			tend = t0 + (uint64_t)(f->time_end * 1e9);
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		uint64_t ok;

		if (f->pids.n && !has_id(f->pids.v, f->pids.n, s->pid))
			continue;
		if (f->tids.n && !has_id(f->tids.v, f->tids.n, s->tid))
			continue;
		if (f->time && (!s->time || s->time < tstart || s->time >= tend))
			continue;
		if (f->comm.n) {
			if (!hs_u64map_get(&comm_ok, s->comm, &ok)) {
				ok = any_match(f->comm.v, f->comm.n, hs_profile_str(p, s->comm));
				hs_u64map_put(&comm_ok, s->comm, ok);
			}
			if (!ok)
				continue;
		}
		if (f->include.n && !stack_matches(p, s->stack, f->include.v, f->include.n, &inc))
			continue;
		if (f->exclude.n && stack_matches(p, s->stack, f->exclude.v, f->exclude.n, &exc))
			continue;
		if (f->since && !added_since(p, f, (uint32_t)i))
			continue;
		keep[i] = 1;
	}

	q = hs_profile_new();
	hs_copier_init(&c, p, q);
	copy_header(&c);
	if (f->min_percent > 0 && p->types.n) {
		int64_t total = 0;

		hs_vec_push(&tree.total, 0); /* node 0: the root */
		for (size_t i = 0; i < p->samples.n; i++) {
			if (!keep[i])
				continue;
			int64_t v = sample_values(p, f, (uint32_t)i, vals)[vi];
			total = hs_add_sat(total, v);
			cut_add(&tree, p, p->samples.v[i].stack, v);
		}
		thr = (double)total * f->min_percent / 100.0;
		snprintf(small_name, sizeof(small_name), HS_FILTER_SMALL_FMT, f->min_percent);
		cut = true;
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		uint32_t stack;

		if (!keep[i])
			continue;
		if (cut) {
			stack = cut_stack(&c, &tree, s->stack, thr, small_name, &small_loc);
		} else {
			stack = hs_copy_stack(&c, s->stack);
		}
		hs_profile_add_sample(q, stack, hs_copy_str(&c, s->comm), s->pid, s->tid, s->time,
				      sample_values(p, f, (uint32_t)i, vals));
	}
	if (p->main_mapping && p->main_mapping < p->mappings.n)
		q->main_mapping = c.map[p->main_mapping];
	hs_copier_release(&c);
	hs_u64map_release(&inc.m);
	hs_u64map_release(&exc.m);
	hs_u64map_release(&comm_ok);
	hs_u64map_release(&tree.ix);
	hs_vec_free(&tree.total);
	free(vals);
	free(keep);
	*ret = q;
	return 0;
}

/* ---- the main binary first ---- */

/* The mappings of the main binary's file, main first, at the file's own addresses. Two of them
 * that become equal (one program in several processes, each loaded elsewhere) become one, as do
 * their locations at the same address with the same lines. */
int hs_profile_main_first(const struct hs_profile *p, uint32_t main, struct hs_profile **ret)
{
	struct hs_profile *q;
	struct hs_copier c;
	const struct hs_mapping *mm;

	if (!main || main >= p->mappings.n)
		return -EINVAL;
	mm = &p->mappings.v[main];
	q = hs_profile_new();
	hs_copier_init(&c, p, q);
	copy_header(&c);
	c.shift = hs_xcalloc(p->mappings.n, sizeof(*c.shift));
	for (uint32_t k = 0; k < p->mappings.n; k++) {
		uint32_t i = k ? k : main; /* main first, then the others of its file in order */
		struct hs_mapping m = p->mappings.v[i];

		if ((k && i == main) || m.file != mm->file || m.kind != mm->kind)
			continue;
		c.shift[i] = m.elf_base;
		m.start -= m.elf_base;
		m.limit -= m.elf_base;
		m.elf_base = 0;
		m.file = hs_copy_str(&c, m.file);
		m.build_id = hs_copy_str(&c, m.build_id);
		c.map[i] = hs_profile_mapping(q, &m);
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		hs_profile_add_sample(q, hs_copy_stack(&c, s->stack), hs_copy_str(&c, s->comm), s->pid, s->tid, s->time,
				      hs_profile_sample_values(p, (uint32_t)i));
	}
	q->main_mapping = 1;
	hs_copier_release(&c);
	*ret = q;
	return 0;
}
