/* Interactive SVG flame graphs: samples merged into a tree (all → thread → stack, root first;
 * see flame-tree.c for reversed stacks and flame charts), drawn as one box per frame with its
 * width proportional to the value, plus svg.js (compiled in as hs_svg_js) for details on hover,
 * click-to-zoom and regular-expression search. Differential graphs (diff.c) come out of the
 * same code with the colours of change.
 *
 * The document's hooks, for tests and for scripts that post-process the SVG:
 *   #frames                 a <g> holding every frame in depth-first order, root first; its
 *                           data-* attributes tell svg.js the geometry
 *   g.frame                 one frame; a kind class "user", "kernel", "jit", "py" or "pseudo", plus
 *                           "inline" for inlined frames; at run time "hide" (outside the zoomed
 *                           subtree), "parent" (ancestor of the zoomed frame, dimmed) and
 *                           "match" (search hit, drawn in MATCH_FILL)
 *   g.frame > title         "NAME (N UNIT, P%)": N the value, UNIT e.g. "samples", P with two
 *                           decimals, of the whole graph; differential graphs insert the
 *                           frame's share of the profile compared against: "NAME (N UNIT,
 *                           was Q%, P%)"; a Python frame's NAME is followed by its source
 *                           file's base name, "Parser.parse (prog.py)", unless --lines named
 *                           it "Parser.parse:/app/prog.py:42"
 *   g.frame > rect, text    the box, and its label truncated to fit (ending ".."); frames too
 *                           narrow for a label have no <text> until a zoom makes room
 *   #title #subtitle        the titles; #details the line describing the frame under the mouse
 *   #unzoom                 "Reset Zoom"; has class "hide" while nothing is zoomed
 *   #search                 "Search": prompts for a regular expression (Ctrl-F and F3 too)
 *   #resetsearch            "Reset Search"; has class "hide" while no search is active (Esc too)
 *   #matched                "Matched: P%": the share of the total under matching frames, a
 *                           match nested inside another counted once
 *   #legend                 the colour of each kind of frame (of change, in differential
 *                           graphs); left out with another palette
 *   window.hotstackFlame    {zoom(i), search(regex), resetSearch(), zoomed()}, i the index of
 *                           a frame in #frames
 * Frames narrower than min_width pixels are not drawn one by one: the narrow children of a
 * frame become one pseudo frame "[N small frames]" (or, if alone, keep their name) with nothing
 * drawn above it, so the widths still add up and the output size is bounded by the width.
 *
 * A deep stack that holds little of the total (Python's imports at start-up, a recursion that
 * ran once) would make the graph as tall as itself and push the hot part below the first
 * screen: frames deeper than the hot frames (those of HOT_SHARE of the total or more), and
 * than MIN_ROWS rows, are cut. They are in #frames with class "hide" (and placed outside the
 * drawing for viewers without scripts); svg.js marks the frames whose children are cut with
 * class "cut" (a dashed outline) and shows what is under a frame when it is clicked, growing
 * the drawing as far as that subtree's own hot frames reach. #details says so while the mouse
 * is over no frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers.h"

/* svg.js, turned into this array at build time by embed-text.py. */
extern const char hs_svg_js[];

#define FONT_SIZE 12
#define FRAME_H 16
#define XPAD 10
/* An average glyph width for Verdana-like fonts; svg.js measures and corrects it. */
#define CHAR_W (FONT_SIZE * 0.59)
#define MATCH_FILL "rgb(230,0,230)"
#define MAX_WIDTH 100000
/* At most this many rows before cold frames are cut, and the share of the total a frame
 * needs to be drawn deeper (see the top of this file). */
#define MIN_ROWS 36
#define HOT_SHARE 0.05

/* How many characters of a label fit a box w pixels wide; under 3 there is no label. */
static size_t label_fit(double w)
{
	return w > 0 ? (size_t)(w / CHAR_W) : 0;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	uint32_t cp;

	while (*s) {
		size_t k = hs_utf8_next((const unsigned char *)s, &cp);
		s += k ? k : 1;
		n++;
	}
	return n;
}

/* Appends the label for fit characters: the name, or its start and "..". */
static void add_label(struct hs_strbuf *sb, const char *name, size_t fit)
{
	if (utf8_chars(name) <= fit) {
		hs_xml_add(sb, name, SIZE_MAX);
		return;
	}
	hs_xml_add(sb, name, fit - 2);
	hs_strbuf_adds(sb, "..");
}

/* ---- colours ---- */

static void add_rgb(struct hs_strbuf *sb, struct hs_rgb c)
{
	hs_strbuf_addf(sb, "rgb(%d,%d,%d)", c.r, c.g, c.b);
}

static void add_fill(struct hs_strbuf *sb, enum hs_palette pal, const char *name, uint8_t kind, bool inlined)
{
	add_rgb(sb, hs_flame_color(pal, name, kind, inlined));
}

static const char *kind_class(uint8_t kind)
{
	switch (kind) {
	case HS_KIND_KERNEL: return "kernel";
	case HS_KIND_JIT: return "jit";
	case HS_KIND_PSEUDO: return "pseudo";
	case HS_KIND_PYTHON: return "py";
	case HS_KIND_JAVA_INTERP: return "java-i";
	case HS_KIND_JAVA_C1: return "java-c1";
	case HS_KIND_JAVA_C2: return "java-c2";
	case HS_KIND_JS_INTERP: return "js-i";
	case HS_KIND_JS_BASELINE: return "js-b";
	case HS_KIND_JS_OPT: return "js-o";
	case HS_KIND_JS_BUILTIN: return "js-builtin";
	case HS_KIND_RUBY: return "rb";
	case HS_KIND_PHP: return "php";
	case HS_KIND_PERL: return "pl";
	default: return "user";
	}
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
	".frame.cut rect { stroke: #333; stroke-width: 1; stroke-dasharray: 3 2; }\n"
	".hide { display: none; }\n";

static void write_legend(const struct hs_flame_tree *t, struct hs_outfile *out, struct hs_strbuf *sb, int width, int y,
			 bool diff)
{
	const struct hs_legend_item *items = hs_flame_legend;
	static const struct {
		const char *label;
		double ratio;
	} diff_items[] = {{"grew", 1}, {"same", 0}, {"shrank", -1}};
	int step = 80, nitems = diff ? (int)HS_ARRAY_SIZE(diff_items) : (int)HS_FLAME_LEGEND_SIZE, x;
	int shown = diff ? nitems : 0;

	/* Between "Reset Zoom" and "Search" there is only room on a wide enough graph. */
	if (width < 700)
		return;
	for (int i = 0; !diff && i < nitems; i++)
		shown += hs_flame_legend_shows(t, &items[i]);
	x = width / 2 - step * shown / 2;
	hs_strbuf_reset(sb);
	hs_strbuf_adds(sb, "<g id=\"legend\">\n");
	for (int i = 0; i < nitems; i++, x += step) {
		if (!diff && !hs_flame_legend_shows(t, &items[i])) {
			x -= step;
			continue;
		}
		hs_strbuf_addf(sb, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" rx=\"2\" fill=\"", x, y - 10);
		if (diff)
			add_rgb(sb, hs_flame_diff_color(diff_items[i].ratio));
		else
			add_fill(sb, HS_PALETTE_KIND, items[i].sample, items[i].kind, items[i].inlined);
		hs_strbuf_addf(sb, "\"/><text x=\"%d\" y=\"%d\">%s</text>\n", x + 16, y,
			       diff ? diff_items[i].label : items[i].label);
	}
	hs_strbuf_adds(sb, "</g>\n");
	hs_outfile_write(out, sb->buf, sb->len);
}

struct draw {
	const struct hs_flame_tree *t;
	const struct hs_output_opts *o;
	const char *unit;
	double scale;
	int64_t total, base_total;
	bool diff;
	double max_delta;
};

/* A box at y; cls: "" or its state's classes, " hide" or " cut" (see the top of this file). */
static void write_box(struct hs_outfile *out, struct hs_strbuf *sb, const struct draw *d, const struct hs_flame_box *b,
		      int y, const char *cls)
{
	const struct hs_flame_node *n = b->node == UINT32_MAX ? NULL : &d->t->nodes.v[b->node];
	const char *name = n ? n->name : NULL;
	uint8_t kind = n ? n->kind : HS_KIND_PSEUDO;
	bool inlined = n && n->inlined;
	double x = XPAD + (double)b->off * d->scale, w = (double)b->value * d->scale;
	size_t fit = label_fit(w);
	char merged[48];

	if (!name) {
		snprintf(merged, sizeof(merged), "[%u small frames]", b->nmerged);
		name = merged;
	}
	hs_strbuf_reset(sb);
	hs_strbuf_addf(sb, "<g class=\"frame %s%s%s\"><title>", kind_class(kind), inlined ? " inline" : "", cls);
	hs_xml_add(sb, name, SIZE_MAX);
	if (n && *n->module) {
		const char *slash = strrchr(n->module, '/');
		hs_strbuf_adds(sb, " (");
		hs_xml_add(sb, slash ? slash + 1 : n->module, SIZE_MAX);
		hs_strbuf_addc(sb, ')');
	}
	hs_strbuf_adds(sb, " (");
	hs_value_xml_add(sb, b->value, d->unit);
	if (d->diff && n)
		hs_strbuf_addf(sb, ", was %.2f%%", d->base_total ? 100.0 * (double)n->base / (double)d->base_total : 0.0);
	hs_strbuf_addf(sb, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"",
		       100.0 * (double)b->value / (double)d->total, x, y, w, FRAME_H - 1);
	if (d->diff)
		add_rgb(sb, hs_flame_diff_color(n && d->max_delta > 0 ? hs_flame_delta(d->t, b->node) / d->max_delta : 0));
	else
		add_fill(sb, d->o->palette, name, kind, inlined);
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

/* The deepest row drawn: every frame up to MIN_ROWS rows, and the hot ones deeper. */
static uint32_t shown_depth(const struct hs_flame_boxes *boxes, int64_t total, uint32_t max_depth)
{
	uint32_t d = MIN_ROWS - 1;

	for (size_t i = 0; i < boxes->n && d < max_depth; i++)
		if (boxes->v[i].depth > d && (double)boxes->v[i].value >= HOT_SHARE * (double)total)
			d = boxes->v[i].depth;
	return HS_MIN(d, max_depth);
}

int hs_svg_from_tree(const struct hs_flame_tree *t, const struct hs_output_opts *o, const char *unit, bool diff,
		     struct hs_outfile *out)
{
	struct hs_flame_boxes boxes = {0};
	struct hs_strbuf sb = {0};
	struct draw d = {t, o, unit, 0, t->nodes.v[0].value, t->nodes.v[0].base, diff, 0};
	uint32_t max_depth = 0, shown;
	size_t ncut = 0;
	int width = o->width > 0 ? HS_MIN(o->width, MAX_WIDTH) : 1200;
	double min_width = o->min_width > 0 ? o->min_width : 0.1;
	int y_ctrl, top, bottom, height;

	width = HS_MAX(width, 2 * XPAD + 100);
	d.scale = d.total > 0 ? (width - 2.0 * XPAD) / (double)d.total : 0;
	if (d.total > 0)
		hs_flame_layout(t, min_width / d.scale, &boxes, &max_depth);
	if (diff)
		d.max_delta = hs_flame_max_delta(t);
	shown = shown_depth(&boxes, d.total, max_depth);
	for (size_t i = 0; i < boxes.n; i++)
		ncut += boxes.v[i].depth > shown;

	y_ctrl = o->subtitle ? 64 : 46;
	top = y_ctrl + 12;
	bottom = top + (int)(boxes.n ? shown + 1 : 2) * FRAME_H;
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
	hs_xml_add(&sb, o->title ? o->title : diff ? "Differential Flame Graph" : o->flamechart ? "Flame Chart" : "Flame Graph",
		   SIZE_MAX);
	hs_strbuf_adds(&sb, "</text>\n");
	if (o->subtitle) {
		hs_strbuf_addf(&sb, "<text id=\"subtitle\" x=\"%d\" y=\"44\">", width / 2);
		hs_xml_add(&sb, o->subtitle, SIZE_MAX);
		hs_strbuf_adds(&sb, "</text>\n");
	}
	hs_strbuf_addf(&sb,
		       "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
		       "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n"
		       "<text id=\"resetsearch\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Search</text>\n"
		       "<text id=\"details\" x=\"%d\" y=\"%d\">",
		       XPAD, y_ctrl, width - XPAD, y_ctrl, width - XPAD - 60, y_ctrl, XPAD, bottom + 20);
	if (ncut)
		hs_strbuf_addf(&sb, "%zu frames of cold stacks deeper than %u rows are cut: click a dashed frame to see them",
			       ncut, shown + 1);
	else
		hs_strbuf_adds(&sb, " ");
	hs_strbuf_addf(&sb, "</text>\n<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n", width - XPAD, bottom + 20);
	hs_outfile_write(out, sb.buf, sb.len);
	if (diff || o->palette == HS_PALETTE_KIND)
		write_legend(t, out, &sb, width, y_ctrl, diff);

	if (!boxes.n)
		hs_outfile_printf(out, "<text id=\"empty\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">No samples</text>\n",
				  width / 2, top + FRAME_H);
	hs_strbuf_reset(&sb);
	hs_strbuf_addf(&sb,
		       "<g id=\"frames\" data-width=\"%d\" data-pad=\"%d\" data-top=\"%d\" data-frame-height=\"%d\" "
		       "data-max-depth=\"%u\" data-min-rows=\"%d\" data-hot-share=\"%g\" data-inverted=\"%d\" "
		       "data-font-size=\"%d\" data-unit=\"",
		       width, XPAD, top, FRAME_H, shown, MIN_ROWS, HOT_SHARE, o->inverted ? 1 : 0, FONT_SIZE);
	hs_xml_add(&sb, unit, SIZE_MAX);
	hs_strbuf_adds(&sb, "\" data-match-fill=\"" MATCH_FILL "\">\n");
	hs_outfile_write(out, sb.buf, sb.len);
	for (size_t i = 0; i < boxes.n; i++) {
		const struct hs_flame_box *b = &boxes.v[i];
		/* a cut frame's row is outside the drawing: above its top, or below its bottom */
		int row = o->inverted ? (int)b->depth : (int)shown - (int)b->depth;
		bool cut = b->depth == shown && i + 1 < boxes.n && boxes.v[i + 1].depth > shown;
		write_box(out, &sb, &d, b, top + row * FRAME_H, b->depth > shown ? " hide" : cut ? " cut" : "");
	}
	hs_outfile_printf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
			  hs_svg_js);

	hs_strbuf_release(&sb);
	free(boxes.v);
	return out->err ? -out->err : 0;
}

int hs_write_svg(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	return hs_flame_draw(p, o, out, hs_svg_from_tree);
}
