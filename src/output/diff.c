/* Differential views of two profiles: flame graphs (SVG, HTML) drawn from the second with
 * each frame coloured by how its share of the total changed from the first, as Brendan
 * Gregg's differential flame graphs, and the two-column folded text FlameGraph's
 * difffolded.pl writes ("stack count_a count_b") for flamegraph.pl to draw. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

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
