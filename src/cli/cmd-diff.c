/* hotstack diff: a differential flame graph of two profiles (SVG or HTML; widths from the
 * second, colours by how each frame's share changed), or the two-column folded text of
 * FlameGraph's difffolded.pl. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "view-opts.h"
#include "profile/filter.h"
#include "profile/load.h"
#include "util/strbuf.h"

/* After the usage line, which lists the formats diff writes. */
static const char diff_help[] =
	"Differential flame graph of profile B against profile A: frames as wide as in B, red where\n"
	"their share of the total grew since A, blue where it shrank, the deepest colour for the\n"
	"largest change. .folded writes 'stack count_a count_b' lines (FlameGraph's difffolded.pl).\n"
	"OUT defaults to B's name with .diff.svg.\n"
	"\n"
	"      --normalize         .folded: A's counts scaled to B's total (difffolded.pl -n)\n"
	"  -q, --quiet             no warnings\n";

enum { OPT_NORMALIZE = OPT_CMD_BASE };

static void diff_usage(FILE *fp)
{
	struct hs_strbuf sb = {0};

	hs_formats_list(&sb, true, true, "OUT", "|");
	fprintf(fp, "usage: hotstack diff A B [-o %s] [options]\n%s", hs_strbuf_str(&sb), diff_help);
	hs_strbuf_release(&sb);
}

/* Loads and filters one side; o->value_index is resolved against it. */
static struct hs_profile *load_side(const char *path, const struct hs_load_opts *lo, struct hs_filter *f,
				    struct hs_output_opts *o)
{
	struct hs_profile *p = cli_load_ex(path, lo);

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
	static const struct option own[] = {
		{"help", no_argument, NULL, 'h'},
		{"normalize", no_argument, NULL, OPT_NORMALIZE},
		{0, 0, 0, 0},
	};
	struct option longopts[96];
	struct cli_view_opts v = {0};
	struct hs_output_opts *o = &v.o;
	struct hs_filter *f = &v.f;
	struct cli_outputs *outs = &v.outs;
	struct hs_load_opts *lo = &v.lo;
	struct hs_profile *a = NULL, *b = NULL;
	char *deflt = NULL;
	int c, rc = 2;

	cli_view_longopts(longopts, HS_ARRAY_SIZE(longopts), own);
	while ((c = getopt_long(argc, argv, "o:hq", longopts, NULL)) != -1) {
		if (c == 'h') {
			diff_usage(stdout);
			fputs(cli_perf_data_help, stdout);
			cli_output_opts_help(stdout);
			fputs(CLI_FILTER_OPTS_HELP, stdout);
			rc = 0;
			goto out;
		}
		if (c == OPT_NORMALIZE) {
			o->normalize = true;
			continue;
		}
		rc = cli_view_option(c, optarg, &v);
		if (rc == 1)
			continue;
		if (rc == 0)
			diff_usage(stderr);
		rc = 2;
		goto out;
	}
	rc = 2;
	if (argc - optind != 2) {
		cli_error(argc - optind < 2 ? "diff needs two profiles, A and B" : "unexpected argument '%s'",
			  argv[HS_MIN(optind + 2, argc - 1)]);
		goto out;
	}
	if (!outs->n) {
		deflt = strcmp(argv[optind + 1], "-") ? hs_output_name(argv[optind + 1], "", ".diff.svg")
						      : hs_xstrdup("diff.svg");
		cli_outputs_add(outs, deflt);
	}
	if (cli_outputs_check(outs))
		goto out;
	for (int i = 0; i < outs->n; i++) {
		if (!cli_output_format(outs, i)->write_diff) {
			struct hs_strbuf sb = {0};
			hs_formats_diff_help(&sb);
			cli_error("diff writes %s, not '%s'", hs_strbuf_str(&sb), outs->path[i]);
			hs_strbuf_release(&sb);
			goto out;
		}
	}
	if (o->flamechart) {
		cli_error("--flamechart does not apply to diff: the time orders of two profiles do not line up");
		goto out;
	}
	lo->keep_time = f->time;
	rc = 1;
	a = load_side(argv[optind], lo, f, o);
	if (!a)
		goto out;
	o->base_value_index = o->value_index;
	b = load_side(argv[optind + 1], lo, f, o);
	if (!b)
		goto out;
	rc = cli_outputs_write(outs, a, b, o) ? 1 : 0;
out:
	hs_profile_free(a);
	hs_profile_free(b);
	hs_filter_release(f);
	free(deflt);
	return rc;
}
