/* Copying entries of one profile into another, each source id interned in the target once. */
#include "copy.h"

#include <stdlib.h>
#include <string.h>

void hs_copier_init(struct hs_copier *c, const struct hs_profile *p, struct hs_profile *q)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->q = q;
	c->str = hs_xcalloc(p->str_off.n, sizeof(*c->str));
	c->map = hs_xcalloc(p->mappings.n, sizeof(*c->map));
	c->func = hs_xcalloc(p->functions.n, sizeof(*c->func));
	c->loc = hs_xcalloc(p->locations.n, sizeof(*c->loc));
	hs_profile_reserve(q, p);
}

void hs_copier_release(struct hs_copier *c)
{
	free(c->str);
	free(c->map);
	free(c->func);
	free(c->loc);
	free(c->shift);
	hs_vec_free(&c->lines);
	hs_vec_free(&c->locs);
}

uint32_t hs_copy_str(struct hs_copier *c, uint32_t id)
{
	if (!id)
		return 0;
	if (!c->str[id])
		c->str[id] = hs_profile_intern(c->q, hs_profile_str(c->p, id), c->p->str_len.v[id]);
	return c->str[id];
}

uint32_t hs_copy_mapping(struct hs_copier *c, uint32_t id)
{
	if (id && !c->map[id]) {
		struct hs_mapping m = c->p->mappings.v[id];
		m.file = hs_copy_str(c, m.file);
		m.build_id = hs_copy_str(c, m.build_id);
		c->map[id] = hs_profile_mapping(c->q, &m);
	}
	return id ? c->map[id] : 0;
}

uint32_t hs_copy_function(struct hs_copier *c, uint32_t id)
{
	if (id && !c->func[id]) {
		const struct hs_function *f = &c->p->functions.v[id];
		c->func[id] = hs_profile_function(c->q, hs_copy_str(c, f->name), hs_copy_str(c, f->system_name),
						  hs_copy_str(c, f->filename), f->start_line);
	}
	return id ? c->func[id] : 0;
}

uint32_t hs_copy_location(struct hs_copier *c, uint32_t id, uint32_t first)
{
	const struct hs_location *l = &c->p->locations.v[id];
	uint32_t nl;

	if (!first && c->loc[id])
		return c->loc[id];
	c->lines.n = 0;
	for (uint32_t j = first; j < l->nlines; j++) {
		struct hs_line ln = {hs_copy_function(c, c->p->lines.v[l->line0 + j].function),
				     c->p->lines.v[l->line0 + j].line};
		hs_vec_push(&c->lines, ln);
	}
	nl = hs_profile_location(c->q, hs_copy_mapping(c, l->mapping),
				 l->address - (c->shift ? c->shift[l->mapping] : 0), l->kind, c->lines.v,
				 (uint32_t)c->lines.n);
	c->q->locations.v[nl].sym_off = l->sym_off;
	if (!first)
		c->loc[id] = nl;
	return nl;
}

uint32_t hs_copy_stack(struct hs_copier *c, uint32_t stack)
{
	const struct hs_stack *st = &c->p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(c->p, stack);

	c->locs.n = 0;
	for (uint32_t j = 0; j < st->nlocs; j++)
		hs_vec_push(&c->locs, hs_copy_location(c, locs[j], 0));
	return hs_profile_stack(c->q, c->locs.v, (uint32_t)c->locs.n);
}
