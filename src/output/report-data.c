/* What the text report, the JSON report, the text diff and the annotation of a function count
 * from a profile: each function's self and total value (by source line when asked), and the
 * call tree of functions. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

struct fn_key {
	const struct hs_report_fn *fns;
	struct hs_report_fn k;
};

static bool fn_eq(const void *ctx, uint32_t id)
{
	const struct fn_key *k = ctx;
	const struct hs_report_fn *f = &k->fns[id];

	return f->name == k->k.name && f->module == k->k.module && f->file == k->k.file && f->line == k->k.line;
}

void hs_report_fns(const struct hs_profile *p, uint32_t vi, bool by_line, struct hs_report_fns *ret)
{
	struct hs_index ix = {0};

	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		int64_t v = hs_profile_sample_values(p, (uint32_t)si)[vi];

		for (uint32_t li = 0; li < st->nlocs; li++) {
			const struct hs_location *l = &p->locations.v[locs[li]];
			uint32_t nl = l->nlines ? l->nlines : 1;

			for (uint32_t j = 0; j < nl; j++) {
				const struct hs_line *ln = l->nlines ? &p->lines.v[l->line0 + j] : NULL;
				struct fn_key k = {ret->v, {0}};
				uint64_t h;
				uint32_t id;

				k.k.name = ln ? p->functions.v[ln->function].name : 0; /* printed as [unknown] */
				k.k.module = hs_profile_location_module(p, l);
				if (by_line && ln && ln->line) {
					k.k.file = p->functions.v[ln->function].filename;
					k.k.line = ln->line;
				}
				h = hs_hash_combine(hs_hash_combine(hs_hash_u64(k.k.name), k.k.module),
						    hs_hash_combine(k.k.file, (uint64_t)k.k.line));
				id = hs_index_find(&ix, h, fn_eq, &k);
				if (id == UINT32_MAX) {
					k.k.seen = UINT64_MAX;
					id = (uint32_t)ret->n;
					hs_vec_push(ret, k.k);
					hs_index_insert(&ix, h, id);
				}
				if (li == 0 && j == 0)
					ret->v[id].self = hs_add_sat(ret->v[id].self, v);
				/* recursion counts once */
				if (ret->v[id].seen != si) {
					ret->v[id].seen = si;
					ret->v[id].total = hs_add_sat(ret->v[id].total, v);
				}
			}
		}
	}
	hs_index_release(&ix);
}

static int by_self(const void *a, const void *b)
{
	const struct hs_report_fn *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->total > y->total ? -1 : x->total < y->total;
}

static int by_total(const void *a, const void *b)
{
	const struct hs_report_fn *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->self > y->self ? -1 : x->self < y->self;
}

void hs_report_fns_sort(struct hs_report_fns *f, bool self_first)
{
	if (f->n)
		qsort(f->v, f->n, sizeof(*f->v), self_first ? by_self : by_total);
}

/* ---- the call tree ---- */

struct node_key {
	const struct hs_report_node *nodes;
	struct hs_report_node n; /* name, module, parent, file, line */
};

static bool node_eq(const void *ctx, uint32_t id)
{
	const struct node_key *k = ctx;
	const struct hs_report_node *n = &k->nodes[id];
	return n->name == k->n.name && n->module == k->n.module && n->parent == k->n.parent && n->file == k->n.file &&
	       n->line == k->n.line;
}

static uint32_t node_child(struct hs_report_tree *t, struct hs_index *ix, uint32_t parent,
			   const struct hs_report_node *frame)
{
	struct node_key k = {t->nodes.v, *frame};
	uint64_t h;
	uint32_t id;

	k.n.parent = parent;
	h = hs_hash_combine(hs_hash_combine(hs_hash_u64(parent), k.n.name),
			    hs_hash_combine(k.n.module, hs_hash_combine(k.n.file, (uint64_t)k.n.line)));
	id = hs_index_find(ix, h, node_eq, &k);
	if (id == UINT32_MAX) {
		id = (uint32_t)t->nodes.n;
		hs_vec_push(&t->nodes, k.n);
		hs_index_insert(ix, h, id);
	}
	return id;
}

static const struct hs_report_node *sort_nodes;

static int node_cmp(const void *a, const void *b)
{
	const struct hs_report_node *x = &sort_nodes[*(const uint32_t *)a], *y = &sort_nodes[*(const uint32_t *)b];
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void hs_report_tree_build(const struct hs_profile *p, uint32_t vi, bool callers, bool by_line, struct hs_report_tree *t)
{
	HS_VEC(struct hs_report_node) path = {0}; /* the frames, leaf first */
	struct hs_index ix = {0};
	uint32_t *fill;

	memset(t, 0, sizeof(*t));
	hs_vec_push(&t->nodes, ((struct hs_report_node){0, 0, UINT32_MAX, hs_profile_total(p, vi), 0, 0, 0}));
	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		int64_t v = hs_profile_sample_values(p, (uint32_t)si)[vi];
		uint32_t node = 0;

		path.n = 0;
		for (uint32_t li = 0; li < st->nlocs; li++) {
			const struct hs_location *l = &p->locations.v[locs[li]];
			for (uint32_t j = 0; j < (l->nlines ? l->nlines : 1); j++) {
				const struct hs_line *ln = l->nlines ? &p->lines.v[l->line0 + j] : NULL;
				struct hs_report_node n = {0};

				n.name = ln ? p->functions.v[ln->function].name : 0;
				n.module = hs_profile_location_module(p, l);
				if (by_line && ln && ln->line) {
					n.file = p->functions.v[ln->function].filename;
					n.line = ln->line;
				}
				hs_vec_push(&path, n);
			}
		}
		for (size_t f = 0; f < path.n; f++) {
			size_t at = callers ? f : path.n - 1 - f;
			node = node_child(t, &ix, node, &path.v[at]);
			t->nodes.v[node].total = hs_add_sat(t->nodes.v[node].total, v);
			if (callers && f == 0)
				t->nodes.v[node].self = hs_add_sat(t->nodes.v[node].self, v); /* the innermost frame */
		}
		if (node && !callers)
			t->nodes.v[node].self = hs_add_sat(t->nodes.v[node].self, v);
	}
	t->child_start = hs_xcalloc(t->nodes.n + 1, sizeof(*t->child_start));
	t->child_ids = hs_xmalloc(t->nodes.n * sizeof(*t->child_ids));
	fill = hs_xmalloc((t->nodes.n + 1) * sizeof(*fill));
	for (size_t i = 1; i < t->nodes.n; i++)
		t->child_start[t->nodes.v[i].parent + 1]++;
	for (size_t i = 0; i < t->nodes.n; i++)
		t->child_start[i + 1] += t->child_start[i];
	memcpy(fill, t->child_start, (t->nodes.n + 1) * sizeof(*fill));
	for (size_t i = 1; i < t->nodes.n; i++)
		t->child_ids[fill[t->nodes.v[i].parent]++] = (uint32_t)i;
	sort_nodes = t->nodes.v;
	for (size_t i = 0; i < t->nodes.n; i++)
		if (t->child_start[i + 1] - t->child_start[i] > 1)
			qsort(t->child_ids + t->child_start[i], t->child_start[i + 1] - t->child_start[i],
			      sizeof(*t->child_ids), node_cmp);
	free(fill);
	hs_index_release(&ix);
	hs_vec_free(&path);
}

void hs_report_tree_release(struct hs_report_tree *t)
{
	free(t->child_start);
	free(t->child_ids);
	hs_vec_free(&t->nodes);
}
