/* Differential views of two profiles: flame graphs (SVG, HTML) drawn from the second with
 * each frame coloured by how its share of the total changed from the first, as Brendan
 * Gregg's differential flame graphs, and the two-column folded text FlameGraph's
 * difffolded.pl writes ("stack count_a count_b") for flamegraph.pl to draw. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

const struct hs_format hs_diff_format = {.name = "diff"};

static uint32_t base_index(const struct hs_profile *a, const struct hs_output_opts *o)
{
	struct hs_output_opts ao = *o;

	ao.value_index = o->base_value_index;
	return hs_output_value_index(a, &ao);
}

/* difffolded.pl -n scales the first file's counts to the second's total, rounding down. */
static int64_t scaled(int64_t v, int64_t from, int64_t to)
{
	double x;

	if (from <= 0)
		return v;
	x = (double)v * (double)to / (double)from;
	/* a double past the int64 range does not convert: hold it at the ends, as sums are */
	if (x >= 9223372036854775807.0)
		return INT64_MAX;
	if (x <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)x;
}

int hs_write_folded_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
			 struct hs_outfile *out)
{
	struct hs_folded_line *la, *lb;
	uint32_t va = base_index(a, o), vb = hs_output_value_index(b, o);
	size_t na = hs_folded_lines(a, o, va, &la), nb = hs_folded_lines(b, o, vb, &lb), i = 0, j = 0;
	int64_t ta = a->types.n ? hs_profile_total(a, va) : 0, tb = b->types.n ? hs_profile_total(b, vb) : 0;

	/* both lists are sorted by text: merge them */
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(la[i].text, lb[j].text);
		const struct hs_folded_line *l = c <= 0 ? &la[i] : &lb[j];
		int64_t ca = c <= 0 ? la[i].value : 0, cb = c >= 0 ? lb[j].value : 0;

		if (o->normalize)
			ca = scaled(ca, ta, tb);
		if (ca > 0 || cb > 0) {
			hs_outfile_write(out, l->text, l->len);
			hs_outfile_printf(out, " %lld %lld\n", (long long)HS_MAX(ca, 0), (long long)HS_MAX(cb, 0));
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	hs_folded_lines_free(la, na);
	hs_folded_lines_free(lb, nb);
	return out->err ? -out->err : 0;
}

static int flame_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
		      struct hs_outfile *out, hs_tree_drawer *draw)
{
	struct hs_output_opts d = *o;
	struct hs_flame_tree t;
	uint32_t vb = hs_output_value_index(b, o);
	int rc;

	d.flamechart = false; /* time orders of two recordings do not line up */
	hs_flame_tree_init(&t);
	hs_flame_tree_add(&t, b, &d, vb, false);
	hs_flame_tree_add(&t, a, &d, base_index(a, o), true);
	hs_flame_tree_finish(&t);
	rc = draw(&t, &d, hs_value_unit_name(b, vb), true, out);
	hs_flame_tree_release(&t);
	return rc;
}

int hs_write_svg_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
		      struct hs_outfile *out)
{
	return flame_diff(a, b, o, out, hs_svg_from_tree);
}

int hs_write_html_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
		       struct hs_outfile *out)
{
	return flame_diff(a, b, o, out, hs_html_from_tree);
}

/* ---- the text diff: functions by how their share changed ---- */

struct diff_row {
	const char *name, *module; /* borrowed from a or b; module's base name */
	int64_t self[2], total[2];
	double dself, dtotal; /* change of share, in points */
};

struct diff_rows {
	struct diff_row *v;
	size_t n, cap;
};

static int row_name_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->module, b->module);
}

static double points(int64_t v, int64_t sum)
{
	return sum ? 100.0 * (double)v / (double)sum : 0.0;
}

static double absd(double x)
{
	return x < 0 ? -x : x;
}

static int by_dself(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	if (absd(a->dself) != absd(b->dself))
		return absd(a->dself) > absd(b->dself) ? -1 : 1;
	return row_name_cmp(x, y);
}

static int by_dtotal(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	if (absd(a->dtotal) != absd(b->dtotal))
		return absd(a->dtotal) > absd(b->dtotal) ? -1 : 1;
	return row_name_cmp(x, y);
}

/* The functions of p (side 0 or 1), by name and module's base name, appended to rows. */
static void diff_side(const struct hs_profile *p, uint32_t vi, int side, struct hs_report_fns *fns,
		      struct diff_rows *rows)
{
	hs_report_fns(p, vi, false, fns);
	for (size_t i = 0; i < fns->n; i++) {
		const char *mod = hs_profile_str(p, fns->v[i].module), *slash = strrchr(mod, '/');
		struct diff_row r = {fns->v[i].name ? hs_profile_str(p, fns->v[i].name) : "[unknown]",
				     slash ? slash + 1 : mod,
				     {0},
				     {0},
				     0,
				     0};

		r.self[side] = fns->v[i].self;
		r.total[side] = fns->v[i].total;
		hs_vec_push(rows, r);
	}
}

static void diff_table(struct hs_outfile *out, struct diff_row *rows, size_t n, int top, bool self_first)
{
	qsort(rows, n, sizeof(*rows), self_first ? by_dself : by_dtotal);
	hs_outfile_printf(out, "\nFunctions by change of their share of %s:\n", self_first ? "self" : "total");
	hs_outfile_printf(out, "%8s %8s %9s  %8s %8s %9s  %s\n", "self A", "self B", "change", "total A", "total B",
			  "change", "function");
	for (size_t i = 0; i < n && (int)i < top; i++) {
		const struct diff_row *r = &rows[i];
		double d = self_first ? r->dself : r->dtotal;

		if (d == 0 && (self_first || r->total[0] == r->total[1]))
			break;
		hs_outfile_printf(out, "%7.2f%% %7.2f%% %+8.2f%%  %7.2f%% %7.2f%% %+8.2f%%  %s", r->self[0] / 1e4,
				  r->self[1] / 1e4, r->dself, r->total[0] / 1e4, r->total[1] / 1e4, r->dtotal, r->name);
		if (*r->module)
			hs_outfile_printf(out, *r->module == '[' ? "  %s" : "  [%s]", r->module);
		if (!r->total[0])
			hs_outfile_puts(out, "  (new)");
		else if (!r->total[1])
			hs_outfile_puts(out, "  (gone)");
		hs_outfile_puts(out, "\n");
	}
}

int hs_write_report_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
			 struct hs_outfile *out)
{
	struct diff_rows rows = {0};
	struct hs_report_fns fa = {0}, fb = {0};
	uint32_t va = base_index(a, o), vb = hs_output_value_index(b, o);
	int64_t ta = hs_profile_total(a, va), tb = hs_profile_total(b, vb);
	int top = o->top > 0 ? o->top : 20;
	char b1[HS_VALUE_BUF], b2[HS_VALUE_BUF];
	size_t n = 0;

	diff_side(a, va, 0, &fa, &rows);
	diff_side(b, vb, 1, &fb, &rows);
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), row_name_cmp);
	/* merge the two sides' rows of one function; shares kept in 1e-4 points in the counts */
	for (size_t i = 0; i < rows.n; i++) {
		if (n && !row_name_cmp(&rows.v[n - 1], &rows.v[i])) {
			for (int s = 0; s < 2; s++) {
				rows.v[n - 1].self[s] += rows.v[i].self[s];
				rows.v[n - 1].total[s] += rows.v[i].total[s];
			}
		} else {
			rows.v[n++] = rows.v[i];
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct diff_row *r = &rows.v[i];
		double s0 = points(r->self[0], ta), s1 = points(r->self[1], tb);
		double t0 = points(r->total[0], ta), t1 = points(r->total[1], tb);

		r->dself = s1 - s0;
		r->dtotal = t1 - t0;
		r->self[0] = (int64_t)(s0 * 1e4);
		r->self[1] = (int64_t)(s1 * 1e4);
		r->total[0] = r->total[0] ? HS_MAX((int64_t)(t0 * 1e4), 1) : 0;
		r->total[1] = r->total[1] ? HS_MAX((int64_t)(t1 * 1e4), 1) : 0;
	}
	hs_outfile_printf(out, "# A: %s %s, B: %s %s; shares of each profile's own total, change B - A in points\n",
			  hs_value_fmt(b1, ta, a->types.n ? hs_profile_str(a, a->types.v[va].unit) : ""),
			  hs_value_unit_name(a, va),
			  hs_value_fmt(b2, tb, b->types.n ? hs_profile_str(b, b->types.v[vb].unit) : ""),
			  hs_value_unit_name(b, vb));
	diff_table(out, rows.v, n, top, true);
	diff_table(out, rows.v, n, top, false);
	hs_vec_free(&rows);
	hs_vec_free(&fa);
	hs_vec_free(&fb);
	return out->err ? -out->err : 0;
}
