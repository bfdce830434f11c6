/* Folded stacks, the FlameGraph text format: "root;caller;...;leaf count", one line per
 * distinct stack, lines sorted as stackcollapse-perf.pl sorts them. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

struct folded_key {
	const struct hs_folded_line *lines;
	const char *text;
	size_t len;
};

static bool folded_eq(const void *ctx, uint32_t id)
{
	const struct folded_key *k = ctx;
	return k->lines[id].len == k->len && !memcmp(k->lines[id].text, k->text, k->len);
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hs_folded_line *)a)->text, ((const struct hs_folded_line *)b)->text);
}

/* Separators of the format cannot appear inside a frame. */
static void add_name(struct hs_strbuf *sb, const char *s)
{
	while (*s) {
		size_t run = strcspn(s, ";\n\r");

		hs_strbuf_add(sb, s, run);
		s += run;
		if (*s)
			hs_strbuf_addc(sb, *s++ == ';' ? ':' : ' ');
	}
}

void hs_folded_root(const struct hs_profile *p, const struct hs_output_opts *o, const struct hs_thread_names *names,
		    const struct hs_sample *s, struct hs_strbuf *sb)
{
	const char *c = hs_profile_str(p, o->root_tid ? hs_thread_name(names, p, s) : s->comm);

	if (!*c)
		c = "[unknown]";
	for (; *c; c++)
		hs_strbuf_addc(sb, *c == ' ' ? '_' : *c == ';' ? ':' : *c);
	if (o->root_tid)
		hs_strbuf_addf(sb, "-%d/%d", (int)s->pid, (int)s->tid);
	else if (o->root_pid)
		hs_strbuf_addf(sb, "-%d", (int)s->pid);
}

/* Where a location's text is in the texts of a hs_folded_lines() call. */
struct span {
	uint32_t off; /* UINT32_MAX: not made yet */
	uint32_t len;
};

/* What follows a frame's name: the suffixes of async-profiler and stackcollapse-perf.pl --all
 * (_[k] kernel, _[j] JIT and Java compiled by C2, _[1] C1, _[0] interpreted, _[i] inlined: a
 * Java method's always, other code's with --inline-annotate), and for JavaScript alike (_[0]
 * interpreted, _[1] baseline, _[j] optimised, _[b] V8's builtins). */
static const char *suffix(const struct hs_output_opts *o, const struct hs_frame *f)
{
	bool rt = f->kind == HS_KIND_JAVA_INTERP || f->kind == HS_KIND_JAVA_C1 || f->kind == HS_KIND_JAVA_C2 ||
		  f->kind == HS_KIND_JS_INTERP || f->kind == HS_KIND_JS_BASELINE || f->kind == HS_KIND_JS_OPT;

	if (f->inlined && (o->annotate_inline || (rt && !o->no_annotate)))
		return "_[i]";
	if (o->no_annotate)
		return "";
	switch (f->kind) {
	case HS_KIND_KERNEL: return "_[k]";
	case HS_KIND_JIT:
	case HS_KIND_JAVA_C2:
	case HS_KIND_JS_OPT: return "_[j]";
	case HS_KIND_JAVA_C1:
	case HS_KIND_JS_BASELINE: return "_[1]";
	case HS_KIND_JAVA_INTERP:
	case HS_KIND_JS_INTERP: return "_[0]";
	case HS_KIND_JS_BUILTIN: return "_[b]";
	default: return "";
	}
}

/* The text of location loc's frames, each after a ';', added to texts (made once per location:
 * most are in many stacks); *span says where. */
static void location_text(const struct hs_profile *p, const struct hs_output_opts *o, uint32_t loc,
			  struct hs_strbuf *texts, struct span *span, struct hs_frame **frames, size_t *fcap,
			  struct hs_strbuf *label)
{
	size_t nf = hs_location_frames(p, loc, frames, fcap, 0);

	span->off = (uint32_t)texts->len;
	for (size_t f = 0; f < nf; f++) {
		hs_strbuf_addc(texts, ';');
		add_name(texts, hs_frame_label(&(*frames)[f], o, label));
		hs_strbuf_adds(texts, suffix(o, &(*frames)[f]));
	}
	span->len = (uint32_t)(texts->len - span->off);
}

/* The distinct texts of a hs_folded_lines() call (roots', locations'), by their spans in one
 * buffer: locations at other addresses of a function, or of the same name, share one. */
struct texts {
	struct hs_strbuf buf;
	HS_VEC(struct span) spans;
	struct hs_index ix;
};

struct text_key {
	const struct texts *t;
	const char *s;
	size_t len;
};

static bool text_eq(const void *ctx, uint32_t id)
{
	const struct text_key *k = ctx;
	const struct span *sp = &k->t->spans.v[id];
	return sp->len == k->len && !memcmp(hs_strbuf_str(&k->t->buf) + sp->off, k->s, k->len);
}

/* The id of the text at the end of t->buf from off on, which is dropped when seen before. */
static uint32_t text_id(struct texts *t, size_t off)
{
	struct text_key k = {t, hs_strbuf_str(&t->buf) + off, t->buf.len - off};
	uint64_t h = hs_hash_mem(k.s, k.len);
	uint32_t id = hs_index_find(&t->ix, h, text_eq, &k);

	if (id != UINT32_MAX) {
		hs_strbuf_setlen(&t->buf, off);
		return id;
	}
	id = (uint32_t)t->spans.n;
	hs_vec_push(&t->spans, ((struct span){(uint32_t)off, (uint32_t)(t->buf.len - off)}));
	hs_index_insert(&t->ix, h, id);
	return id;
}

/* A line before its text: its texts' ids, root first, in one pool. */
struct seq {
	uint32_t off, n;
	int64_t value;
};

struct seq_key {
	const uint32_t *pool;
	const struct seq *seqs;
	const uint32_t *ids;
	uint32_t n;
};

static bool seq_eq(const void *ctx, uint32_t id)
{
	const struct seq_key *k = ctx;
	return k->seqs[id].n == k->n && !memcmp(k->pool + k->seqs[id].off, k->ids, k->n * sizeof(*k->ids));
}

size_t hs_folded_lines(const struct hs_profile *p, const struct hs_output_opts *o, uint32_t vi,
		       struct hs_folded_line **ret)
{
	HS_VEC(struct hs_folded_line) lines = {0};
	HS_VEC(struct seq) seqs = {0};
	HS_VEC(uint32_t) pool = {0}, ids = {0};
	struct hs_index lix = {0}, six = {0};
	struct hs_strbuf sb = {0}, label = {0};
	struct texts t = {{0}};
	struct hs_thread_names names;
	struct hs_frame *frames = NULL;
	size_t fcap = 0;
	uint32_t *loc_text = hs_xmalloc((p->locations.n + 1) * sizeof(*loc_text));

	memset(loc_text, 0xff, (p->locations.n + 1) * sizeof(*loc_text));
	hs_thread_names_init(&names, p);

	/* Stacks that differ only in addresses read the same: merged first by their texts' ids
	 * (a few bytes a frame to hash and compare, rather than the frame's text), then, once
	 * each, by the text of the line (texts that differ can still join into the same line). */
	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		const uint32_t *locs = hs_profile_stack_locs(p, s->stack);
		struct seq_key k;
		size_t off = t.buf.len;
		uint64_t h;
		uint32_t id;

		ids.n = 0;
		hs_folded_root(p, o, &names, s, &t.buf);
		hs_vec_push(&ids, text_id(&t, off));
		for (uint32_t j = p->stacks.v[s->stack].nlocs; j-- > 0;) {
			uint32_t *lt = &loc_text[locs[j]];
			if (*lt == UINT32_MAX) {
				struct span sp;
				location_text(p, o, locs[j], &t.buf, &sp, &frames, &fcap, &label);
				*lt = text_id(&t, sp.off);
			}
			hs_vec_push(&ids, *lt);
		}
		k = (struct seq_key){pool.v, seqs.v, ids.v, (uint32_t)ids.n};
		h = hs_hash_mem(ids.v, ids.n * sizeof(*ids.v));
		id = hs_index_find(&six, h, seq_eq, &k);
		if (id == UINT32_MAX) {
			id = (uint32_t)seqs.n;
			hs_vec_push(&seqs, ((struct seq){(uint32_t)pool.n, (uint32_t)ids.n, 0}));
			hs_vec_reserve(&pool, pool.n + ids.n);
			memcpy(pool.v + pool.n, ids.v, ids.n * sizeof(*ids.v));
			pool.n += ids.n;
			hs_index_insert(&six, h, id);
		}
		if (p->types.n)
			seqs.v[id].value = hs_add_sat(seqs.v[id].value, hs_profile_sample_values(p, (uint32_t)i)[vi]);
	}
	for (size_t i = 0; i < seqs.n; i++) {
		struct folded_key k;
		uint64_t h;
		uint32_t id;

		hs_strbuf_reset(&sb);
		for (uint32_t j = 0; j < seqs.v[i].n; j++) {
			const struct span *sp = &t.spans.v[pool.v[seqs.v[i].off + j]];
			hs_strbuf_add(&sb, hs_strbuf_str(&t.buf) + sp->off, sp->len);
		}
		k.lines = lines.v;
		k.text = hs_strbuf_str(&sb);
		k.len = sb.len;
		h = hs_hash_bytes(k.text, k.len, 0);
		id = hs_index_find(&lix, h, folded_eq, &k);
		if (id == UINT32_MAX) {
			struct hs_folded_line l = {hs_xstrndup(k.text, k.len), k.len, 0};
			id = (uint32_t)lines.n;
			hs_vec_push(&lines, l);
			hs_index_insert(&lix, h, id);
		}
		lines.v[id].value = hs_add_sat(lines.v[id].value, seqs.v[i].value);
	}
	if (lines.n)
		qsort(lines.v, lines.n, sizeof(*lines.v), line_cmp);
	free(frames);
	free(loc_text);
	hs_vec_free(&seqs);
	hs_vec_free(&pool);
	hs_vec_free(&ids);
	hs_vec_free(&t.spans);
	hs_strbuf_release(&t.buf);
	hs_index_release(&t.ix);
	hs_strbuf_release(&sb);
	hs_strbuf_release(&label);
	hs_index_release(&lix);
	hs_index_release(&six);
	hs_thread_names_release(&names);
	*ret = lines.v;
	return lines.n;
}

void hs_folded_lines_free(struct hs_folded_line *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

int hs_write_folded(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct hs_folded_line *lines;
	size_t n = hs_folded_lines(p, o, hs_output_value_index(p, o), &lines);

	for (size_t i = 0; i < n; i++) {
		if (lines[i].value > 0) {
			hs_outfile_write(out, lines[i].text, lines[i].len);
			hs_outfile_printf(out, " %lld\n", (long long)lines[i].value);
		}
	}
	hs_folded_lines_free(lines, n);
	return out->err ? -out->err : 0;
}
