/* Stack expansion shared by the writers that merge stacks: frames and threads as people see them. */
#include "writers.h"

#include "util/strbuf.h"

#include <string.h>

const char *hs_frame_label(const struct hs_frame *f, const struct hs_output_opts *o, struct hs_strbuf *sb)
{
	if (!o->lines || !f->line || !*f->file)
		return f->name;
	hs_strbuf_reset(sb);
	hs_strbuf_addf(sb, "%s:%s:%lld", f->name, f->file, (long long)f->line);
	return hs_strbuf_str(sb);
}

uint32_t hs_output_value_index(const struct hs_profile *p, const struct hs_output_opts *o)
{
	if (!p->types.n)
		return 0;
	if (o->value_index < 0 || (size_t)o->value_index >= p->types.n)
		return 0;
	return (uint32_t)o->value_index;
}

size_t hs_location_frames(const struct hs_profile *p, uint32_t loc, struct hs_frame **frames, size_t *cap, size_t n)
{
	const struct hs_location *l = &p->locations.v[loc];
	uint32_t nl = l->nlines ? l->nlines : 1;
	const char *module = hs_profile_str(p, hs_profile_location_module(p, l));

	hs_xgrow((void **)frames, cap, n + nl, sizeof(**frames));
	if (!l->nlines) {
		(*frames)[n++] = (struct hs_frame){"[unknown]", "", module, 0, HS_KIND_PSEUDO, false};
		return n;
	}
	for (uint32_t j = l->nlines; j-- > 0;) {
		const struct hs_line *ln = &p->lines.v[l->line0 + j];
		const struct hs_function *fn = &p->functions.v[ln->function];
		(*frames)[n++] = (struct hs_frame){hs_profile_str(p, fn->name), hs_profile_str(p, fn->filename), module,
						   ln->line, l->kind, j + 1 < l->nlines};
	}
	return n;
}

size_t hs_stack_frames(const struct hs_profile *p, uint32_t stack, struct hs_frame **frames, size_t *cap)
{
	const struct hs_stack *s = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);
	size_t n = 0;

	for (uint32_t i = s->nlocs; i-- > 0;)
		n = hs_location_frames(p, locs[i], frames, cap, n);
	return n;
}

static uint64_t thread_key(const struct hs_sample *s)
{
	return (uint64_t)(uint32_t)s->pid << 32 | (uint32_t)s->tid;
}

void hs_thread_names_init(struct hs_thread_names *t, const struct hs_profile *p)
{
	*t = (struct hs_thread_names){0};
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		uint64_t prev;

		if (s->tid < 0)
			continue;
		if (!hs_u64map_get(&t->latest, thread_key(s), &prev) || p->samples.v[prev].time <= s->time)
			hs_u64map_put(&t->latest, thread_key(s), i);
	}
}

uint32_t hs_thread_name(const struct hs_thread_names *t, const struct hs_profile *p, const struct hs_sample *s)
{
	uint64_t latest;

	if (s->tid < 0 || !hs_u64map_get(&t->latest, thread_key(s), &latest))
		return s->comm;
	return p->samples.v[latest].comm;
}

void hs_thread_names_release(struct hs_thread_names *t)
{
	hs_u64map_release(&t->latest);
}
