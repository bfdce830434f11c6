/* The tables of hotstack top: each function's self and total value in each process and thread
 * name, with kernel frames shown or left out, and the callers and callees of one. Counted as the
 * reports count (src/output/report-data.c): a function's total once a sample, whatever its
 * recursion. */
#include "top-data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Whose a row is: the sample's thread name (interned) and process. */
struct owner {
	const char *comm;
	int32_t pid;
};

struct fn_key {
	const struct hs_top_fns *fns;
	const struct frame *f;
	const struct owner *o;
};

static bool fn_eq(const void *ctx, uint32_t id)
{
	const struct fn_key *k = ctx;
	const struct hs_top_fn *fn = &k->fns->v[id];

	return fn->name == k->f->name && fn->module == k->f->module && fn->comm == k->o->comm &&
	       fn->pid == k->o->pid;
}

/* The row of frame f of o's in s, made when new. */
static struct hs_top_fn *fn_get(struct fn_set *s, const struct frame *f, const struct owner *o)
{
	struct fn_key k = {s->fns, f, o};
	uint64_t h = hs_hash_combine(hs_hash_combine(hs_hash_u64((uintptr_t)f->name), (uintptr_t)f->module),
				     hs_hash_combine((uintptr_t)o->comm, (uint32_t)o->pid));
	uint32_t id = hs_index_find(&s->ix, h, fn_eq, &k);

	if (id == UINT32_MAX) {
		id = (uint32_t)s->fns->n;
		hs_vec_push(s->fns, ((struct hs_top_fn){f->name, f->module, o->comm, o->pid, f->kind, 0, 0, 0}));
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

static int cmp_i64_desc(int64_t x, int64_t y)
{
	return x == y ? 0 : x > y ? -1 : 1;
}

/* The last of every order: a total order, so that rows keep their places between draws. */
static int cmp_rest(const struct hs_top_fn *x, const struct hs_top_fn *y)
{
	int c;

	if ((c = cmp_i64_desc(x->self, y->self)) || (c = cmp_i64_desc(x->total, y->total)))
		return c;
	if ((c = strcmp(x->name, y->name)) || (c = strcmp(x->module, y->module)) || (c = strcmp(x->comm, y->comm)))
		return c;
	return x->pid == y->pid ? 0 : x->pid < y->pid ? -1 : 1;
}

static int by_self(const void *a, const void *b)
{
	return cmp_rest(a, b);
}

static int by_total(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;
	int c = cmp_i64_desc(x->total, y->total);

	return c ? c : cmp_rest(x, y);
}

static int by_pid(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return cmp_rest(x, y);
}

static int by_comm(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	return c ? c : cmp_rest(x, y);
}

static int by_sym(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : cmp_rest(x, y);
}

static int by_dso(const void *a, const void *b)
{
	const struct hs_top_fn *x = a, *y = b;
	int c = strcmp(hs_top_module_name(x->module), hs_top_module_name(y->module));

	return c ? c : cmp_rest(x, y);
}

static int (*const sorts[HS_TOP_SORT_N])(const void *, const void *) = {
	by_self, by_total, by_pid, by_comm, by_sym, by_dso,
};

/* perf's names first, then hotstack's own */
static const char *const sort_names[][3] = {
	{"self", "overhead", NULL}, {"total", "children", NULL}, {"pid", NULL, NULL},
	{"comm", NULL, NULL},       {"sym", "symbol", NULL},     {"dso", "module", NULL},
};

int hs_top_sort_parse(const char *name, enum hs_top_sort *ret)
{
	for (size_t i = 0; i < HS_TOP_SORT_N; i++)
		for (size_t j = 0; j < 3 && sort_names[i][j]; j++)
			if (!strcasecmp(name, sort_names[i][j])) {
				*ret = (enum hs_top_sort)i;
				return 0;
			}
	return -EINVAL;
}

const char *hs_top_sort_name(enum hs_top_sort s)
{
	return s < HS_TOP_SORT_N ? sort_names[s][0] : "self";
}

bool hs_top_comm_in(const char *list, const char *comm)
{
	size_t n = strlen(comm);

	if (!list || !*list)
		return true;
	for (const char *at = list;; at++) {
		const char *end = strchrnul(at, ',');

		if ((size_t)(end - at) == n && !memcmp(at, comm, n))
			return true;
		if (!*end)
			return false;
		at = end;
	}
}

/* Whether o's filters keep the samples of w's. */
static bool owner_kept(const struct hs_top_opts *o, const struct owner *w)
{
	return (!o->by_pid || w->pid == o->pid) && hs_top_comm_in(o->comm, w->comm);
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
		const struct hs_sample *sa = &p->samples.v[si];
		struct owner w = {hs_profile_str(p, sa->comm), sa->pid};
		int64_t v = p->types.n ? hs_profile_sample_values(p, (uint32_t)si)[o->vi] : 0;
		struct hs_top_fn *leaf;

		stack_frames(p, sa->stack, o->hide_kernel, &f);
		if (!f.n)
			continue;
		/* shares stay of every sample, as perf's (absolute) percentages under its filters */
		t->sum = hs_add_sat(t->sum, v);
		count_cut(t, by_reason, stop_reason(p, sa->stack), v);
		if (!owner_kept(o, &w))
			continue;
		for (size_t i = 0; i < f.n; i++)
			add_total(fn_get(&s, &f.v[i], &w), si, v);
		leaf = fn_get(&s, &f.v[f.n - 1], &w);
		leaf->self = hs_add_sat(leaf->self, v);
	}
	for (size_t r = 1; r < HS_ARRAY_SIZE(stop_names); r++)
		top = by_reason[r] > by_reason[top] ? r : top;
	t->cut_reason = by_reason[top] ? stop_names[top][1] : NULL;
	apply_filter(&t->fns, o->filter);
	if (t->fns.n)
		qsort(t->fns.v, t->fns.n, sizeof(*t->fns.v), sorts[o->sort < HS_TOP_SORT_N ? o->sort : 0]);
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

void hs_top_related_build(const struct hs_profile *p, const struct hs_top_opts *o, const struct hs_top_fn *fn,
			  struct hs_top_related *ret)
{
	struct fn_set callers = {&ret->callers, {0}}, callees = {&ret->callees, {0}};
	const char *want = interned(p, fn->name), *want_module = interned(p, fn->module);
	struct owner w = {interned(p, fn->comm), fn->pid};
	struct frames f = {0};

	memset(ret, 0, sizeof(*ret));
	for (size_t si = 0; si < p->samples.n && want && want_module && w.comm; si++) {
		const struct hs_sample *sa = &p->samples.v[si];
		int64_t v = p->types.n ? hs_profile_sample_values(p, (uint32_t)si)[o->vi] : 0;
		bool in = false;

		if (sa->pid != w.pid || hs_profile_str(p, sa->comm) != w.comm)
			continue;
		stack_frames(p, sa->stack, o->hide_kernel, &f);
		for (size_t i = 0; i < f.n; i++) {
			if (f.v[i].name != want || f.v[i].module != want_module)
				continue;
			in = true;
			if (i > 0)
				add_total(fn_get(&callers, &f.v[i - 1], &w), si, v);
			if (i + 1 < f.n)
				add_total(fn_get(&callees, &f.v[i + 1], &w), si, v);
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

const char *hs_top_owner(const struct hs_top_fn *f, char *buf, size_t cap)
{
	if (f->pid < 0)
		snprintf(buf, cap, "%s", f->comm);
	else
		snprintf(buf, cap, "%d:%s", (int)f->pid, f->comm);
	return buf;
}

void hs_top_header(enum hs_top_sort sort, int procw, int namew, char *buf, size_t cap)
{
	char pid[8], comm[8];

	snprintf(pid, sizeof(pid), "%s", sort == HS_TOP_SORT_PID ? "PID" : "pid");
	snprintf(comm, sizeof(comm), "%s", sort == HS_TOP_SORT_COMM ? "COMM" : "comm");
	snprintf(buf, cap, "%7s %7s  %s:%-*s %-4s %-*s %s", sort == HS_TOP_SORT_SELF ? "SELF%" : "self%",
		 sort == HS_TOP_SORT_TOTAL ? "TOTAL%" : "total%", pid, procw > 4 ? procw - 4 : 0, comm, "", namew,
		 sort == HS_TOP_SORT_SYM ? "FUNCTION" : "function", sort == HS_TOP_SORT_DSO ? "MODULE" : "module");
}

uint32_t hs_top_value_index(const struct hs_profile *p)
{
	int i = hs_profile_find_type(p, "samples");

	return i < 0 ? 0 : (uint32_t)i;
}
