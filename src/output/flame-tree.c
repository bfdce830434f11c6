/* The tree behind every flame graph (SVG, HTML, differential): samples merged frame by frame
 * under "all" and the thread, or in time order for flame charts; its layout into boxes; and
 * the colours, by kind of code, by FlameGraph's palettes, or by change for differential
 * graphs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers.h"

/* ---- building ---- */

struct node_key {
	const struct hs_flame_node *nodes;
	const struct hs_flame_node *want;
};

static bool node_eq(const void *ctx, uint32_t id)
{
	const struct node_key *k = ctx;
	const struct hs_flame_node *a = &k->nodes[id], *b = k->want;
	return a->parent == b->parent && a->kind == b->kind && a->inlined == b->inlined && !strcmp(a->name, b->name) &&
	       !strcmp(a->module, b->module);
}

static uint64_t node_hash(uint32_t parent, const char *name, uint8_t kind, bool inlined, const char *module)
{
	return hs_hash_combine(hs_hash_combine(hs_hash_u64(parent), hs_hash_bytes(name, strlen(name), 0)),
			       ((uint64_t)kind | (uint64_t)inlined << 8) ^ hs_hash_bytes(module, strlen(module), 0));
}

static uint32_t new_node(struct hs_flame_tree *t, uint32_t parent, const char *name, uint8_t kind, bool inlined,
			 const char *module, bool own)
{
	struct hs_flame_node n = {name, 0, 0, parent, kind, inlined, module};

	if (own) {
		n.name = hs_xstrdup(name);
		hs_vec_push(&t->owned, (char *)n.name);
	}
	hs_vec_push(&t->nodes, n);
	return (uint32_t)t->nodes.n - 1;
}

/* The child of parent with this name and kind, created if needed; own: copy the name. The
 * inlined flag is part of the key because it is drawn in its own colour. */
static uint32_t tree_child(struct hs_flame_tree *t, uint32_t parent, const char *name, uint8_t kind, bool inlined,
			   const char *module, bool own)
{
	struct hs_flame_node want = {name, 0, 0, parent, kind, inlined, module};
	struct node_key k = {t->nodes.v, &want};
	uint64_t h = node_hash(parent, name, kind, inlined, module);
	uint32_t id = hs_index_find(&t->ix, h, node_eq, &k);

	if (id != UINT32_MAX)
		return id;
	id = new_node(t, parent, name, kind, inlined, module, own);
	hs_index_insert(&t->ix, h, id);
	return id;
}

void hs_flame_tree_init(struct hs_flame_tree *t)
{
	memset(t, 0, sizeof(*t));
	hs_vec_push(&t->nodes, ((struct hs_flame_node){"all", 0, 0, UINT32_MAX, HS_KIND_PSEUDO, false, ""}));
}

void hs_flame_tree_release(struct hs_flame_tree *t)
{
	for (size_t i = 0; i < t->owned.n; i++)
		free(t->owned.v[i]);
	hs_vec_free(&t->owned);
	hs_vec_free(&t->nodes);
	hs_index_release(&t->ix);
	free(t->child_start);
	free(t->child_ids);
}

/* One sample's path below "all": frames with their names, copied into arena when composed. */
struct path_frame {
	const char *name;
	size_t arena_off; /* SIZE_MAX: name is borrowed from the profile */
	uint8_t kind;
	bool inlined;
	const char *module; /* as hs_flame_node's */
};

struct builder {
	const struct hs_output_opts *lanes; /* flame charts: roots of threads with a tid */
	struct hs_thread_names names;
	HS_VEC(struct path_frame) path;
	struct hs_strbuf arena, label;
	struct hs_frame *frames;
	size_t fcap;
};

static void path_push(struct builder *b, const char *name, bool composed, uint8_t kind, bool inlined,
		      const char *module)
{
	struct path_frame f = {name, SIZE_MAX, kind, inlined, module};

	if (composed) {
		f.arena_off = b->arena.len;
		hs_strbuf_add(&b->arena, name, strlen(name) + 1);
	}
	hs_vec_push(&b->path, f);
}

/* The options sample s's root is named with. */
static const struct hs_output_opts *root_opts(const struct builder *b, const struct hs_output_opts *o,
					      const struct hs_sample *s)
{
	return b->lanes && s->tid >= 0 ? b->lanes : o;
}

/* The path of sample s: the thread, then frames root first (reversed: leaf first, then the
 * thread). */
static void sample_path(struct builder *b, const struct hs_profile *p, const struct hs_output_opts *o,
			const struct hs_sample *s)
{
	size_t nf = hs_stack_frames(p, s->stack, &b->frames, &b->fcap);
	const struct hs_output_opts *ro = root_opts(b, o, s);

	b->path.n = 0;
	hs_strbuf_reset(&b->arena);
	hs_strbuf_reset(&b->label);
	hs_folded_root(p, ro, &b->names, s, &b->label);
	if (!o->reverse)
		path_push(b, hs_strbuf_str(&b->label), true, HS_KIND_PSEUDO, false, "");
	for (size_t i = 0; i < nf; i++) {
		const struct hs_frame *f = &b->frames[o->reverse ? nf - 1 - i : i];
		struct hs_strbuf tmp = {0};
		const char *name = hs_frame_label(f, o, &tmp);

		/* a Python frame's file, unless its label has it: the hover names it */
		path_push(b, name, name != f->name, f->kind, f->inlined,
			  hs_kind_is_script(f->kind) && name == f->name ? f->module : "");
		hs_strbuf_release(&tmp);
	}
	if (o->reverse) {
		hs_strbuf_reset(&b->label);
		hs_folded_root(p, ro, &b->names, s, &b->label);
		path_push(b, hs_strbuf_str(&b->label), true, HS_KIND_PSEUDO, false, "");
	}
	/* the arena may have moved while it grew: names point into it only now */
	for (size_t i = 0; i < b->path.n; i++)
		if (b->path.v[i].arena_off != SIZE_MAX)
			b->path.v[i].name = b->arena.buf + b->path.v[i].arena_off;
}

static void add_value(struct hs_flame_tree *t, uint32_t leaf, int64_t v, bool base)
{
	for (uint32_t id = leaf; id != UINT32_MAX; id = t->nodes.v[id].parent) {
		if (base)
			t->nodes.v[id].base = hs_add_sat(t->nodes.v[id].base, v);
		else
			t->nodes.v[id].value = hs_add_sat(t->nodes.v[id].value, v);
	}
}

static void add_merged(struct hs_flame_tree *t, struct builder *b, const struct hs_profile *p,
		       const struct hs_output_opts *o, uint32_t vi, bool base)
{
	struct hs_u64map leaves = {0}; /* (stack << 32 | comm) -> leaf node, when the path depends on no more */
	bool by_stack = !o->root_pid && !o->root_tid;

	for (size_t i = 0; i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		int64_t v = hs_profile_sample_values(p, (uint32_t)i)[vi];
		uint64_t key = (uint64_t)s->stack << 32 | s->comm, leaf;

		if (v <= 0)
			continue;
		if (!by_stack || !hs_u64map_get(&leaves, key, &leaf)) {
			uint32_t id = 0;

			sample_path(b, p, o, s);
			for (size_t f = 0; f < b->path.n; f++) {
				const struct path_frame *pf = &b->path.v[f];
				id = tree_child(t, id, pf->name, pf->kind, pf->inlined, pf->module,
						pf->arena_off != SIZE_MAX);
			}
			leaf = id;
			if (by_stack)
				hs_u64map_put(&leaves, key, leaf);
		}
		add_value(t, (uint32_t)leaf, v, base);
	}
	hs_u64map_release(&leaves);
}

struct timed {
	uint64_t time;
	uint32_t sample;
	uint32_t thread; /* order of the thread's first sample */
};

static int by_time(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

static int by_thread_time(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return by_time(a, b);
}

struct label_key {
	char *const *labels;
	const char *want;
};

static bool label_eq(const void *ctx, uint32_t id)
{
	const struct label_key *k = ctx;
	return !strcmp(k->labels[id], k->want);
}

/* Flame chart: per thread (threads in the order they were first sampled, each under its own
 * root "comm-pid/tid"), samples in time order; a frame continues the node of the sample before
 * only while the whole path down to it is the same. */
static void add_timed(struct hs_flame_tree *t, struct builder *b, const struct hs_profile *p,
		      const struct hs_output_opts *o, uint32_t vi, bool base)
{
	HS_VEC(struct timed) order = {0};
	HS_VEC(uint32_t) cur = {0}; /* the previous sample's nodes, below "all" */
	HS_VEC(char *) labels = {0};
	struct hs_index label_ix = {0};
	struct hs_strbuf sb = {0};
	uint32_t thread = UINT32_MAX;

	for (size_t i = 0; i < p->samples.n; i++)
		if (hs_profile_sample_values(p, (uint32_t)i)[vi] > 0)
			hs_vec_push(&order, ((struct timed){p->samples.v[i].time, (uint32_t)i, 0}));
	if (order.n)
		qsort(order.v, order.n, sizeof(*order.v), by_time);
	/* threads, named as their root frame, numbered in the order of their first sample */
	for (size_t i = 0; i < order.n; i++) {
		const struct hs_sample *s = &p->samples.v[order.v[i].sample];
		struct label_key k;
		uint64_t h;
		uint32_t id;

		hs_strbuf_reset(&sb);
		hs_folded_root(p, root_opts(b, o, s), &b->names, s, &sb);
		k.labels = labels.v;
		k.want = hs_strbuf_str(&sb);
		h = hs_hash_bytes(k.want, sb.len, 0);
		id = hs_index_find(&label_ix, h, label_eq, &k);
		if (id == UINT32_MAX) {
			id = (uint32_t)labels.n;
			hs_vec_push(&labels, hs_xstrdup(k.want));
			hs_index_insert(&label_ix, h, id);
		}
		order.v[i].thread = id;
	}
	if (order.n)
		qsort(order.v, order.n, sizeof(*order.v), by_thread_time);
	for (size_t i = 0; i < order.n; i++) {
		const struct hs_sample *s = &p->samples.v[order.v[i].sample];
		uint32_t id = 0;
		size_t k = 0;

		if (order.v[i].thread != thread) {
			thread = order.v[i].thread;
			cur.n = 0;
		}
		sample_path(b, p, o, s);
		/* the common part with the previous sample of this thread */
		while (k < b->path.n && k < cur.n) {
			const struct hs_flame_node *n = &t->nodes.v[cur.v[k]];
			const struct path_frame *pf = &b->path.v[k];
			if (n->kind != pf->kind || n->inlined != pf->inlined || strcmp(n->name, pf->name) ||
			    strcmp(n->module, pf->module))
				break;
			id = cur.v[k++];
		}
		cur.n = k;
		for (; k < b->path.n; k++) {
			const struct path_frame *pf = &b->path.v[k];
			id = new_node(t, id, pf->name, pf->kind, pf->inlined, pf->module, pf->arena_off != SIZE_MAX);
			hs_vec_push(&cur, id);
		}
		add_value(t, id, hs_profile_sample_values(p, order.v[i].sample)[vi], base);
	}
	for (size_t i = 0; i < labels.n; i++)
		free(labels.v[i]);
	hs_vec_free(&labels);
	hs_index_release(&label_ix);
	hs_strbuf_release(&sb);
	hs_vec_free(&order);
	hs_vec_free(&cur);
}

void hs_flame_tree_add(struct hs_flame_tree *t, const struct hs_profile *p, const struct hs_output_opts *o,
		       uint32_t vi, bool base)
{
	struct builder b = {0};

	if (!p->types.n)
		return;
	hs_thread_names_init(&b.names, p);
	if (o->flamechart) {
		/* each thread its own lane, named with its tid: threads of one name (a pool, an
		 * interpreter's) would otherwise share a lane and stripe it sample by sample; threads
		 * without one (a folded input) keep their name */
		struct hs_output_opts lanes = *o;

		lanes.root_tid = true;
		b.lanes = &lanes;
		t->time_order = true;
		add_timed(t, &b, p, o, vi, base);
	} else {
		add_merged(t, &b, p, o, vi, base);
	}
	hs_thread_names_release(&b.names);
	hs_vec_free(&b.path);
	hs_strbuf_release(&b.arena);
	hs_strbuf_release(&b.label);
	free(b.frames);
}

void hs_flame_tree_finish(struct hs_flame_tree *t)
{
	uint32_t *fill;

	/* Children as ranges of one array; a parent is always created before its children. */
	t->child_start = hs_xcalloc(t->nodes.n + 1, sizeof(*t->child_start));
	t->child_ids = hs_xmalloc(t->nodes.n * sizeof(*t->child_ids));
	for (size_t i = 1; i < t->nodes.n; i++)
		t->child_start[t->nodes.v[i].parent + 1]++;
	for (size_t i = 0; i < t->nodes.n; i++)
		t->child_start[i + 1] += t->child_start[i];
	fill = hs_xmalloc((t->nodes.n + 1) * sizeof(*fill));
	memcpy(fill, t->child_start, (t->nodes.n + 1) * sizeof(*fill));
	for (size_t i = 1; i < t->nodes.n; i++)
		t->child_ids[fill[t->nodes.v[i].parent]++] = (uint32_t)i;
	free(fill);
}

/* ---- layout ---- */

struct sib {
	const char *name;
	uint32_t id;
	uint8_t kind;
	bool inlined;
	const char *module;
};

/* Alphabetical, as flamegraph.pl orders siblings (it sorts the folded lines). */
static int sib_cmp(const void *a, const void *b)
{
	const struct sib *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->inlined != y->inlined)
		return (int)x->inlined - (int)y->inlined;
	return strcmp(x->module, y->module);
}

void hs_flame_layout(const struct hs_flame_tree *t, double minval, struct hs_flame_boxes *ret, uint32_t *max_depth)
{
	struct hs_flame_boxes worklist = {0}, kids = {0};
	HS_VEC(struct sib) sibs = {0};

	*max_depth = 0;
	if (t->nodes.v[0].value <= 0)
		return;
	hs_vec_push(&worklist, ((struct hs_flame_box){0, 0, 0, false, 0, t->nodes.v[0].value}));
	while (worklist.n) {
		struct hs_flame_box b = worklist.v[--worklist.n];
		uint32_t c0, c1, nnarrow = 0, narrow_id = 0;
		int64_t x, narrow_sum = 0;

		hs_vec_push(ret, b);
		if (b.depth > *max_depth)
			*max_depth = b.depth;
		if (b.node == UINT32_MAX || b.leaf)
			continue;
		c0 = t->child_start[b.node];
		c1 = t->child_start[b.node + 1];
		sibs.n = kids.n = 0;
		for (uint32_t c = c0; c < c1; c++) {
			const struct hs_flame_node *n = &t->nodes.v[t->child_ids[c]];
			if (n->value > 0)
				hs_vec_push(&sibs,
					    ((struct sib){n->name, t->child_ids[c], n->kind, n->inlined, n->module}));
		}
		if (sibs.n > 1 && !t->time_order)
			qsort(sibs.v, sibs.n, sizeof(*sibs.v), sib_cmp);
		x = b.off;
		for (size_t i = 0; i < sibs.n; i++) {
			const struct hs_flame_node *n = &t->nodes.v[sibs.v[i].id];
			if ((double)n->value < minval) {
				nnarrow++;
				narrow_sum = hs_add_sat(narrow_sum, n->value);
				narrow_id = sibs.v[i].id;
				continue;
			}
			hs_vec_push(&kids, ((struct hs_flame_box){sibs.v[i].id, 0, b.depth + 1, false, x, n->value}));
			x = hs_add_sat(x, n->value);
		}
		/* The narrow ones go right of the wide ones, then the parent's own time. */
		if (nnarrow == 1)
			hs_vec_push(&kids, ((struct hs_flame_box){narrow_id, 0, b.depth + 1, true, x, narrow_sum}));
		else if (nnarrow > 1)
			hs_vec_push(&kids, ((struct hs_flame_box){UINT32_MAX, nnarrow, b.depth + 1, true, x, narrow_sum}));
		for (size_t i = kids.n; i-- > 0;)
			hs_vec_push(&worklist, kids.v[i]);
	}
	free(worklist.v);
	free(kids.v);
	hs_vec_free(&sibs);
}

/* ---- colours ---- */

/* Byte-wise FNV-1a, so that a function keeps its colour on every machine and every run. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct hs_rgb rgb(int r, int g, int b)
{
	return (struct hs_rgb){(uint8_t)HS_MIN(HS_MAX(r, 0), 255), (uint8_t)HS_MIN(HS_MAX(g, 0), 255),
			       (uint8_t)HS_MIN(HS_MAX(b, 0), 255)};
}

/* FlameGraph's colour families (flamegraph.pl, sub color), v1..v3 in [0, 1]. */
enum family { RED, ORANGE, YELLOW, GREEN, AQUA, BLUE, PURPLE, HOT, MEM, IO };

static struct hs_rgb family_rgb(enum family f, double v1, double v2, double v3)
{
	switch (f) {
	case RED: return rgb(200 + (int)(55 * v1), 50 + (int)(80 * v1), 50 + (int)(80 * v1));
	case ORANGE: return rgb(190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	case YELLOW: return rgb(175 + (int)(55 * v1), 175 + (int)(55 * v1), 50 + (int)(20 * v1));
	case GREEN: return rgb(50 + (int)(60 * v1), 200 + (int)(55 * v1), 50 + (int)(60 * v1));
	case AQUA: return rgb(50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
	case BLUE: return rgb(80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v1));
	case PURPLE: return rgb(190 + (int)(65 * v1), 80 + (int)(60 * v1), 190 + (int)(65 * v1));
	case HOT: return rgb(205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	case MEM: return rgb(0, 190 + (int)(50 * v2), (int)(210 * v1));
	case IO: return rgb(80 + (int)(60 * v1), 80 + (int)(60 * v1), 190 + (int)(55 * v2));
	}
	return rgb(0, 0, 0);
}

/* Java class names as the JVM's perf maps write them: "Ljava/lang/String;::hashCode". */
static bool java_name(const char *n)
{
	static const char *const pkgs[] = {"java/", "javax/", "jdk/", "net/", "org/", "com/", "io/", "sun/"};

	if (*n == 'L')
		n++;
	for (size_t i = 0; i < HS_ARRAY_SIZE(pkgs); i++)
		if (!strncmp(n, pkgs[i], strlen(pkgs[i])))
			return true;
	return false;
}

const struct hs_legend_item hs_flame_legend[HS_FLAME_LEGEND_SIZE] = {
	{"user", "main", HS_KIND_USER, false},
	{"kernel", "schedule", HS_KIND_KERNEL, false},
	{"JIT", "Interpreter", HS_KIND_JIT, false},
	{"Python", "<module>", HS_KIND_PYTHON, false},
	{"Java interpreted", "Main.main", HS_KIND_JAVA_INTERP, false},
	{"Java C1", "Main.run", HS_KIND_JAVA_C1, false},
	{"Java C2", "Main.loop", HS_KIND_JAVA_C2, false},
	{"JS interpreted", "main", HS_KIND_JS_INTERP, false},
	{"JS baseline", "run", HS_KIND_JS_BASELINE, false},
	{"JS optimized", "loop", HS_KIND_JS_OPT, false},
	{"V8 builtin", "Builtins_Call", HS_KIND_JS_BUILTIN, false},
	{"Ruby", "<main>", HS_KIND_RUBY, false},
	{"PHP", "main", HS_KIND_PHP, false},
	{"Perl", "main::run", HS_KIND_PERL, false},
	{"inlined", "inline", HS_KIND_USER, true},
	{"other", "[unknown]", HS_KIND_PSEUDO, false},
};

bool hs_flame_legend_shows(const struct hs_flame_tree *t, const struct hs_legend_item *item)
{
	if (!hs_kind_is_script(item->kind) && item->kind != HS_KIND_JAVA_INTERP && item->kind != HS_KIND_JAVA_C1 &&
	    item->kind != HS_KIND_JAVA_C2 && item->kind != HS_KIND_JS_INTERP && item->kind != HS_KIND_JS_BASELINE &&
	    item->kind != HS_KIND_JS_OPT && item->kind != HS_KIND_JS_BUILTIN)
		return true;
	for (size_t i = 1; i < t->nodes.n; i++)
		if (t->nodes.v[i].kind == item->kind)
			return true;
	return false;
}

struct hs_rgb hs_flame_color(enum hs_palette pal, const char *name, uint8_t kind, bool inlined)
{
	uint32_t h = name_hash(name);
	double a = (h & 0x3ff) / 1023.0, b = (h >> 10 & 0x3ff) / 1023.0, c = (h >> 20 & 0x3ff) / 1023.0;

	switch (pal) {
	case HS_PALETTE_HOT:
		return family_rgb(HOT, a, b, c);
	case HS_PALETTE_MEM:
		return family_rgb(MEM, a, b, c);
	case HS_PALETTE_IO:
		return family_rgb(IO, a, b, c);
	case HS_PALETTE_JAVA:
		/* flamegraph.pl --colors java, with the kinds hotstack knows instead of suffixes */
		if (kind == HS_KIND_PSEUDO)
			return rgb(175 + (int)(35 * a), 175 + (int)(35 * a), 175 + (int)(35 * a));
		if (inlined)
			return family_rgb(AQUA, a, b, c);
		if (hs_kind_is_jit(kind) || java_name(name))
			return family_rgb(GREEN, a, b, c);
		if (kind == HS_KIND_KERNEL)
			return family_rgb(ORANGE, a, b, c);
		if (hs_kind_is_script(kind)) /* an interpreter's code: neither Java nor native */
			return family_rgb(PURPLE, a, b, c);
		if (strstr(name, "::"))
			return family_rgb(YELLOW, a, b, c);
		return family_rgb(RED, a, b, c);
	case HS_PALETTE_JS:
		/* flamegraph.pl --colors js: JIT code with a source path green, without aqua */
		if (kind == HS_KIND_PSEUDO)
			return rgb(175 + (int)(35 * a), 175 + (int)(35 * a), 175 + (int)(35 * a));
		if (hs_kind_is_jit(kind))
			return family_rgb(strchr(name, '/') ? GREEN : AQUA, a, b, c);
		if (kind == HS_KIND_KERNEL)
			return family_rgb(ORANGE, a, b, c);
		if (hs_kind_is_script(kind))
			return family_rgb(PURPLE, a, b, c);
		if (strstr(name, "::"))
			return family_rgb(YELLOW, a, b, c);
		if (strchr(name, '/'))
			return family_rgb(GREEN, a, b, c);
		return family_rgb(RED, a, b, c);
	case HS_PALETTE_KIND:
		break;
	}
	/* one colour family per kind of code */
	if (inlined) /* aqua */
		return rgb(60 + (int)(50 * a), 205 + (int)(40 * b), 205 + (int)(40 * c));
	if (kind == HS_KIND_KERNEL) /* periwinkle blue */
		return rgb(90 + (int)(50 * a), 140 + (int)(50 * b), 225 + (int)(30 * c));
	if (kind == HS_KIND_JIT || kind == HS_KIND_JAVA_C2 || kind == HS_KIND_JS_OPT) /* green */
		return rgb(60 + (int)(60 * a), 190 + (int)(45 * b), 60 + (int)(50 * c));
	if (kind == HS_KIND_JAVA_C1 || kind == HS_KIND_JS_BASELINE) /* olive */
		return rgb(150 + (int)(40 * a), 175 + (int)(40 * b), 40 + (int)(40 * c));
	if (kind == HS_KIND_JAVA_INTERP || kind == HS_KIND_JS_INTERP) /* teal */
		return rgb(40 + (int)(40 * a), 160 + (int)(40 * b), 140 + (int)(40 * c));
	if (kind == HS_KIND_JS_BUILTIN) /* sand */
		return rgb(200 + (int)(40 * a), 185 + (int)(40 * b), 130 + (int)(40 * c));
	if (kind == HS_KIND_PSEUDO) /* grey */
		return rgb(175 + (int)(35 * a), 175 + (int)(35 * a), 175 + (int)(35 * a));
	if (kind == HS_KIND_PYTHON) /* violet: apart from the kernel's blue and the search's magenta */
		return rgb(165 + (int)(45 * a), 120 + (int)(40 * b), 215 + (int)(35 * c));
	if (kind == HS_KIND_RUBY) /* ruby red, pale: apart from native code's red to yellow */
		return rgb(225 + (int)(30 * a), 120 + (int)(40 * b), 140 + (int)(40 * c));
	if (kind == HS_KIND_PHP) /* PHP's lilac blue */
		return rgb(130 + (int)(40 * a), 140 + (int)(40 * b), 200 + (int)(40 * c));
	if (kind == HS_KIND_PERL) /* camel brown */
		return rgb(190 + (int)(40 * a), 150 + (int)(40 * b), 100 + (int)(40 * c));
	return rgb(205 + (int)(50 * a), (int)(230 * b), (int)(55 * c)); /* user: red to yellow */
}

struct hs_rgb hs_flame_diff_color(double ratio)
{
	double t = fabs(ratio);
	int strong, weak;

	if (t > 1)
		t = 1;
	/* the square: the largest changes stand out, and the small shifts of share every frame
	 * sees when one grows (shares add up to 100%) stay near grey */
	t *= t;
	/* from neutral grey (220) to a saturated red or blue */
	strong = 220 + (int)lround(35 * t);
	weak = 220 - (int)lround(190 * t);
	if (ratio > 0)
		return rgb(strong, weak, weak);
	if (ratio < 0)
		return rgb(weak, weak, strong);
	return rgb(220, 220, 220);
}

double hs_flame_delta(const struct hs_flame_tree *t, uint32_t node)
{
	const struct hs_flame_node *root = &t->nodes.v[0], *n = &t->nodes.v[node];
	double after = root->value > 0 ? (double)n->value / (double)root->value : 0;
	double before = root->base > 0 ? (double)n->base / (double)root->base : 0;

	return after - before;
}

double hs_flame_max_delta(const struct hs_flame_tree *t)
{
	double m = 0;

	for (size_t i = 0; i < t->nodes.n; i++)
		m = HS_MAX(m, fabs(hs_flame_delta(t, (uint32_t)i)));
	return m;
}

const char *hs_value_unit_name(const struct hs_profile *p, uint32_t vi)
{
	const char *type, *unit;

	if (!p->types.n)
		return "samples";
	type = hs_profile_str(p, p->types.v[vi].type);
	unit = hs_profile_str(p, p->types.v[vi].unit);
	if (*unit && strcmp(unit, "count"))
		return unit;
	return *type ? type : "samples";
}

int hs_flame_draw(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out,
		  hs_tree_drawer *draw)
{
	struct hs_flame_tree t;
	struct hs_output_opts named = *o;
	struct hs_strbuf cmd = {0}, count = {0};
	uint32_t vi = hs_output_value_index(p, o);
	int rc;

	/* unless told otherwise, the graph says what ran and the total it draws (as the report's
	 * header does): a file opened later, or beside others, tells which it is */
	if (!o->title) {
		named.title = hs_profile_command(p, &cmd);
		if (!o->subtitle)
			named.subtitle = hs_value_total_text(p, vi, &count);
	}
	hs_flame_tree_init(&t);
	hs_flame_tree_add(&t, p, o, vi, false);
	hs_flame_tree_finish(&t);
	rc = draw(&t, &named, hs_value_unit_name(p, vi), false, out);
	hs_flame_tree_release(&t);
	hs_strbuf_release(&cmd);
	hs_strbuf_release(&count);
	return rc;
}
