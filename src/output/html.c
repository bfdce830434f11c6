/* The HTML flame graph: the same tree and interaction as the SVG (hover details, click to zoom,
 * regular-expression search), drawn on a canvas by html.js (compiled in as hs_html_js) from
 * compact arrays, so that profiles of hundreds of thousands of distinct stacks stay responsive
 * where one SVG element per frame would not. Nothing is merged unless --min-width asks.
 *
 * The document's hooks, for tests and scripts:
 *   #flamedata          <script type="application/json">: {"unit", "inverted", "diff", "total",
 *                       "names", "kinds" (0 user, 1 kernel, 2 JIT, 3 other, 4 Python, +8
 *                       inlined), "colors" (per name), where a name is a Python frame's
 *                       "modules" (per name: its source file's base name, else ""; left out
 *                       when no frame has one), "depth", "name", "value" (per frame, depth
 *                       first, root first), "legend" ([label, colour] pairs), and for
 *                       differential graphs "base", "baseTotal" and "color" (per frame, an
 *                       index into "dcolors")}
 *   canvas#flame        the frames; #tooltip follows the mouse over them
 *   #title #subtitle #details #matched #unzoom #resetsearch   as in the SVG (svg.c)
 *   #searchbox, #search the search field (Enter or the button; Ctrl-F focuses it, Esc resets)
 *   window.hotstackFlame {zoom(i), search(regex), resetSearch(), zoomed(), count(),
 *                       find(name) -> [i...], box(i) -> {x, y, w, h} in viewport pixels or null,
 *                       describe(i)}
 * A live page (o->refresh, hotstack --serve) says so in #subtitle and reloads itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers.h"

extern const char hs_html_js[];

#define KIND_INLINED 8 /* added to an enum hs_kind: one bit past every kind */

struct name_entry {
	const char *name;
	uint8_t kind;       /* enum hs_kind, + KIND_INLINED when inlined */
	const char *module; /* hs_flame_node's: a Python frame's file, else "" */
};

struct name_key {
	const struct name_entry *v;
	const char *name;
	uint8_t kind;
	const char *module;
};

static bool name_eq(const void *ctx, uint32_t id)
{
	const struct name_key *k = ctx;
	return k->v[id].kind == k->kind && !strcmp(k->v[id].name, k->name) && !strcmp(k->v[id].module, k->module);
}

static const char html_css[] =
	"body { margin: 0; padding: 8px 10px; font: 12px Verdana, 'DejaVu Sans', sans-serif; "
	"background: linear-gradient(#f4f4f8, #e6e6d8) fixed; }\n"
	"#bar { display: flex; align-items: center; gap: 10px; min-height: 28px; position: sticky; top: 0; "
	"z-index: 1; background: #f4f4f8; }\n"
	"#title { flex: 1; font-size: 17px; font-weight: normal; text-align: center; margin: 0; }\n"
	"#subtitle { text-align: center; color: #555; }\n"
	"#legend { text-align: center; margin: 4px 0; }\n"
	"#legend span { display: inline-block; margin: 0 10px; }\n"
	"#legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -2px; "
	"margin-right: 4px; }\n"
	"#chart { position: relative; }\n"
	"canvas { display: block; cursor: pointer; }\n"
	"#tooltip { position: fixed; pointer-events: none; background: #fffff0; border: 1px solid #888; "
	"padding: 3px 6px; max-width: 60em; word-break: break-all; box-shadow: 2px 2px 4px rgba(0,0,0,.3); }\n"
	"#foot { display: flex; justify-content: space-between; min-height: 18px; margin-top: 4px; }\n"
	"[hidden] { display: none !important; }\n";

/* A live page's reload (o->refresh, in ms): put off while its reader looks closer (a zoom, a
 * search, the search box in use), which a reload would undo. */
#define LIVE_JS                                                                                                  \
	"<script>\n(() => {\n"                                                                                   \
	"\tconst again = () => {\n"                                                                              \
	"\t\tconst f = window.hotstackFlame, box = document.getElementById('searchbox');\n"                      \
	"\t\tif (f && (f.zoomed() || f.searchTerm() || document.activeElement === box || (box && box.value)))\n" \
	"\t\t\tsetTimeout(again, 1000);\n"                                                                       \
	"\t\telse\n"                                                                                             \
	"\t\t\tlocation.reload();\n"                                                                             \
	"\t};\n"                                                                                                 \
	"\tsetTimeout(again, %u);\n"                                                                             \
	"})();\n</script>\n"

static void add_color(struct hs_strbuf *sb, struct hs_rgb c)
{
	hs_strbuf_addf(sb, "\"#%02x%02x%02x\"", c.r, c.g, c.b);
}

#define DIFF_STEPS 20 /* colour levels per direction in differential graphs */

static void add_legend(const struct hs_flame_tree *t, struct hs_strbuf *sb, const struct hs_output_opts *o, bool diff)
{
	const struct hs_legend_item *items = hs_flame_legend;

	hs_strbuf_adds(sb, ",\n\"legend\":[");
	if (diff) {
		hs_strbuf_adds(sb, "[\"grew\",");
		add_color(sb, hs_flame_diff_color(1));
		hs_strbuf_adds(sb, "],[\"same\",");
		add_color(sb, hs_flame_diff_color(0));
		hs_strbuf_adds(sb, "],[\"shrank\",");
		add_color(sb, hs_flame_diff_color(-1));
		hs_strbuf_adds(sb, "]");
	} else if (o->palette == HS_PALETTE_KIND) {
		for (size_t i = 0, shown = 0; i < HS_FLAME_LEGEND_SIZE; i++) {
			if (!hs_flame_legend_shows(t, &items[i]))
				continue;
			hs_strbuf_addf(sb, "%s[\"%s\",", shown++ ? "," : "", items[i].label);
			add_color(sb, hs_flame_color(HS_PALETTE_KIND, items[i].sample, items[i].kind, items[i].inlined));
			hs_strbuf_addc(sb, ']');
		}
	}
	hs_strbuf_addc(sb, ']');
}

int hs_html_from_tree(const struct hs_flame_tree *t, const struct hs_output_opts *o, const char *unit, bool diff,
		      struct hs_outfile *out)
{
	struct hs_flame_boxes boxes = {0};
	HS_VEC(struct name_entry) names = {0};
	HS_VEC(uint32_t) box_name = {0};
	HS_VEC(char *) merged = {0};
	struct hs_index ix = {0};
	struct hs_strbuf sb = {0};
	uint32_t max_depth = 0;
	bool modules = false;
	int64_t total = t->nodes.v[0].value;
	int width = o->width > 0 ? o->width : 1200;
	double max_delta = diff ? hs_flame_max_delta(t) : 0;
	const char *title = o->title ? o->title : diff ? "Differential Flame Graph" : o->flamechart ? "Flame Chart"
												     : "Flame Graph";

	if (total > 0)
		hs_flame_layout(t, o->min_width > 0 ? o->min_width * (double)total / width : 0, &boxes, &max_depth);
	for (size_t i = 0; i < boxes.n; i++) {
		const struct hs_flame_box *b = &boxes.v[i];
		struct name_key k;
		uint64_t h;
		uint32_t id;

		if (b->node == UINT32_MAX) {
			char buf[48];
			snprintf(buf, sizeof(buf), "[%u small frames]", b->nmerged);
			hs_vec_push(&merged, hs_xstrdup(buf));
			k.name = merged.v[merged.n - 1];
			k.kind = HS_KIND_PSEUDO;
			k.module = "";
		} else {
			const struct hs_flame_node *n = &t->nodes.v[b->node];
			k.name = n->name;
			k.kind = (uint8_t)(n->kind + (n->inlined ? KIND_INLINED : 0));
			k.module = n->module;
			modules |= *n->module != 0;
		}
		k.v = names.v;
		h = hs_hash_combine(hs_hash_bytes(k.name, strlen(k.name), 0), k.kind) ^
		    hs_hash_bytes(k.module, strlen(k.module), 0);
		id = hs_index_find(&ix, h, name_eq, &k);
		if (id == UINT32_MAX) {
			id = (uint32_t)names.n;
			hs_vec_push(&names, ((struct name_entry){k.name, k.kind, k.module}));
			hs_index_insert(&ix, h, id);
		}
		hs_vec_push(&box_name, id);
	}

	hs_strbuf_adds(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			    "<meta name=\"generator\" content=\"hotstack\">\n<title>");
	hs_xml_add(&sb, title, SIZE_MAX);
	hs_strbuf_addf(&sb, "</title>\n<style>\n%s</style>\n</head><body>\n<div id=\"bar\">"
			    "<button id=\"unzoom\" hidden>Reset Zoom</button><h1 id=\"title\">",
		       html_css);
	hs_xml_add(&sb, title, SIZE_MAX);
	hs_strbuf_adds(&sb, "</h1><form id=\"searchform\"><input id=\"searchbox\" type=\"search\" size=\"24\" "
			    "placeholder=\"regular expression\"> <button id=\"search\">Search</button> "
			    "<button type=\"button\" id=\"resetsearch\" hidden>Reset Search</button></form></div>\n");
	if (o->subtitle || o->refresh) {
		hs_strbuf_adds(&sb, "<div id=\"subtitle\">");
		if (o->refresh)
			hs_strbuf_addf(&sb, "Live: reloads every %u s, not while zoomed or searching%s", o->refresh,
				       o->subtitle ? " &#183; " : "");
		if (o->subtitle)
			hs_xml_add(&sb, o->subtitle, SIZE_MAX);
		hs_strbuf_adds(&sb, "</div>\n");
	}
	hs_strbuf_adds(&sb, "<div id=\"legend\"></div>\n<div id=\"chart\"><canvas id=\"flame\"></canvas></div>\n"
			    "<div id=\"foot\"><span id=\"details\">&#160;</span><span id=\"matched\"></span></div>\n"
			    "<div id=\"tooltip\" hidden></div>\n<script type=\"application/json\" id=\"flamedata\">\n{\"unit\":");
	hs_json_add(&sb, unit);
	hs_strbuf_addf(&sb, ",\"inverted\":%s,\"diff\":%s,\"total\":%lld,\"width\":%d", o->inverted ? "true" : "false",
		       diff ? "true" : "false", (long long)total, width);
	add_legend(t, &sb, o, diff);
	hs_outfile_write(out, sb.buf, sb.len);

	/* the name table */
	hs_outfile_puts(out, ",\n\"names\":[");
	for (size_t i = 0; i < names.n; i++) {
		hs_strbuf_reset(&sb);
		if (i)
			hs_strbuf_addc(&sb, ',');
		hs_json_add(&sb, names.v[i].name);
		hs_outfile_write(out, sb.buf, sb.len);
	}
	hs_outfile_puts(out, "],\n\"kinds\":[");
	for (size_t i = 0; i < names.n; i++)
		hs_outfile_printf(out, i ? ",%u" : "%u", names.v[i].kind);
	hs_outfile_puts(out, "],\n\"colors\":[");
	for (size_t i = 0; i < names.n; i++) {
		hs_strbuf_reset(&sb);
		if (i)
			hs_strbuf_addc(&sb, ',');
		add_color(&sb, hs_flame_color(o->palette, names.v[i].name, names.v[i].kind % KIND_INLINED,
					      names.v[i].kind >= KIND_INLINED));
		hs_outfile_write(out, sb.buf, sb.len);
	}
	if (modules) {
		hs_outfile_puts(out, "],\n\"modules\":[");
		for (size_t i = 0; i < names.n; i++) {
			const char *slash = strrchr(names.v[i].module, '/');
			hs_strbuf_reset(&sb);
			if (i)
				hs_strbuf_addc(&sb, ',');
			hs_json_add(&sb, slash ? slash + 1 : names.v[i].module);
			hs_outfile_write(out, sb.buf, sb.len);
		}
	}

	/* the frames, depth first */
	hs_outfile_puts(out, "],\n\"depth\":[");
	for (size_t i = 0; i < boxes.n; i++)
		hs_outfile_printf(out, i ? ",%u" : "%u", boxes.v[i].depth);
	hs_outfile_puts(out, "],\n\"name\":[");
	for (size_t i = 0; i < boxes.n; i++)
		hs_outfile_printf(out, i ? ",%u" : "%u", box_name.v[i]);
	hs_outfile_puts(out, "],\n\"value\":[");
	for (size_t i = 0; i < boxes.n; i++)
		hs_outfile_printf(out, i ? ",%lld" : "%lld", (long long)boxes.v[i].value);
	hs_outfile_puts(out, "]");
	if (diff) {
		hs_outfile_printf(out, ",\n\"baseTotal\":%lld,\n\"base\":[", (long long)t->nodes.v[0].base);
		for (size_t i = 0; i < boxes.n; i++)
			hs_outfile_printf(out, i ? ",%lld" : "%lld",
					  boxes.v[i].node == UINT32_MAX ? 0LL : (long long)t->nodes.v[boxes.v[i].node].base);
		hs_outfile_puts(out, "],\n\"dcolors\":[");
		for (int s = -DIFF_STEPS; s <= DIFF_STEPS; s++) {
			hs_strbuf_reset(&sb);
			if (s > -DIFF_STEPS)
				hs_strbuf_addc(&sb, ',');
			add_color(&sb, hs_flame_diff_color((double)s / DIFF_STEPS));
			hs_outfile_write(out, sb.buf, sb.len);
		}
		hs_outfile_puts(out, "],\n\"color\":[");
		for (size_t i = 0; i < boxes.n; i++) {
			double r = boxes.v[i].node != UINT32_MAX && max_delta > 0
					   ? hs_flame_delta(t, boxes.v[i].node) / max_delta
					   : 0;
			hs_outfile_printf(out, i ? ",%ld" : "%ld", lround(r * DIFF_STEPS) + DIFF_STEPS);
		}
		hs_outfile_puts(out, "]");
	}
	hs_outfile_printf(out, "}\n</script>\n<script>\n%s</script>\n", hs_html_js);
	if (o->refresh)
		hs_outfile_printf(out, LIVE_JS, o->refresh * 1000);
	hs_outfile_puts(out, "</body></html>\n");

	for (size_t i = 0; i < merged.n; i++)
		free(merged.v[i]);
	hs_vec_free(&merged);
	hs_vec_free(&names);
	hs_vec_free(&box_name);
	hs_index_release(&ix);
	hs_strbuf_release(&sb);
	free(boxes.v);
	return out->err ? -out->err : 0;
}

int hs_write_html(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	return hs_flame_draw(p, o, out, hs_html_from_tree);
}
