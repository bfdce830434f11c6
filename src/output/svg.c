/* Interactive SVG flame graphs: samples merged into a tree (all → thread → stack, root first),
 * drawn as one box per frame with its width proportional to the value, plus svg.js (compiled in
 * as hs_svg_js) for details on hover, click-to-zoom and regular-expression search.
 *
 * The document's hooks, for tests and for scripts that post-process the SVG:
 *   #frames                 a <g> holding every frame in depth-first order, root first; its
 *                           data-* attributes tell svg.js the geometry
 *   g.frame                 one frame; a kind class "user", "kernel", "jit" or "pseudo", plus
 *                           "inline" for inlined frames; at run time "hide" (outside the zoomed
 *                           subtree), "parent" (ancestor of the zoomed frame, dimmed) and
 *                           "match" (search hit, drawn in MATCH_FILL)
 *   g.frame > title         "NAME (N UNIT, P%)": N the value, UNIT e.g. "samples", P with two
 *                           decimals, of the whole graph
 *   g.frame > rect, text    the box, and its label truncated to fit (ending ".."); frames too
 *                           narrow for a label have no <text> until a zoom makes room
 *   #title #subtitle        the titles; #details the line describing the frame under the mouse
 *   #unzoom                 "Reset Zoom"; has class "hide" while nothing is zoomed
 *   #search                 "Search": prompts for a regular expression (Ctrl-F and F3 too)
 *   #resetsearch            "Reset Search"; has class "hide" while no search is active (Esc too)
 *   #matched                "Matched: P%": the share of the total under matching frames, a
 *                           match nested inside another counted once
 *   #legend                 the colour of each kind of frame
 *   window.hotstackFlame    {zoom(i), search(regex), resetSearch(), zoomed()}, i the index of
 *                           a frame in #frames
 * Frames narrower than min_width pixels are not drawn one by one: the narrow children of a
 * frame become one pseudo frame "[N small frames]" (or, if alone, keep their name) with nothing
 * drawn above it, so the widths still add up and the output size is bounded by the width. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* svg.js, turned into this array at build time by embed-text.py. */
extern const char hs_svg_js[];

#define FONT_SIZE 12
#define FRAME_H 16
#define XPAD 10
/* An average glyph width for Verdana-like fonts; svg.js measures and corrects it. */
#define CHAR_W (FONT_SIZE * 0.59)
#define MATCH_FILL "rgb(230,0,230)"
#define MAX_WIDTH 100000

struct node {
	const char *name; /* borrowed from the profile, or one of tree.owned */
	int64_t value;
	uint32_t parent;  /* UINT32_MAX for the root */
	uint8_t kind;
	bool inlined;
};

struct tree {
	HS_VEC(struct node) nodes;
	HS_VEC(char *) owned;
	struct hs_index ix;
	uint32_t *child_start; /* children of n: child_ids[child_start[n] .. child_start[n + 1]] */
	uint32_t *child_ids;
};

struct node_key {
	const struct node *nodes;
	const struct node *want;
};

static bool node_eq(const void *ctx, uint32_t id)
{
	const struct node_key *k = ctx;
	const struct node *a = &k->nodes[id], *b = k->want;
	return a->parent == b->parent && a->kind == b->kind && a->inlined == b->inlined &&
	       !strcmp(a->name, b->name);
}

/* The child of parent with this name and kind, created if needed; own: copy the name. The
 * inlined flag is part of the key because it is drawn in its own colour. */
static uint32_t tree_child(struct tree *t, uint32_t parent, const char *name, uint8_t kind, bool inlined,
			   bool own)
{
	struct node want = {name, 0, parent, kind, inlined};
	struct node_key k = {t->nodes.v, &want};
	uint64_t h = hs_hash_combine(hs_hash_combine(hs_hash_u64(parent), hs_hash_bytes(name, strlen(name), 0)),
				     (uint64_t)kind | (uint64_t)inlined << 8);
	uint32_t id = hs_index_find(&t->ix, h, node_eq, &k);

	if (id != UINT32_MAX)
		return id;
	if (own) {
		want.name = hs_xstrdup(name);
		hs_vec_push(&t->owned, (char *)want.name);
	}
	id = (uint32_t)t->nodes.n;
	hs_vec_push(&t->nodes, want);
	hs_index_insert(&t->ix, h, id);
	return id;
}

static void tree_release(struct tree *t)
{
	for (size_t i = 0; i < t->owned.n; i++)
		free(t->owned.v[i]);
	hs_vec_free(&t->owned);
	hs_vec_free(&t->nodes);
	hs_index_release(&t->ix);
	free(t->child_start);
	free(t->child_ids);
}

static void tree_build(struct tree *t, const struct hs_profile *p, const struct hs_output_opts *o, uint32_t vi)
{
	struct hs_u64map leaves = {0}; /* (stack << 32 | thread node) -> leaf node */
	struct hs_strbuf sb = {0}, label = {0};
	struct hs_frame *frames = NULL;
	size_t fcap = 0;

	hs_vec_push(&t->nodes, ((struct node){"all", 0, UINT32_MAX, HS_KIND_PSEUDO, false}));
	for (size_t i = 0; p->types.n && i < p->samples.n; i++) {
		const struct hs_sample *s = &p->samples.v[i];
		int64_t v = hs_profile_sample_values(p, (uint32_t)i)[vi];
		uint64_t key, leaf;
		uint32_t thread;

		if (v <= 0)
			continue;
		hs_strbuf_reset(&sb);
		hs_folded_root(p, o, s->comm, s->pid, s->tid, &sb);
		thread = tree_child(t, 0, hs_strbuf_str(&sb), HS_KIND_PSEUDO, false, true);
		key = (uint64_t)s->stack << 32 | thread;
		if (!hs_u64map_get(&leaves, key, &leaf)) {
			size_t nf = hs_stack_frames(p, s->stack, &frames, &fcap);
			uint32_t id = thread;

			for (size_t f = 0; f < nf; f++) {
				const char *name = hs_frame_label(&frames[f], o, &label);
				id = tree_child(t, id, name, frames[f].kind, frames[f].inlined, name != frames[f].name);
			}
			leaf = id;
			hs_u64map_put(&leaves, key, leaf);
		}
		for (uint32_t id = (uint32_t)leaf; id != UINT32_MAX; id = t->nodes.v[id].parent)
			t->nodes.v[id].value += v;
	}

	/* Children as ranges of one array; a parent is always created before its children. */
	t->child_start = hs_xcalloc(t->nodes.n + 1, sizeof(*t->child_start));
	t->child_ids = hs_xmalloc(t->nodes.n * sizeof(*t->child_ids));
	for (size_t i = 1; i < t->nodes.n; i++)
		t->child_start[t->nodes.v[i].parent + 1]++;
	for (size_t i = 0; i < t->nodes.n; i++)
		t->child_start[i + 1] += t->child_start[i];
	{
		uint32_t *fill = hs_xmalloc((t->nodes.n + 1) * sizeof(*fill));

		memcpy(fill, t->child_start, (t->nodes.n + 1) * sizeof(*fill));
		for (size_t i = 1; i < t->nodes.n; i++)
			t->child_ids[fill[t->nodes.v[i].parent]++] = (uint32_t)i;
		free(fill);
	}
	free(frames);
	hs_strbuf_release(&sb);
	hs_strbuf_release(&label);
	hs_u64map_release(&leaves);
}

/* ---- layout: which boxes are drawn, where ---- */

struct box {
	uint32_t node;    /* UINT32_MAX: a merged frame of nmerged narrow siblings */
	uint32_t nmerged;
	uint32_t depth;
	bool leaf;        /* nothing drawn above it (narrow) */
	int64_t off;      /* left edge, in value units from the left of the graph */
	int64_t value;
};

struct box_list {
	struct box *v;
	size_t n, cap;
};

struct sib {
	const char *name;
	uint32_t id;
	uint8_t kind;
	bool inlined;
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
	return (int)x->inlined - (int)y->inlined;
}

/* Boxes in depth-first order, root first, each node's children left to right: the order svg.js
 * rebuilds the tree from. */
static void layout(const struct tree *t, double minval, struct box_list *ret, uint32_t *max_depth)
{
	struct box_list todo = {0};
	HS_VEC(struct sib) sibs = {0};
	struct box_list kids = {0};

	*max_depth = 0;
	hs_vec_push(&todo, ((struct box){0, 0, 0, false, 0, t->nodes.v[0].value}));
	while (todo.n) {
		struct box b = todo.v[--todo.n];
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
			const struct node *n = &t->nodes.v[t->child_ids[c]];
			hs_vec_push(&sibs, ((struct sib){n->name, t->child_ids[c], n->kind, n->inlined}));
		}
		if (sibs.n > 1)
			qsort(sibs.v, sibs.n, sizeof(*sibs.v), sib_cmp);
		x = b.off;
		for (size_t i = 0; i < sibs.n; i++) {
			const struct node *n = &t->nodes.v[sibs.v[i].id];
			if ((double)n->value < minval) {
				nnarrow++;
				narrow_sum += n->value;
				narrow_id = sibs.v[i].id;
				continue;
			}
			hs_vec_push(&kids, ((struct box){sibs.v[i].id, 0, b.depth + 1, false, x, n->value}));
			x += n->value;
		}
		/* The narrow ones go right of the wide ones, then the parent's own time. */
		if (nnarrow == 1)
			hs_vec_push(&kids, ((struct box){narrow_id, 0, b.depth + 1, true, x, narrow_sum}));
		else if (nnarrow > 1)
			hs_vec_push(&kids, ((struct box){UINT32_MAX, nnarrow, b.depth + 1, true, x, narrow_sum}));
		for (size_t i = kids.n; i-- > 0;)
			hs_vec_push(&todo, kids.v[i]);
	}
	hs_vec_free(&todo);
	hs_vec_free(&sibs);
	hs_vec_free(&kids);
}

/* ---- text ---- */

/* Length of the UTF-8 sequence at s and its code point, or 0 when it is not valid UTF-8
 * (overlong forms, surrogates and values past U+10FFFF included). */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		n = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	uint32_t cp;

	while (*s) {
		size_t k = utf8_next((const unsigned char *)s, &cp);
		s += k ? k : 1;
		n++;
	}
	return n;
}

/* Appends at most maxchars characters of s as XML text or attribute content. Names come from
 * symbol tables and input files that promise no encoding, and one byte that is not UTF-8 or
 * not allowed in XML would make the whole document unreadable, so those become U+FFFD. */
static void add_xml(struct hs_strbuf *sb, const char *s, size_t maxchars)
{
	for (size_t n = 0; *s && n < maxchars; n++) {
		uint32_t cp;
		size_t k = utf8_next((const unsigned char *)s, &cp);

		if (!k || cp == 0xfffe || cp == 0xffff || (cp < 0x20 && cp != '\t')) {
			hs_strbuf_adds(sb, cp == '\n' || cp == '\r' ? " " : "\xef\xbf\xbd");
			s += k ? k : 1;
			continue;
		}
		switch (cp) {
		case '&': hs_strbuf_adds(sb, "&amp;"); break;
		case '<': hs_strbuf_adds(sb, "&lt;"); break;
		case '>': hs_strbuf_adds(sb, "&gt;"); break;
		case '"': hs_strbuf_adds(sb, "&quot;"); break;
		case '\'': hs_strbuf_adds(sb, "&apos;"); break;
		default: hs_strbuf_add(sb, s, k);
		}
		s += k;
	}
}

/* How many characters of a label fit a box w pixels wide; under 3 there is no label. */
static size_t label_fit(double w)
{
	return w > 0 ? (size_t)(w / CHAR_W) : 0;
}

/* Appends the label for fit characters: the name, or its start and "..". */
static void add_label(struct hs_strbuf *sb, const char *name, size_t fit)
{
	if (utf8_chars(name) <= fit) {
		add_xml(sb, name, SIZE_MAX);
		return;
	}
	add_xml(sb, name, fit - 2);
	hs_strbuf_adds(sb, "..");
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

/* One colour family per kind of code, a shade within it from the name. */
static void add_fill(struct hs_strbuf *sb, const char *name, uint8_t kind, bool inlined)
{
	uint32_t h = name_hash(name);
	double a = (h & 0x3ff) / 1023.0, b = (h >> 10 & 0x3ff) / 1023.0, c = (h >> 20 & 0x3ff) / 1023.0;
	int r, g, bl;

	if (inlined) { /* aqua */
		r = 60 + (int)(50 * a), g = 205 + (int)(40 * b), bl = 205 + (int)(40 * c);
	} else if (kind == HS_KIND_KERNEL) { /* periwinkle blue */
		r = 90 + (int)(50 * a), g = 140 + (int)(50 * b), bl = 225 + (int)(30 * c);
	} else if (kind == HS_KIND_JIT) { /* green */
		r = 60 + (int)(60 * a), g = 190 + (int)(45 * b), bl = 60 + (int)(50 * c);
	} else if (kind == HS_KIND_PSEUDO) { /* grey */
		r = g = bl = 175 + (int)(35 * a);
	} else { /* user: red to yellow */
		r = 205 + (int)(50 * a), g = (int)(230 * b), bl = (int)(55 * c);
	}
	hs_strbuf_addf(sb, "rgb(%d,%d,%d)", r, g, bl);
}

static const char *kind_class(uint8_t kind)
{
	switch (kind) {
	case HS_KIND_KERNEL: return "kernel";
	case HS_KIND_JIT: return "jit";
	case HS_KIND_PSEUDO: return "pseudo";
	default: return "user";
	}
}

/* What the counts are called: the unit, unless it is a bare "count" of the type ("samples"). */
static const char *unit_name(const struct hs_profile *p, uint32_t vi)
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

/* ---- the document ---- */

static const char svg_css[] =
	"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { fill: #555; text-anchor: middle; }\n"
	"#unzoom, #search, #resetsearch { cursor: pointer; fill: #236; }\n"
	"#unzoom:hover, #search:hover, #resetsearch:hover { text-decoration: underline; }\n"
	"#search, #resetsearch, #matched { text-anchor: end; }\n"
	".frame { cursor: pointer; }\n"
	".frame text { pointer-events: none; }\n"
	".frame:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	".frame.parent { opacity: 0.5; }\n"
	".hide { display: none; }\n";

static void write_legend(struct hs_outfile *out, struct hs_strbuf *sb, int width, int y)
{
	static const struct {
		const char *label, *sample;
		uint8_t kind;
		bool inlined;
	} items[] = {
		{"user", "main", HS_KIND_USER, false},       {"kernel", "schedule", HS_KIND_KERNEL, false},
		{"JIT", "Interpreter", HS_KIND_JIT, false},  {"inlined", "inline", HS_KIND_USER, true},
		{"other", "[unknown]", HS_KIND_PSEUDO, false},
	};
	int step = 80, x = width / 2 - step * (int)HS_ARRAY_SIZE(items) / 2;

	/* Between "Reset Zoom" and "Search" there is only room on a wide enough graph. */
	if (width < 700)
		return;
	hs_strbuf_reset(sb);
	hs_strbuf_adds(sb, "<g id=\"legend\">\n");
	for (size_t i = 0; i < HS_ARRAY_SIZE(items); i++, x += step) {
		hs_strbuf_addf(sb, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" rx=\"2\" fill=\"", x, y - 10);
		add_fill(sb, items[i].sample, items[i].kind, items[i].inlined);
		hs_strbuf_addf(sb, "\"/><text x=\"%d\" y=\"%d\">%s</text>\n", x + 16, y, items[i].label);
	}
	hs_strbuf_adds(sb, "</g>\n");
	hs_outfile_write(out, sb->buf, sb->len);
}

static void write_box(struct hs_outfile *out, struct hs_strbuf *sb, const struct tree *t, const struct box *b,
		      double scale, int64_t total, const char *unit, int y)
{
	const struct node *n = b->node == UINT32_MAX ? NULL : &t->nodes.v[b->node];
	const char *name = n ? n->name : NULL;
	uint8_t kind = n ? n->kind : HS_KIND_PSEUDO;
	bool inlined = n && n->inlined;
	double x = XPAD + (double)b->off * scale, w = (double)b->value * scale;
	size_t fit = label_fit(w);
	char merged[48];

	if (!name) {
		snprintf(merged, sizeof(merged), "[%u small frames]", b->nmerged);
		name = merged;
	}
	hs_strbuf_reset(sb);
	hs_strbuf_addf(sb, "<g class=\"frame %s%s\"><title>", kind_class(kind), inlined ? " inline" : "");
	add_xml(sb, name, SIZE_MAX);
	hs_strbuf_addf(sb, " (%lld ", (long long)b->value);
	add_xml(sb, unit, SIZE_MAX);
	hs_strbuf_addf(sb, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"",
		       100.0 * (double)b->value / (double)total, x, y, w, FRAME_H - 1);
	add_fill(sb, name, kind, inlined);
	hs_strbuf_adds(sb, "\"/>");
	/* Most frames are too narrow for a label, and an empty <text> would still cost the
	 * browser layout time: svg.js adds one when a zoom makes room. */
	if (fit >= 3) {
		hs_strbuf_addf(sb, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
		add_label(sb, name, fit);
		hs_strbuf_adds(sb, "</text>");
	}
	hs_strbuf_adds(sb, "</g>\n");
	hs_outfile_write(out, sb->buf, sb->len);
}

int hs_write_svg(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	struct tree t = {0};
	struct box_list boxes = {0};
	struct hs_strbuf sb = {0};
	uint32_t vi = hs_output_value_index(p, o), max_depth = 0;
	int width = o->width > 0 ? HS_MIN(o->width, MAX_WIDTH) : 1200;
	double min_width = o->min_width > 0 ? o->min_width : 0.1, scale;
	const char *unit = unit_name(p, vi);
	int64_t total;
	int y_ctrl, top, bottom, height;

	width = HS_MAX(width, 2 * XPAD + 100);
	tree_build(&t, p, o, vi);
	total = t.nodes.v[0].value;
	scale = total > 0 ? (width - 2.0 * XPAD) / (double)total : 0;
	if (total > 0)
		layout(&t, min_width / scale, &boxes, &max_depth);

	y_ctrl = o->subtitle ? 64 : 46;
	top = y_ctrl + 12;
	bottom = top + (int)(boxes.n ? max_depth + 1 : 2) * FRAME_H;
	height = bottom + 30;

	hs_outfile_printf(out,
			  "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
			  "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			  "viewBox=\"0 0 %d %d\">\n"
			  "<!-- hotstack flame graph; the interactive hooks are described in src/output/svg.c -->\n"
			  "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
			  "<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
			  "<stop offset=\"0%%\" stop-color=\"#f4f4f8\"/><stop offset=\"100%%\" stop-color=\"#e6e6d8\"/>"
			  "</linearGradient></defs>\n"
			  "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
			  width, height, width, height, svg_css, width, height);
	hs_strbuf_addf(&sb, "<text id=\"title\" x=\"%d\" y=\"24\">", width / 2);
	add_xml(&sb, o->title ? o->title : "Flame Graph", SIZE_MAX);
	hs_strbuf_adds(&sb, "</text>\n");
	if (o->subtitle) {
		hs_strbuf_addf(&sb, "<text id=\"subtitle\" x=\"%d\" y=\"44\">", width / 2);
		add_xml(&sb, o->subtitle, SIZE_MAX);
		hs_strbuf_adds(&sb, "</text>\n");
	}
	hs_strbuf_addf(&sb,
		       "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
		       "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n"
		       "<text id=\"resetsearch\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Search</text>\n"
		       "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		       "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
		       XPAD, y_ctrl, width - XPAD, y_ctrl, width - XPAD - 60, y_ctrl, XPAD, bottom + 20,
		       width - XPAD, bottom + 20);
	hs_outfile_write(out, sb.buf, sb.len);
	write_legend(out, &sb, width, y_ctrl);

	if (!boxes.n)
		hs_outfile_printf(out, "<text id=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">No samples</text>\n",
				  width / 2, top + FRAME_H);
	hs_strbuf_reset(&sb);
	hs_strbuf_addf(&sb,
		       "<g id=\"frames\" data-width=\"%d\" data-pad=\"%d\" data-top=\"%d\" data-frame-height=\"%d\" "
		       "data-max-depth=\"%u\" data-inverted=\"%d\" data-font-size=\"%d\" data-unit=\"",
		       width, XPAD, top, FRAME_H, max_depth, o->inverted ? 1 : 0, FONT_SIZE);
	add_xml(&sb, unit, SIZE_MAX);
	hs_strbuf_adds(&sb, "\" data-match-fill=\"" MATCH_FILL "\">\n");
	hs_outfile_write(out, sb.buf, sb.len);
	for (size_t i = 0; i < boxes.n; i++) {
		const struct box *b = &boxes.v[i];
		int y = o->inverted ? top + (int)b->depth * FRAME_H : top + (int)(max_depth - b->depth) * FRAME_H;
		write_box(out, &sb, &t, b, scale, total, unit, y);
	}
	hs_outfile_printf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
			  hs_svg_js);

	hs_strbuf_release(&sb);
	hs_vec_free(&boxes);
	tree_release(&t);
	return out->err ? -out->err : 0;
}
