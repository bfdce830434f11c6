/* hotstack diff: a differential flame graph of two profiles (SVG or HTML; widths from the
 * second, colours by how each frame's share changed), or the two-column folded text of
 * FlameGraph's difffolded.pl. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "view-opts.h"
#include "profile/filter.h"
#include "profile/load.h"
#include "util/error.h"
#include "util/strbuf.h"

/* After the usage line, which lists the formats diff writes. */
static const char diff_help[] =
	"Differential flame graph of profile B against profile A: frames as wide as in B, red where\n"
	"their share of the total grew since A, blue where it shrank, the deepest colour for the\n"
	"largest change. .folded writes 'stack count_a count_b' lines (FlameGraph's difffolded.pl).\n"
	"OUT defaults to B's name with .diff.svg. With no A and B, as perf diff: hotstack.pb.gz.old and\n"
	"hotstack.pb.gz, else perf.data.old and perf.data; with B alone, A is the first .old file of those.\n"
	"With no -o on a terminal, the table of changes is printed too (-o - --format txt alone).\n"
	"\n"
	"      --normalize         .folded: A's counts scaled to B's total (difffolded.pl -n)\n"
	"  -q, --quiet             no warnings\n";

static int normalize; /* --normalize, set by getopt_long */

static void diff_usage(FILE *fp, const void *ctx)
{
	struct hs_strbuf sb = {0};

	hs_formats_list(&sb, true, true, "OUT", "|");
	fprintf(fp, "usage: hotstack diff [[A] B] [-o %s] [options]\n%s", hs_strbuf_str(&sb), diff_help);
	hs_strbuf_release(&sb);
}

/* Loads and filters one side; o->value_index is resolved against it. */
static struct hs_profile *load_side(const char *path, const struct hs_load_opts *lo, struct hs_filter *f,
				    struct hs_output_opts *o)
{
	struct hs_profile *p = cli_load(&path, 1, lo);

	if (!p)
		return NULL;
	o->value_index = 0;
	if (cli_resolve_value(p, o) || cli_filter_apply(f, o, &p, path)) {
		hs_profile_free(p);
		return NULL;
	}
	return p;
}

int cmd_diff(int argc, char **argv)
{
	static const struct hs_option own[] = {{"normalize", 1, no_argument, NULL, NULL, &normalize}, {0}};
	struct cli_view_opts v = {0};
	struct hs_profile *a = NULL, *b = NULL;
	const char *ab[2];
	struct hs_error err = {0};
	char *deflt = NULL;
	bool table; /* on a terminal with no -o: the text table too, as perf diff prints */
	int rc;

	rc = cli_view_parse(argc, argv, own, &v, diff_usage, NULL);
	if (rc >= 0)
		goto out;
	v.o.normalize = normalize;
	rc = 2;
	if (v.input) {
		cli_error("diff: -i does not apply: diff reads two profiles, A and B");
		goto out;
	}
	if (hs_profile_diff_inputs(argc - optind, argv + optind, ab, &err)) {
		cli_error("diff: %s%s", err.detail, argc - optind < 2 ? ": give A and B" : "");
		goto out;
	}
	table = !v.outs.n && isatty(STDOUT_FILENO);
	if (!v.outs.n) {
		deflt = strcmp(ab[1], "-") ? hs_output_name(ab[1], "", ".diff.svg") : hs_xstrdup("diff.svg");
		cli_outputs_add(&v.outs, deflt);
	}
	if (cli_outputs_check(&v.outs) || cli_outputs_refuse(&v.outs, NULL, argv[0]))
		goto out;
	if (hs_diff_outputs_check(v.outs.path, (size_t)v.outs.n, v.outs.format, normalize, &err)) {
		cli_error("%s", err.detail);
		goto out;
	}
	if (v.o.flamechart) {
		cli_error("--flamechart does not apply to diff: the time orders of two profiles do not line up");
		goto out;
	}
	if (cli_outputs_refuse(&v.outs, &hs_diff_format, argv[0]))
		goto out;
	v.lo.keep_time = v.f.time;
	rc = 1;
	a = load_side(ab[0], &v.lo, &v.f, &v.o);
	if (!a)
		goto out;
	v.o.base_value_index = v.o.value_index;
	b = load_side(ab[1], &v.lo, &v.f, &v.o);
	if (!b)
		goto out;
	if (table && hs_format_write_path(hs_format_from_name("txt"), "-", a, b, &v.o))
		cli_warn("cannot print the table of changes");
	rc = cli_outputs_write(&v.outs, a, b, &v.o) ? 1 : 0;
out:
	hs_profile_free(a);
	hs_profile_free(b);
	hs_filter_release(&v.f);
	free(deflt);
	return rc;
}
