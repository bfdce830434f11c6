/* The folded-stack table of hotstack collapse: lines interned by their bytes, Perl's counts,
 * and the sorted writing (stack-table.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/stack-table.h"

void hs_perl_count_add(struct hs_perl_count *c, const struct hs_perl_count *v)
{
	if (!c->nv && !v->nv && c->u <= UINT64_MAX - v->u) {
		c->u += v->u;
		return;
	}
	c->d = (c->nv ? c->d : (double)c->u) + (v->nv ? v->d : (double)v->u);
	c->nv = true;
}

struct line_key {
	const struct hs_stack_table *t;
	const char *p;
	size_t n;
};

static bool line_eq(const void *ctx, uint32_t id)
{
	const struct line_key *k = ctx;
	const struct hs_stack_line *s = &k->t->lines.v[id];

	return s->len == k->n && !memcmp(k->t->keys + s->off, k->p, k->n);
}

uint32_t hs_stack_table_add(struct hs_stack_table *t, const char *p, size_t n, const struct hs_perl_count *v)
{
	struct line_key k = {t, p, n};
	uint64_t h = hs_hash_mem(p, n);
	uint32_t id = hs_index_find(&t->ix, h, line_eq, &k);
	struct hs_stack_line s;

	if (id != UINT32_MAX) {
		hs_perl_count_add(&t->lines.v[id].n, v);
		return id;
	}
	if (t->lines.n >= UINT32_MAX - 1)
		hs_die_oom();
	hs_xgrow((void **)&t->keys, &t->keys_cap, t->keys_len + n, 1);
	memcpy(t->keys + t->keys_len, p, n);
	s.off = t->keys_len;
	s.len = n;
	s.n = *v;
	t->keys_len += n;
	hs_vec_push(&t->lines, s);
	hs_index_insert(&t->ix, h, (uint32_t)(t->lines.n - 1));
	return (uint32_t)(t->lines.n - 1);
}

void hs_stack_table_count(struct hs_stack_table *t, uint32_t id, const struct hs_perl_count *v)
{
	hs_perl_count_add(&t->lines.v[id].n, v);
}

/* Perl's sort { $a cmp $b }: bytes compared unsigned, a prefix first. */
static int line_cmp(const void *a, const void *b, void *ctx)
{
	const struct hs_stack_table *t = ctx;
	const struct hs_stack_line *x = &t->lines.v[*(const uint32_t *)a];
	const struct hs_stack_line *y = &t->lines.v[*(const uint32_t *)b];
	int d = memcmp(t->keys + x->off, t->keys + y->off, HS_MIN(x->len, y->len));

	if (d)
		return d;
	return x->len < y->len ? -1 : x->len > y->len;
}

void hs_stack_table_write(const struct hs_stack_table *t, struct hs_outfile *of)
{
	uint32_t *order = hs_xmalloc((t->lines.n ? t->lines.n : 1) * sizeof(*order));

	for (size_t i = 0; i < t->lines.n; i++)
		order[i] = (uint32_t)i;
	if (t->lines.n > 1)
		qsort_r(order, t->lines.n, sizeof(*order), line_cmp, (void *)t);
	for (size_t i = 0; i < t->lines.n && !of->err; i++) {
		const struct hs_stack_line *s = &t->lines.v[order[i]];
		char num[48];
		int k;

		hs_outfile_write(of, t->keys + s->off, s->len);
		if (s->n.nv)
			k = snprintf(num, sizeof(num), " %.15g\n", s->n.d); /* how Perl prints a double */
		else
			k = snprintf(num, sizeof(num), " %" PRIu64 "\n", s->n.u);
		hs_outfile_write(of, num, (size_t)k);
	}
	free(order);
}

void hs_stack_table_release(struct hs_stack_table *t)
{
	hs_vec_free(&t->lines);
	free(t->keys);
	hs_index_release(&t->ix);
}
