/* The report as JSON, for scripts and agents: what was measured (value type and unit, total,
 * the profile's comments), the top functions by self and by total, the threads with their
 * names, and the call tree; docs/formats.md gives the schema. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

static double share(int64_t v, int64_t sum)
{
	return sum ? 100.0 * (double)v / (double)sum : 0.0;
}

static void add_str(struct hs_outfile *out, struct hs_strbuf *sb, const char *s)
{
	hs_strbuf_reset(sb);
	hs_json_add(sb, s);
	hs_outfile_write(out, sb->buf, sb->len);
}

/* A function's place: "name", "module" and, where it has one, "file" and "line". */
static void add_place(const struct hs_profile *p, struct hs_outfile *out, struct hs_strbuf *sb, const char *name,
		      uint32_t module, uint32_t file, int64_t line)
{
	hs_outfile_puts(out, "\"name\":");
	add_str(out, sb, name);
	hs_outfile_puts(out, ",\"module\":");
	add_str(out, sb, hs_profile_str(p, module));
	if (line) {
		hs_outfile_puts(out, ",\"file\":");
		add_str(out, sb, hs_profile_str(p, file));
		hs_outfile_printf(out, ",\"line\":%lld", (long long)line);
	}
}

static void add_fns(const struct hs_profile *p, struct hs_outfile *out, struct hs_strbuf *sb, struct hs_report_fns *fns,
		    bool self_first, int top, int64_t sum)
{
	size_t shown = 0;

	hs_report_fns_sort(fns, self_first);
	hs_outfile_puts(out, "[");
	for (size_t i = 0; i < fns->n && (int)i < top; i++) {
		const struct hs_report_fn *f = &fns->v[i];

		if ((self_first ? f->self : f->total) <= 0)
			break;
		hs_outfile_puts(out, shown++ ? ",\n  {" : "\n  {");
		add_place(p, out, sb, f->name ? hs_profile_str(p, f->name) : "[unknown]", f->module, f->file, f->line);
		hs_outfile_printf(out, ",\"self\":%lld,\"self_percent\":%.4f,\"total\":%lld,\"total_percent\":%.4f}",
				  (long long)f->self, share(f->self, sum), (long long)f->total, share(f->total, sum));
	}
	hs_outfile_puts(out, shown ? "\n ]" : "]");
}

struct json_thread {
	int32_t pid, tid;
	uint32_t comm;
	int64_t value;
};

static int thread_cmp(const void *a, const void *b)
{
	const struct json_thread *x = a, *y = b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void add_threads(const struct hs_profile *p, struct hs_outfile *out, struct hs_strbuf *sb, uint32_t vi, int top,
			int64_t sum)
{
	HS_VEC(struct json_thread) th = {0};
	struct hs_u64map ix = {0};
	struct hs_thread_names names;

	hs_thread_names_init(&names, p);

	for (size_t si = 0; si < p->samples.n; si++) {
		const struct hs_sample *s = &p->samples.v[si];
		uint64_t key = ((uint64_t)(uint32_t)s->pid << 32) | (uint32_t)s->tid, i;

		if (s->tid < 0)
			continue;
		if (!hs_u64map_get(&ix, key, &i)) {
			i = th.n;
			hs_vec_push(&th, ((struct json_thread){s->pid, s->tid, hs_thread_name(&names, p, s), 0}));
			hs_u64map_put(&ix, key, i);
		}
		th.v[i].value = hs_add_sat(th.v[i].value, hs_profile_sample_values(p, (uint32_t)si)[vi]);
	}
	if (th.n)
		qsort(th.v, th.n, sizeof(*th.v), thread_cmp);
	hs_outfile_puts(out, "[");
	for (size_t i = 0; i < th.n && (int)i < top; i++) {
		hs_outfile_printf(out, "%s\n  {\"pid\":%d,\"tid\":%d,\"name\":", i ? "," : "", (int)th.v[i].pid,
				  (int)th.v[i].tid);
		add_str(out, sb, hs_profile_str(p, th.v[i].comm));
		hs_outfile_printf(out, ",\"value\":%lld,\"percent\":%.4f}", (long long)th.v[i].value,
				  share(th.v[i].value, sum));
	}
	hs_outfile_puts(out, th.n ? "\n ]" : "]");
	hs_u64map_release(&ix);
	hs_thread_names_release(&names);
	hs_vec_free(&th);
}

struct json_frame {
	uint32_t node; /* UINT32_MAX: close the node above */
	bool first;    /* the first child written of its parent */
};

/* The tree without recursion: a hostile profile's stacks can be as deep as its frame cap. */
static void add_tree(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out,
		     struct hs_strbuf *sb, uint32_t vi, int64_t sum)
{
	struct hs_report_tree t;
	HS_VEC(struct json_frame) work = {0};
	double limit = o->tree_min > 0 ? o->tree_min : o->tree_min < 0 ? 0 : 0.5;

	hs_report_tree_build(p, vi, o->tree == HS_TREE_CALLEE, o->lines, &t);
	hs_vec_push(&work, ((struct json_frame){0, true}));
	while (work.n) {
		struct json_frame f = work.v[--work.n];
		const struct hs_report_node *n;
		bool first = true;
		size_t mark;

		if (f.node == UINT32_MAX) {
			hs_outfile_puts(out, "]}");
			continue;
		}
		n = &t.nodes.v[f.node];
		hs_outfile_puts(out, f.first ? "{" : ",{");
		add_place(p, out, sb, f.node ? (n->name ? hs_profile_str(p, n->name) : "[unknown]") : "all", n->module,
			  n->file, n->line);
		hs_outfile_printf(out, ",\"self\":%lld,\"total\":%lld,\"total_percent\":%.4f,\"children\":[",
				  (long long)n->self, (long long)n->total, share(n->total, sum));
		hs_vec_push(&work, ((struct json_frame){UINT32_MAX, false}));
		/* children worth writing, pushed last first */
		mark = work.n;
		for (uint32_t c = t.child_start[f.node]; c < t.child_start[f.node + 1]; c++) {
			const struct hs_report_node *k = &t.nodes.v[t.child_ids[c]];
			if (k->total > 0 && share(k->total, sum) >= limit) {
				hs_vec_push(&work, ((struct json_frame){t.child_ids[c], first}));
				first = false;
			}
		}
		for (size_t i = mark, j = work.n - 1; i < j; i++, j--) {
			struct json_frame x = work.v[i];
			work.v[i] = work.v[j];
			work.v[j] = x;
		}
	}
	hs_vec_free(&work);
	hs_report_tree_release(&t);
}

int hs_write_json(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_report_fns fns = {0};
	struct hs_strbuf sb = {0};
	uint32_t vi = hs_output_value_index(p, o);
	int top = o->top > 0 ? o->top : 20;
	int64_t sum = hs_profile_total(p, vi);

	hs_outfile_puts(out, "{\"format\":\"hotstack-report\",\"version\":1,\n \"value\":{\"type\":");
	add_str(out, &sb, p->types.n ? hs_profile_str(p, p->types.v[vi].type) : "samples");
	hs_outfile_puts(out, ",\"unit\":");
	add_str(out, &sb, p->types.n ? hs_profile_str(p, p->types.v[vi].unit) : "count");
	hs_outfile_printf(out, "},\n \"total\":%lld,\"stacks\":%zu,\n \"comments\":[", (long long)sum, p->stacks.n - 1);
	for (size_t i = 0; i < p->comments.n; i++) {
		if (i)
			hs_outfile_puts(out, ",");
		add_str(out, &sb, hs_profile_str(p, p->comments.v[i]));
	}
	hs_outfile_puts(out, "],\n \"top_self\":");
	hs_report_fns(p, vi, o->lines, &fns);
	add_fns(p, out, &sb, &fns, true, top, sum);
	hs_outfile_puts(out, ",\n \"top_total\":");
	add_fns(p, out, &sb, &fns, false, top, sum);
	hs_outfile_puts(out, ",\n \"threads\":");
	add_threads(p, out, &sb, vi, top, sum);
	if (o->tree == HS_TREE_OFF) { /* -g none */
		hs_outfile_puts(out, ",\n \"tree_order\":\"none\",\n \"tree\":null");
	} else {
		hs_outfile_printf(out, ",\n \"tree_order\":\"%s\",\n \"tree\":",
				  o->tree == HS_TREE_CALLEE ? "callee" : "caller");
		add_tree(p, o, out, &sb, vi, sum);
	}
	hs_outfile_puts(out, "}\n");
	hs_strbuf_release(&sb);
	hs_vec_free(&fns);
	return out->err ? -out->err : 0;
}
