/* The text report: top functions by self and by total value, with percentages, in the spirit
 * of `perf report --children`, but on one page. */
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "util/hashmap.h"

struct report_fn {
	uint32_t name;   /* string id */
	uint32_t module; /* string id of the mapping file, 0 for none */
	int64_t self, total;
	uint64_t seen;   /* the stack that last added to total, so recursion counts once */
};

struct report_key {
	const struct report_fn *fns;
	uint32_t name, module;
};

static bool report_eq(const void *ctx, uint32_t id)
{
	const struct report_key *k = ctx;
	return k->fns[id].name == k->name && k->fns[id].module == k->module;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int by_self(const void *a, const void *b)
{
	const struct report_fn *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->total > y->total ? -1 : x->total < y->total;
}

static int by_total(const void *a, const void *b)
{
	const struct report_fn *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->self > y->self ? -1 : x->self < y->self;
}

static void print_table(const struct hs_profile *p, struct hs_outfile *out, struct report_fn *fns, size_t n,
			int top, int64_t sum, bool self_first)
{
	if (n)
		qsort(fns, n, sizeof(*fns), self_first ? by_self : by_total);
	hs_outfile_printf(out, "%8s %12s %8s %12s  %s\n", "self%", "self", "total%", "total", "function");
	for (size_t i = 0; i < n && (int)i < top; i++) {
		const struct report_fn *f = &fns[i];
		const char *mod = hs_profile_str(p, f->module);

		if ((self_first ? f->self : f->total) <= 0)
			break;
		hs_outfile_printf(out, "%7.2f%% %12lld %7.2f%% %12lld  %s", sum ? 100.0 * (double)f->self / (double)sum : 0.0,
				  (long long)f->self, sum ? 100.0 * (double)f->total / (double)sum : 0.0,
				  (long long)f->total, f->name ? hs_profile_str(p, f->name) : "[unknown]");
		if (*mod)
			hs_outfile_printf(out, "  [%s]", basename_of(mod));
		hs_outfile_puts(out, "\n");
	}
}

/* The pseudo-frames that end a stack that could not be finished (src/unwind/callchain.c). */
static const char *const stop_names[] = {
	"[truncated: stack copy]", "[no unwind info]", "[unmapped]", "[depth limit]",
};

struct ending {
	uint32_t reason; /* index in stop_names */
	uint32_t module; /* string id of the last module reached */
	int64_t value;
};

static int by_value(const void *a, const void *b)
{
	const struct ending *x = a, *y = b;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->value > y->value ? -1 : x->value < y->value;
}

/* How stacks end: complete, or cut for each reason, with the module where the walk stopped. */
static void print_endings(const struct hs_profile *p, struct hs_outfile *out, uint32_t vi, int64_t sum)
{
	HS_VEC(struct ending) ends = {0};
	int64_t by_reason[HS_ARRAY_SIZE(stop_names)] = {0}, complete = 0;

	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		int64_t v = hs_profile_sample_values(p, (uint32_t)si)[vi];
		const char *root = st->nlocs ? hs_profile_location_name(p, locs[st->nlocs - 1]) : "";
		size_t r;

		for (r = 0; r < HS_ARRAY_SIZE(stop_names); r++)
			if (!strcmp(root, stop_names[r]))
				break;
		if (r == HS_ARRAY_SIZE(stop_names)) {
			complete += v;
			continue;
		}
		by_reason[r] += v;
		{
			uint32_t module = 0;
			size_t i;
			if (st->nlocs >= 2) {
				const struct hs_location *l = &p->locations.v[locs[st->nlocs - 2]];
				module = l->mapping ? p->mappings.v[l->mapping].file : 0;
			}
			for (i = 0; i < ends.n; i++)
				if (ends.v[i].reason == r && ends.v[i].module == module)
					break;
			if (i == ends.n) {
				struct ending e = {(uint32_t)r, module, 0};
				hs_vec_push(&ends, e);
			}
			ends.v[i].value += v;
		}
	}
	hs_outfile_puts(out, "\nHow stacks end:\n");
	hs_outfile_printf(out, "%8s %12s  %s\n", "share", "samples", "ending");
	hs_outfile_printf(out, "%7.2f%% %12lld  complete (the outermost frame was reached)\n",
			  sum ? 100.0 * (double)complete / (double)sum : 0.0, (long long)complete);
	if (ends.n)
		qsort(ends.v, ends.n, sizeof(*ends.v), by_value);
	for (size_t r = 0; r < HS_ARRAY_SIZE(stop_names); r++) {
		if (!by_reason[r])
			continue;
		hs_outfile_printf(out, "%7.2f%% %12lld  %s\n", sum ? 100.0 * (double)by_reason[r] / (double)sum : 0.0,
				  (long long)by_reason[r], stop_names[r]);
		for (size_t i = 0; i < ends.n; i++) {
			const char *mod = hs_profile_str(p, ends.v[i].module);
			if (ends.v[i].reason != r)
				continue;
			hs_outfile_printf(out, "%8s %12lld      in %s\n", "", (long long)ends.v[i].value,
					  *mod ? basename_of(mod) : "[no module]");
		}
	}
	hs_vec_free(&ends);
}

int hs_write_report(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	HS_VEC(struct report_fn) fns = {0};
	struct hs_index ix = {0};
	uint32_t vi = hs_output_value_index(p, o);
	int top = o->top > 0 ? o->top : 20;
	int64_t sum = hs_profile_total(p, vi);
	struct hs_u64map pids = {0}, tids = {0};

	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		int64_t v = hs_profile_sample_values(p, (uint32_t)si)[vi];

		if (s->pid >= 0)
			hs_u64map_put(&pids, (uint32_t)s->pid, 1);
		if (s->tid >= 0)
			hs_u64map_put(&tids, ((uint64_t)(uint32_t)s->pid << 32) | (uint32_t)s->tid, 1);
		for (uint32_t li = 0; li < st->nlocs; li++) {
			const struct hs_location *l = &p->locations.v[locs[li]];
			uint32_t module = l->mapping ? p->mappings.v[l->mapping].file : 0;
			uint32_t nl = l->nlines ? l->nlines : 1;

			for (uint32_t j = 0; j < nl; j++) {
				uint32_t name = l->nlines ? p->functions.v[p->lines.v[l->line0 + j].function].name
							  : 0; /* printed as [unknown] */
				struct report_key k = {fns.v, name, module};
				uint64_t h = hs_hash_combine(hs_hash_u64(name), module);
				uint32_t id = hs_index_find(&ix, h, report_eq, &k);

				if (id == UINT32_MAX) {
					struct report_fn f = {name, module, 0, 0, UINT64_MAX};
					id = (uint32_t)fns.n;
					hs_vec_push(&fns, f);
					hs_index_insert(&ix, h, id);
				}
				if (li == 0 && j == 0)
					fns.v[id].self += v;
				if (fns.v[id].seen != si) {
					fns.v[id].seen = si;
					fns.v[id].total += v;
				}
			}
		}
	}

	hs_outfile_printf(out, "# %lld %s", (long long)sum, hs_profile_str(p, p->types.n ? p->types.v[vi].type : 0));
	if (p->types.n && strcmp(hs_profile_str(p, p->types.v[vi].unit), "count"))
		hs_outfile_printf(out, " (%s)", hs_profile_str(p, p->types.v[vi].unit));
	hs_outfile_printf(out, " in %zu distinct stacks", p->stacks.n - 1);
	if (pids.n) /* folded input has no process information */
		hs_outfile_printf(out, ", %zu threads, %zu processes", tids.n, pids.n);
	hs_outfile_puts(out, "\n");
	for (size_t i = 0; i < p->comments.n; i++)
		hs_outfile_printf(out, "# %s\n", hs_profile_str(p, p->comments.v[i]));
	hs_outfile_puts(out, "\nTop functions by self:\n");
	print_table(p, out, fns.v, fns.n, top, sum, true);
	hs_outfile_puts(out, "\nTop functions by total (self and callees):\n");
	print_table(p, out, fns.v, fns.n, top, sum, false);
	if (o->stats)
		print_endings(p, out, vi, sum);

	hs_u64map_release(&pids);
	hs_u64map_release(&tids);
	hs_index_release(&ix);
	hs_vec_free(&fns);
	return out->err ? -out->err : 0;
}
