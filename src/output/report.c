/* The text report: top functions by self and by total value, with percentages, in the spirit
 * of `perf report --children`, but on one page; or rows grouped by command, process, thread,
 * module and function (--sort); a call tree (--tree); how stacks end and where samples land
 * (--stats). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The functions by self (self_first) or by total; totals: with the total columns. */
static void print_table(const struct hs_profile *p, struct hs_outfile *out, struct hs_report_fns *fns, int top,
			int64_t sum, bool self_first, bool totals, const char *unit)
{
	char b1[HS_VALUE_BUF], b2[HS_VALUE_BUF];
	size_t n = fns->n;

	hs_report_fns_sort(fns, self_first);
	if (totals)
		hs_outfile_printf(out, "%8s %12s %8s %12s  %s\n", "self%", "self", "total%", "total", "function");
	else
		hs_outfile_printf(out, "%8s %12s  %s\n", "self%", "self", "function");
	for (size_t i = 0; i < n && (int)i < top; i++) {
		const struct hs_report_fn *f = &fns->v[i];
		const char *mod = hs_profile_str(p, f->module);

		if ((self_first ? f->self : f->total) <= 0)
			break;
		hs_outfile_printf(out, "%7.2f%% %12s ", sum ? 100.0 * (double)f->self / (double)sum : 0.0,
				  hs_value_fmt(b1, f->self, unit));
		if (totals)
			hs_outfile_printf(out, "%7.2f%% %12s ", sum ? 100.0 * (double)f->total / (double)sum : 0.0,
					  hs_value_fmt(b2, f->total, unit));
		hs_outfile_printf(out, " %s", f->name ? hs_profile_str(p, f->name) : "[unknown]");
		if (f->line)
			hs_outfile_printf(out, " %s:%lld", f->file ? basename_of(hs_profile_str(p, f->file)) : "??",
					  (long long)f->line);
		if (*mod)
			hs_outfile_printf(out, *mod == '[' ? "  %s" : "  [%s]", basename_of(mod));
		hs_outfile_puts(out, "\n");
	}
}

/* The pseudo-frames that end a stack that could not be finished (src/unwind/callchain.c). */
static const char *const stop_names[] = {
	"[truncated: stack copy]", "[no unwind info]", "[bad frame pointer]",
	"[bad frame]",             "[unmapped]",       "[depth limit]",
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
static void print_endings(const struct hs_profile *p, struct hs_outfile *out, uint32_t vi, int64_t sum,
			  const char *unit)
{
	char b[HS_VALUE_BUF];
	const char *col = hs_unit_ns(unit) ? "time" : "samples";

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
			complete = hs_add_sat(complete, v);
			continue;
		}
		by_reason[r] = hs_add_sat(by_reason[r], v);
		{
			uint32_t module = 0;
			size_t i;
			if (st->nlocs >= 2) {
				const struct hs_location *l = &p->locations.v[locs[st->nlocs - 2]];
				module = hs_profile_location_module(p, l);
			}
			for (i = 0; i < ends.n; i++)
				if (ends.v[i].reason == r && ends.v[i].module == module)
					break;
			if (i == ends.n) {
				struct ending e = {(uint32_t)r, module, 0};
				hs_vec_push(&ends, e);
			}
			ends.v[i].value = hs_add_sat(ends.v[i].value, v);
		}
	}
	hs_outfile_puts(out, "\nHow stacks end:\n");
	hs_outfile_printf(out, "%8s %12s  %s\n", "share", col, "ending");
	hs_outfile_printf(out, "%7.2f%% %12s  complete (the outermost frame was reached)\n",
			  sum ? 100.0 * (double)complete / (double)sum : 0.0, hs_value_fmt(b, complete, unit));
	if (ends.n)
		qsort(ends.v, ends.n, sizeof(*ends.v), by_value);
	for (size_t r = 0; r < HS_ARRAY_SIZE(stop_names); r++) {
		if (!by_reason[r])
			continue;
		hs_outfile_printf(out, "%7.2f%% %12s  %s\n", sum ? 100.0 * (double)by_reason[r] / (double)sum : 0.0,
				  hs_value_fmt(b, by_reason[r], unit), stop_names[r]);
		for (size_t i = 0; i < ends.n; i++) {
			const char *mod = hs_profile_str(p, ends.v[i].module);
			if (ends.v[i].reason != r)
				continue;
			hs_outfile_printf(out, "%8s %12s      in %s\n", "", hs_value_fmt(b, ends.v[i].value, unit),
					  *mod ? basename_of(mod) : "[no module]");
		}
	}
	hs_vec_free(&ends);
}

static double pct(int64_t v, int64_t sum)
{
	return sum ? 100.0 * (double)v / (double)sum : 0.0;
}

/* The function name (string id, 0 for none) and module (hs_profile_location_module()) of
 * line j (innermost 0) of location l. */
static uint32_t line_name(const struct hs_profile *p, const struct hs_location *l, uint32_t j)
{
	return l->nlines ? p->functions.v[p->lines.v[l->line0 + j].function].name : 0;
}

static uint32_t loc_module(const struct hs_profile *p, const struct hs_location *l)
{
	return hs_profile_location_module(p, l);
}

/* ---- where samples land (--stats) ---- */

struct landing {
	uint32_t module;
	int64_t value;
};

static int landing_cmp(const void *a, const void *b)
{
	const struct landing *x = a, *y = b;
	return x->value > y->value ? -1 : x->value < y->value;
}

static void print_landing(const struct hs_profile *p, struct hs_outfile *out, uint32_t vi, int64_t sum,
			  const char *unit)
{
	char b[HS_VALUE_BUF];
	const char *col = hs_unit_ns(unit) ? "time" : "samples";
	static const char *const kinds[HS_KIND_COUNT] = {"user", "kernel", "JIT", "other (placeholders, stack endings)", "Python",
								   "Java interpreted", "Java C1", "Java C2",
								   "JavaScript interpreted", "JavaScript baseline",
								   "JavaScript optimized", "V8 builtin", "Ruby", "PHP", "Perl"};
	int64_t by_kind[HS_KIND_COUNT] = {0};
	HS_VEC(struct landing) mods = {0};
	struct hs_u64map ix = {0};

	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		int64_t v = hs_profile_sample_values(p, (uint32_t)si)[vi];
		const struct hs_location *l = st->nlocs ? &p->locations.v[hs_profile_stack_locs(p, s->stack)[0]] : NULL;
		uint32_t module = l ? loc_module(p, l) : 0;
		int kind = l && l->kind < HS_KIND_COUNT ? l->kind : HS_KIND_PSEUDO;
		uint64_t m;

		by_kind[kind] = hs_add_sat(by_kind[kind], v);
		if (!hs_u64map_get(&ix, module, &m)) {
			m = mods.n;
			hs_vec_push(&mods, ((struct landing){module, 0}));
			hs_u64map_put(&ix, module, m);
		}
		mods.v[m].value = hs_add_sat(mods.v[m].value, v);
	}
	hs_outfile_puts(out, "\nWhere samples land (the innermost frame), by kind of code:\n");
	hs_outfile_printf(out, "%8s %12s  %s\n", "share", col, "kind");
	for (int k = 0; k < HS_KIND_COUNT; k++)
		if (by_kind[k])
			hs_outfile_printf(out, "%7.2f%% %12s  %s\n", pct(by_kind[k], sum),
					  hs_value_fmt(b, by_kind[k], unit), kinds[k]);
	if (mods.n)
		qsort(mods.v, mods.n, sizeof(*mods.v), landing_cmp);
	hs_outfile_puts(out, "\nby module:\n");
	hs_outfile_printf(out, "%8s %12s  %s\n", "share", col, "module");
	for (size_t i = 0; i < mods.n && i < 20; i++) {
		const char *mod = hs_profile_str(p, mods.v[i].module);
		if (mods.v[i].value <= 0)
			break;
		hs_outfile_printf(out, "%7.2f%% %12s  %s\n", pct(mods.v[i].value, sum),
				  hs_value_fmt(b, mods.v[i].value, unit), *mod ? mod : "[no module]");
	}
	hs_u64map_release(&ix);
	hs_vec_free(&mods);
}

/* ---- --sort: rows grouped by keys ---- */

struct group {
	int64_t key[HS_SORT_MAX + 1]; /* the keys, then with --lines and sym the source line (srcline()) */
	int64_t self, total;
	uint64_t seen;
	size_t order;  /* of first appearance: ties keep it */
	uint32_t comm; /* the thread's name (--sort tid shows it): hs_thread_name() */
};

struct group_key {
	const struct group *rows;
	const int64_t *key;
	size_t nkeys;
};

static bool group_eq(const void *ctx, uint32_t id)
{
	const struct group_key *k = ctx;
	return !memcmp(k->rows[id].key, k->key, k->nkeys * sizeof(*k->key));
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

/* --children: rows by total first */
static int group_cmp_total(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return group_cmp(a, b);
}

static const char *sort_key_title(uint8_t k)
{
	switch (k) {
	case HS_SORT_COMM: return "command";
	case HS_SORT_PID: return "pid";
	case HS_SORT_TID: return "tid";
	case HS_SORT_DSO: return "shared object";
	default: return "symbol";
	}
}

/* A frame's source line as one key (perf's srcline beside sym): the file's string id and the
 * line; 0 when unknown. */
static int64_t srcline(const struct hs_profile *p, const struct hs_location *l, uint32_t j)
{
	const struct hs_line *ln = l->nlines ? &p->lines.v[l->line0 + j] : NULL;

	if (!ln || !ln->line)
		return 0;
	return (int64_t)((uint64_t)p->functions.v[ln->function].filename << 32 | (uint32_t)ln->line);
}

/* The text of key k of a row (of a symbol with line, a srcline() or 0), in sb. */
static const char *group_cell(const struct hs_profile *p, uint8_t k, int64_t v, uint32_t comm, int64_t line,
			      struct hs_strbuf *sb)
{
	const char *s;

	hs_strbuf_reset(sb);
	switch (k) {
	case HS_SORT_PID:
	case HS_SORT_TID:
		if (v < 0)
			return "?";
		hs_strbuf_addf(sb, "%lld", (long long)v);
		/* as perf's -s pid (a row per thread, TID:comm): the thread's own name (pthread_setname_np, prctl) */
		if (k == HS_SORT_TID && *hs_profile_str(p, comm))
			hs_strbuf_addf(sb, ":%s", hs_profile_str(p, comm));
		return hs_strbuf_str(sb);
	case HS_SORT_COMM:
		s = hs_profile_str(p, (uint32_t)v);
		return *s ? s : "[unknown]";
	case HS_SORT_DSO:
		s = hs_profile_str(p, (uint32_t)v);
		return *s ? basename_of(s) : "[unknown]";
	default:
		s = v ? hs_profile_str(p, (uint32_t)v) : "[unknown]";
		if (!line)
			return s;
		s = hs_profile_str(p, (uint32_t)((uint64_t)line >> 32));
		hs_strbuf_addf(sb, "%s %s:%u", v ? hs_profile_str(p, (uint32_t)v) : "[unknown]",
			       *s ? basename_of(s) : "??", (unsigned)line);
		return hs_strbuf_str(sb);
	}
}

/* Same layout as HS_VEC(struct group), named so that it can be passed around. */
struct group_vec {
	struct group *v;
	size_t n, cap;
};

static void group_add(struct group_vec *rows, struct hs_index *ix, const int64_t *key, size_t nkeys, int64_t v,
		      bool self, uint64_t sample, uint32_t comm)
{
	struct group_key k = {rows->v, key, nkeys};
	uint64_t h = hs_hash_bytes(key, nkeys * sizeof(*key), 0x50f7);
	uint32_t id = hs_index_find(ix, h, group_eq, &k);

	if (id == UINT32_MAX) {
		struct group g = {{0}, 0, 0, UINT64_MAX, rows->n, comm};
		memcpy(g.key, key, nkeys * sizeof(*key));
		id = (uint32_t)rows->n;
		hs_vec_push(rows, g);
		hs_index_insert(ix, h, id);
	}
	if (self)
		rows->v[id].self = hs_add_sat(rows->v[id].self, v);
	if (rows->v[id].seen != sample) {
		rows->v[id].seen = sample;
		rows->v[id].total = hs_add_sat(rows->v[id].total, v);
	}
}

static void print_groups(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out,
			 uint32_t vi, int64_t sum, int top, const char *unit)
{
	char b1[HS_VALUE_BUF], b2[HS_VALUE_BUF];
	struct group_vec rows = {0};
	struct hs_index ix = {0};
	struct hs_strbuf sb = {0};
	struct hs_thread_names names;
	size_t nkeys = 0, width[HS_SORT_MAX] = {0};
	bool frame_keys = false, by_line = false,
	     totals = o->children != HS_CHILDREN_OFF; /* --no-children: self only */

	while (nkeys < HS_SORT_MAX && o->sort[nkeys]) {
		frame_keys |= o->sort[nkeys] == HS_SORT_DSO || o->sort[nkeys] == HS_SORT_SYM;
		by_line |= o->lines && o->sort[nkeys] == HS_SORT_SYM; /* perf's -s sym,srcline */
		nkeys++;
	}
	hs_thread_names_init(&names, p);
	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		const struct hs_stack *st = &p->stacks.v[s->stack];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		int64_t v = hs_profile_sample_values(p, (uint32_t)si)[vi];
		int64_t key[HS_SORT_MAX + 1];
		uint32_t nl0 = 1;

		/* every frame gives a row (self for the innermost), or the sample one row when no key
		 * is a frame's */
		for (uint32_t li = 0; li < (frame_keys ? HS_MAX(st->nlocs, 1) : 1); li++) {
			const struct hs_location *l = st->nlocs ? &p->locations.v[locs[li]] : &p->locations.v[0];
			nl0 = l->nlines ? l->nlines : 1;
			for (uint32_t j = 0; j < (frame_keys ? nl0 : 1); j++) {
				for (size_t k = 0; k < nkeys; k++) {
					switch (o->sort[k]) {
					case HS_SORT_COMM: key[k] = s->comm; break;
					case HS_SORT_PID: key[k] = s->pid; break;
					case HS_SORT_TID: key[k] = s->tid; break;
					case HS_SORT_DSO: key[k] = loc_module(p, l); break;
					default: key[k] = line_name(p, l, j); break;
					}
				}
				if (by_line)
					key[nkeys] = srcline(p, l, j);
				group_add(&rows, &ix, key, nkeys + by_line, v, li == 0 && j == 0, si,
					  hs_thread_name(&names, p, s));
			}
		}
	}
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), o->children == HS_CHILDREN_ON ? group_cmp_total : group_cmp);
	for (size_t k = 0; k < nkeys; k++)
		width[k] = strlen(sort_key_title(o->sort[k]));
	for (size_t i = 0; i < rows.n && (int)i < top; i++)
		for (size_t k = 0; k + 1 < nkeys; k++)
			width[k] = HS_MAX(width[k],
					  HS_MIN(strlen(group_cell(p, o->sort[k], rows.v[i].key[k], rows.v[i].comm,
								   by_line ? rows.v[i].key[nkeys] : 0, &sb)),
						 40));

	hs_outfile_puts(out, "\nGrouped by ");
	for (size_t k = 0; k < nkeys; k++)
		hs_outfile_printf(out, "%s%s", k ? "," : "", sort_key_title(o->sort[k]));
	if (!totals) {
		hs_outfile_printf(out, " (self: samples whose innermost frame it is):\n%8s %12s", "self%", "self");
	} else {
		hs_outfile_printf(out, " (self: samples whose innermost frame it is; total: samples it is in):\n");
		hs_outfile_printf(out, "%8s %12s %8s %12s", "self%", "self", "total%", "total");
	}
	for (size_t k = 0; k < nkeys; k++)
		hs_outfile_printf(out, "  %-*s", k + 1 < nkeys ? (int)width[k] : 0, sort_key_title(o->sort[k]));
	hs_outfile_puts(out, "\n");
	for (size_t i = 0; i < rows.n && (int)i < top; i++) {
		const struct group *g = &rows.v[i];
		if (g->self <= 0 && (g->total <= 0 || !totals))
			break;
		hs_outfile_printf(out, "%7.2f%% %12s", pct(g->self, sum), hs_value_fmt(b1, g->self, unit));
		if (totals)
			hs_outfile_printf(out, " %7.2f%% %12s", pct(g->total, sum), hs_value_fmt(b2, g->total, unit));
		for (size_t k = 0; k < nkeys; k++)
			hs_outfile_printf(out, "  %-*s", k + 1 < nkeys ? (int)width[k] : 0,
					  group_cell(p, o->sort[k], g->key[k], g->comm, by_line ? g->key[nkeys] : 0,
						     &sb));
		hs_outfile_puts(out, "\n");
	}
	hs_strbuf_release(&sb);
	hs_index_release(&ix);
	hs_thread_names_release(&names);
	hs_vec_free(&rows);
}

/* ---- --tree: the call tree ---- */

struct tframe {
	uint32_t node;
	uint32_t depth;
	bool last; /* the last child of its parent that is printed */
};

static void print_tree(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out,
		       uint32_t vi, int64_t sum)
{
	struct hs_report_tree tree;
	HS_VEC(uint32_t) kids = {0};
	HS_VEC(struct tframe) worklist = {0};
	HS_VEC(char) open = {0}; /* per depth: an ancestor there has later siblings ('|') */
	double limit = o->tree_min > 0 ? o->tree_min : o->tree_min < 0 ? 0 : 0.5;
	bool callers = o->tree == HS_TREE_CALLEE; /* from the leaves up: callers under callees */
	const struct hs_report_node *nodes;
	const uint32_t *child_start, *child_ids;

	hs_report_tree_build(p, vi, callers, o->lines, &tree);
	nodes = tree.nodes.v;
	child_start = tree.child_start;
	child_ids = tree.child_ids;
	hs_outfile_printf(out, "\nCall tree, %s", callers ? "callers under the functions they called" : "callees under their callers");
	if (limit > 0)
		hs_outfile_printf(out, " (lines under %g%% of the total left out)", limit);
	hs_outfile_printf(out, ":\n%8s %8s  %s\n", "total%", "self%", "function");
	hs_vec_push(&worklist, ((struct tframe){0, 0, true}));
	while (worklist.n) {
		struct tframe t = worklist.v[--worklist.n];
		const struct hs_report_node *n = &nodes[t.node];
		size_t nk;

		if (t.node) {
			const struct hs_report_node *par = &nodes[n->parent];
			const char *mod = hs_profile_str(p, n->module);

			/* in a tree of callers, only the functions at the top have self time to show */
			if (callers && t.depth > 1)
				hs_outfile_printf(out, "%7.2f%% %8s  ", pct(n->total, sum), "");
			else
				hs_outfile_printf(out, "%7.2f%% %7.2f%%  ", pct(n->total, sum), pct(n->self, sum));
			for (uint32_t d = 2; d < t.depth; d++)
				hs_outfile_puts(out, open.v[d] ? "|   " : "    ");
			if (t.depth > 0 && n->parent)
				hs_outfile_puts(out, t.last ? "`-- " : "|-- ");
			hs_outfile_puts(out, n->name ? hs_profile_str(p, n->name) : "[unknown]");
			if (n->line)
				hs_outfile_printf(out, " %s:%lld",
						  n->file ? basename_of(hs_profile_str(p, n->file)) : "??",
						  (long long)n->line);
			if (*mod && (!n->parent || par->module != n->module))
				hs_outfile_printf(out, *mod == '[' ? "  %s" : "  [%s]", basename_of(mod));
			hs_outfile_puts(out, "\n");
		}
		/* children worth a line, pushed last first */
		kids.n = 0;
		for (uint32_t c = child_start[t.node]; c < child_start[t.node + 1]; c++)
			if (pct(nodes[child_ids[c]].total, sum) >= limit && nodes[child_ids[c]].total > 0)
				hs_vec_push(&kids, child_ids[c]);
		nk = kids.n;
		hs_vec_reserve(&open, t.depth + 2);
		while (open.n < t.depth + 2)
			hs_vec_push(&open, 0);
		if (t.node)
			open.v[t.depth] = !t.last;
		for (size_t k = nk; k-- > 0;)
			hs_vec_push(&worklist, ((struct tframe){kids.v[k], t.node ? t.depth + 1 : 1, k + 1 == nk}));
	}
	hs_report_tree_release(&tree);
	hs_vec_free(&kids);
	hs_vec_free(&worklist);
	hs_vec_free(&open);
}

int hs_write_report(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_report_fns fns = {0};
	uint32_t vi = hs_output_value_index(p, o);
	int top = o->top > 0 ? o->top : 20;
	int64_t sum = hs_profile_total(p, vi);
	const char *unit = p->types.n ? hs_profile_str(p, p->types.v[vi].unit) : "";
	struct hs_u64map pids = {0}, tids = {0};

	if (o->annotate)
		return hs_write_annotate(p, o, out);
	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];

		if (s->pid >= 0)
			hs_u64map_put(&pids, (uint32_t)s->pid, 1);
		if (s->tid >= 0)
			hs_u64map_put(&tids, ((uint64_t)(uint32_t)s->pid << 32) | (uint32_t)s->tid, 1);
	}

	if (hs_unit_ns(unit)) {
		char b[HS_VALUE_BUF];
		hs_outfile_printf(out, "# %s %s (%lld %s)", hs_value_fmt(b, sum, unit),
				  hs_profile_str(p, p->types.v[vi].type), (long long)sum, unit);
	} else {
		hs_outfile_printf(out, "# %lld %s", (long long)sum,
				  hs_profile_str(p, p->types.n ? p->types.v[vi].type : 0));
		if (p->types.n && strcmp(unit, "count"))
			hs_outfile_printf(out, " (%s)", unit);
	}
	hs_outfile_printf(out, " in %zu distinct stacks", p->stacks.n - 1);
	if (pids.n) /* folded input has no process information */
		hs_outfile_printf(out, ", %zu thread%s, %zu process%s", tids.n, tids.n == 1 ? "" : "s", pids.n,
				  pids.n == 1 ? "" : "es");
	hs_outfile_puts(out, "\n");
	for (size_t i = 0; i < p->comments.n; i++)
		hs_outfile_printf(out, "# %s\n", hs_profile_str(p, p->comments.v[i]));
	hs_report_fns(p, vi, o->lines, &fns);
	if (o->sort[0]) {
		print_groups(p, o, out, vi, sum, top, unit);
	} else {
		if (o->children != HS_CHILDREN_ON) {
			hs_outfile_puts(out, "\nTop functions by self:\n");
			print_table(p, out, &fns, top, sum, true, o->children != HS_CHILDREN_OFF, unit);
		}
		if (o->children != HS_CHILDREN_OFF) {
			hs_outfile_puts(out, "\nTop functions by total (self and callees):\n");
			print_table(p, out, &fns, top, sum, false, true, unit);
		}
	}
	if (o->tree == HS_TREE_CALLER || o->tree == HS_TREE_CALLEE)
		print_tree(p, o, out, vi, sum);
	if (o->stats) {
		print_endings(p, out, vi, sum, unit);
		print_landing(p, out, vi, sum, unit);
	}

	hs_u64map_release(&pids);
	hs_u64map_release(&tids);
	hs_vec_free(&fns);
	return out->err ? -out->err : 0;
}
