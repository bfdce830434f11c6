/* The tables of hotstack top: each function's self and total value, with kernel frames shown
 * or left out, and the callers and callees of one function. Counted as the reports count
 * (src/output/report-data.c): a function's total once a sample, whatever its recursion. */
#include "top-data.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

static const char unknown[] = "[unknown]";

/* The pseudo-frames that end a stack the unwinder could not finish (hs_stop_name(),
 * src/unwind/callchain.c), and what the status line calls them. */
static const char *const stop_names[][2] = {
	{"[truncated: stack copy]", "stack copy"}, {"[no unwind info]", "no unwind info"},
	{"[bad frame pointer]", "bad frame pointer"}, {"[bad frame]", "bad frame"},
	{"[unmapped]", "unmapped"}, {"[depth limit]", "depth limit"},
};

struct frame {
	const char *name, *module; /* interned: equal strings are the same pointer */
	uint8_t kind;
};

struct frames {
	struct frame *v;
	size_t n, cap;
};

/* The frames of a stack, root first, each inline line a frame; kernel ones left out with
 * hide_kernel. */
static void stack_frames(const struct hs_profile *p, uint32_t stack, bool hide_kernel, struct frames *f)
{
	const struct hs_stack *st = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);

	f->n = 0;
	for (uint32_t i = st->nlocs; i-- > 0;) {
		const struct hs_location *l = &p->locations.v[locs[i]];
		const char *module = hs_profile_str(p, hs_profile_location_module(p, l));

		if (hide_kernel && l->kind == HS_KIND_KERNEL)
			continue;
		if (!l->nlines) {
			hs_vec_push(f, ((struct frame){unknown, module, HS_KIND_PSEUDO}));
			continue;
		}
		for (uint32_t j = l->nlines; j-- > 0;) {
			const struct hs_function *fn = &p->functions.v[p->lines.v[l->line0 + j].function];
			const char *name = fn->name ? hs_profile_str(p, fn->name) : unknown;

			hs_vec_push(f, ((struct frame){name, module, l->kind}));
		}
	}
}

struct fn_set {
	struct hs_top_fns *fns;
	struct hs_index ix;
};

struct fn_key {
	const struct hs_top_fns *fns;
	const struct frame *f;
};

static bool fn_eq(const void *ctx, uint32_t id)
{
	const struct fn_key *k = ctx;

	return k->fns->v[id].name == k->f->name && k->fns->v[id].module == k->f->module;
}

/* The entry of frame f in s, made when new. */
static struct hs_top_fn *fn_get(struct fn_set *s, const struct frame *f)
{
	struct fn_key k = {s->fns, f};
	uint64_t h = hs_hash_combine(hs_hash_u64((uintptr_t)f->name), (uintptr_t)f->module);
	uint32_t id = hs_index_find(&s->ix, h, fn_eq, &k);

	if (id == UINT32_MAX) {
		id = (uint32_t)s->fns->n;
		hs_vec_push(s->fns, ((struct hs_top_fn){f->name, f->module, f->kind, 0, 0, 0}));
		hs_index_insert(&s->ix, h, id);
	}
	return &s->fns->v[id];
}

/* Adds v to fn's total unless sample si did already. */
static void add_total(struct hs_top_fn *fn, size_t si, int64_t v)
{
	if (fn->seen == si + 1)
		return;
	fn->seen = si + 1;
	fn->total = hs_add_sat(fn->total, v);
}

static int cmp_names(const struct hs_top_fn *x, const struct hs_top_fn *y)
{
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->module, y->module);
}

static int by_self(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return cmp_names(x, y);
}

static int by_total(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return cmp_names(x, y);
}

/* The index in stop_names of the reason the stack ends in, or -1 when it is complete. */
static int stop_reason(const struct hs_profile *p, uint32_t stack)
{
	const struct hs_stack *st = &p->stacks.v[stack];
	const struct hs_location *l;
	const char *name;

	if (!st->nlocs)
		return -1;
	l = &p->locations.v[hs_profile_stack_locs(p, stack)[st->nlocs - 1]];
	if (l->kind != HS_KIND_PSEUDO || l->mapping || !l->nlines)
		return -1;
	name = hs_profile_location_name(p, hs_profile_stack_locs(p, stack)[st->nlocs - 1]);
	for (size_t r = 0; r < HS_ARRAY_SIZE(stop_names); r++)
		if (!strcmp(name, stop_names[r][0]))
			return (int)r;
	return -1;
}

static void count_cut(struct hs_top_table *t, int64_t by_reason[], int r, int64_t v)
{
	if (r < 0)
		return;
	t->cut = hs_add_sat(t->cut, v);
	by_reason[r] = hs_add_sat(by_reason[r], v);
}

/* Keeps the functions whose name holds filter, in any case. */
static void apply_filter(struct hs_top_fns *fns, const char *filter)
{
	size_t n = 0;

	if (!filter || !*filter)
		return;
	for (size_t i = 0; i < fns->n; i++)
		if (strcasestr(fns->v[i].name, filter))
			fns->v[n++] = fns->v[i];
	fns->n = n;
}

void hs_top_table_build(const struct hs_profile *p, const struct hs_top_opts *o, struct hs_top_table *t)
{
	struct fn_set s = {&t->fns, {0}};
	struct frames f = {0};
	int64_t by_reason[HS_ARRAY_SIZE(stop_names)] = {0};
	size_t top = 0;

	memset(t, 0, sizeof(*t));
	for (size_t si = 0; si < p->samples.n; si++) {
		uint32_t stack = p->samples.v[si].stack;
		int64_t v = p->types.n ? hs_profile_sample_values(p, (uint32_t)si)[o->vi] : 0;

		stack_frames(p, stack, o->hide_kernel, &f);
		if (!f.n)
			continue;
		t->sum = hs_add_sat(t->sum, v);
		count_cut(t, by_reason, stop_reason(p, stack), v);
		for (size_t i = 0; i < f.n; i++)
			add_total(fn_get(&s, &f.v[i]), si, v);
		fn_get(&s, &f.v[f.n - 1])->self = hs_add_sat(fn_get(&s, &f.v[f.n - 1])->self, v);
	}
	for (size_t r = 1; r < HS_ARRAY_SIZE(stop_names); r++)
		top = by_reason[r] > by_reason[top] ? r : top;
	t->cut_reason = by_reason[top] ? stop_names[top][1] : NULL;
	apply_filter(&t->fns, o->filter);
	if (t->fns.n)
		qsort(t->fns.v, t->fns.n, sizeof(*t->fns.v), o->by_total ? by_total : by_self);
	hs_index_release(&s.ix);
	hs_vec_free(&f);
}

void hs_top_table_release(struct hs_top_table *t)
{
	hs_vec_free(&t->fns);
}

/* The pointer p interns s at (as stack_frames() gives them), NULL when p does not hold it. */
static const char *interned(const struct hs_profile *p, const char *s)
{
	uint32_t id;

	if (!strcmp(s, unknown))
		return unknown;
	id = hs_profile_find_str(p, s, strlen(s));
	return id == UINT32_MAX ? NULL : hs_profile_str(p, id);
}

void hs_top_related_build(const struct hs_profile *p, const struct hs_top_opts *o, const char *name,
			  const char *module, struct hs_top_related *ret)
{
	struct fn_set callers = {&ret->callers, {0}}, callees = {&ret->callees, {0}};
	const char *want = interned(p, name), *want_module = interned(p, module);
	struct frames f = {0};

	memset(ret, 0, sizeof(*ret));
	for (size_t si = 0; si < p->samples.n && want && want_module; si++) {
		int64_t v = p->types.n ? hs_profile_sample_values(p, (uint32_t)si)[o->vi] : 0;
		bool in = false;

		stack_frames(p, p->samples.v[si].stack, o->hide_kernel, &f);
		for (size_t i = 0; i < f.n; i++) {
			if (f.v[i].name != want || f.v[i].module != want_module)
				continue;
			in = true;
			if (i > 0)
				add_total(fn_get(&callers, &f.v[i - 1]), si, v);
			if (i + 1 < f.n)
				add_total(fn_get(&callees, &f.v[i + 1]), si, v);
		}
		if (in)
			ret->total = hs_add_sat(ret->total, v);
	}
	if (ret->callers.n)
		qsort(ret->callers.v, ret->callers.n, sizeof(*ret->callers.v), by_total);
	if (ret->callees.n)
		qsort(ret->callees.v, ret->callees.n, sizeof(*ret->callees.v), by_total);
	hs_index_release(&callers.ix);
	hs_index_release(&callees.ix);
	hs_vec_free(&f);
}

void hs_top_related_release(struct hs_top_related *r)
{
	hs_vec_free(&r->callers);
	hs_vec_free(&r->callees);
}

const char *hs_top_kind_mark(uint8_t kind)
{
	static const char *const marks[] = {"[.]", "[k]", "[j]", "[?]", "[py]"};

	return kind < HS_ARRAY_SIZE(marks) ? marks[kind] : "[?]";
}

const char *hs_top_module_name(const char *module)
{
	const char *slash = strrchr(module, '/');

	return *module == '[' || !slash ? module : slash + 1;
}

uint32_t hs_top_value_index(const struct hs_profile *p)
{
	int i = hs_profile_find_type(p, "samples");

	return i < 0 ? 0 : (uint32_t)i;
}
