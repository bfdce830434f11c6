/* The commands that read saved profiles and write views of them: report, flame, convert, script,
 * annotate. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "view-opts.h"
#include "profile/filter.h"
#include "profile/load.h"
#include "util/strbuf.h"

enum view { VIEW_REPORT, VIEW_FLAME, VIEW_CONVERT, VIEW_SCRIPT, VIEW_ANNOTATE };

static const char *const view_usage[] = {
	[VIEW_REPORT] = "usage: hotstack report [FILE... | -i FILE] [options]\n"
			"Text report of the profile in FILE (default: a pipe on standard input, else hotstack.pb.gz,\n"
			"else perf.data) on standard output, as perf report --stdio. Several FILEs, or a directory\n"
			"(its files but dot-files, the profiles among them), are read as one profile.\n"
			"  -i, --input FILE        the profile read, as FILE (perf report -i)\n"
			"      --stdio             taken: the report is text (perf report --stdio; --tui refused)\n",
	[VIEW_FLAME] =
		"usage: hotstack flame [FILE...] [-o OUT.svg|OUT.html] [options]\n"
		"Interactive flame graph of FILE... (as report's; default: a pipe on stdin, else hotstack.pb.gz,\n"
		"else perf.data): SVG, or HTML (a canvas, for profiles too large for an SVG); OUT: FILE's\n"
		"name with .svg (hotstack.svg for several).\n",
	[VIEW_CONVERT] = "usage: hotstack convert [FILE...] -o OUT [-o OUT...] [options]\n"
			 "Reads FILE... (as report's), any profiles hotstack reads (perf.data, pprof, folded,\n"
			 "speedscope), and writes each OUT in the format its extension names.\n",
	[VIEW_SCRIPT] = "usage: hotstack script [FILE] [-o OUT]\n"
			"Every sample of FILE (default: a pipe on stdin, else perf.data) as perf script prints it: a\n"
			"header line, then an 'address symbol+offset (module)' line per frame. Stacks are unwound and\n"
			"named by hotstack.\n",
	[VIEW_ANNOTATE] = "usage: hotstack annotate [-s|--symbol] FUNCTION [FILE...] [options]\n"
			  "Samples per source line of FUNCTION (name, else regex); FILE... (default) as report's\n"
			  "  -s, --symbol FUNCTION   FUNCTION (perf annotate -s); -i FILE, --stdio as in report\n",
};

static void view_usage_print(FILE *fp, const void *ctx)
{
	fputs(view_usage[*(const enum view *)ctx], fp);
}

/* The view a command asks for, by its name (main.c's table). */
static enum view view_of(const char *cmd)
{
	static const char *const names[] = {"report", "flame", "convert", "script", "annotate"};
	enum view view = VIEW_REPORT;

	while (view < VIEW_ANNOTATE && strcmp(cmd, names[view]))
		view++;
	return view;
}

int cmd_view(int argc, char **argv)
{
	enum view view = view_of(argv[0]);
	static int tui; /* perf's --stdio is what the report is; --tui, --gtk are not */
	/* annotate's: perf annotate's -s/--symbol FUNCTION, then report's */
	static const struct hs_option own[] = {{0}}, view_own[] = {
		{"symbol", 's', required_argument}, {"stdio", 0, no_argument, NULL, NULL, &tui},
		{"tui", 1, no_argument, NULL, NULL, &tui}, {"gtk", 1, no_argument, NULL, NULL, &tui}, {0}};
	struct cli_view_opts v = {.symbol = view == VIEW_ANNOTATE ? "" : NULL};
	struct hs_strbuf sb = {0};
	struct hs_profile *p = NULL;
	const char *const *in = &v.input, *name; /* the inputs read, nin of them */
	size_t nin = 1;
	char *deflt = NULL;
	int rc;

	rc = cli_view_parse(argc, argv,
			    view == VIEW_ANNOTATE ? view_own
			    : view == VIEW_REPORT ? &view_own[1]
						  : own,
			    &v, view_usage_print, &view);
	if (rc >= 0)
		goto out;
	if (tui) {
		cli_error("%s: no --tui or --gtk: the report is text on standard output (perf report --stdio)",
			  argv[0]);
		goto usage_error;
	}
	if (view == VIEW_ANNOTATE && optind == argc && !*v.symbol) {
		cli_error("annotate needs a FUNCTION");
		goto usage_error;
	}
	v.o.annotate = view != VIEW_ANNOTATE ? NULL : *v.symbol ? v.symbol : argv[optind++];
	if (optind < argc && !v.input) { /* FILE... (script: one) */
		in = (const char *const *)argv + optind;
		nin = view == VIEW_SCRIPT ? 1 : (size_t)(argc - optind);
		optind += (int)nin;
	} else if (!v.input) {
		if (!(v.input = hs_profile_default_input(view == VIEW_SCRIPT))) {
			cli_error("%s: no hotstack.pb.gz or perf.data here: give a FILE", argv[0]);
			goto usage_error;
		}
		cli_info("reading %s", strcmp(v.input, "-") ? v.input : "standard input");
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		goto usage_error;
	}
	if (!v.outs.n) {
		switch (view) {
		case VIEW_SCRIPT:
		case VIEW_REPORT:
		case VIEW_ANNOTATE:
			cli_outputs_add(&v.outs, "-");
			if (view == VIEW_SCRIPT || !v.outs.format) /* else report's --format json */
				v.outs.format = view == VIEW_SCRIPT ? "script" : "txt";
			break;
		case VIEW_FLAME:
			deflt = hs_output_name(nin > 1 ? "-" : in[0], "hotstack",
					       v.outs.format && !strcmp(v.outs.format, "html") ? ".html" : ".svg");
			cli_outputs_add(&v.outs, deflt);
			break;
		case VIEW_CONVERT:
			cli_error("convert needs at least one -o OUTPUT");
			goto usage_error;
		}
	}
	if ((view == VIEW_FLAME || view == VIEW_ANNOTATE) && !v.outs.format)
		v.outs.format = view == VIEW_FLAME ? "svg" : "txt";
	if (cli_outputs_check(&v.outs) ||
	    cli_outputs_refuse(&v.outs, view == VIEW_ANNOTATE ? &hs_annotate_format : NULL, argv[0]))
		goto usage_error;
	for (int i = 0; view == VIEW_ANNOTATE && i < v.outs.n; i++)
		if (strcmp(cli_output_format(&v.outs, i)->name, "txt")) {
			cli_error("annotate writes text only, not %s ('%s')",
				  hs_format_noun(cli_output_format(&v.outs, i)), v.outs.path[i]);
			goto usage_error;
		}
	/* perf.data keeps every sample's time where a view uses it: the order of samples
	 * (flame charts, script), time windows, and the formats whose rows use them (speedscope's
	 * order, pprof's timestamp labels) */
	v.lo.keep_time = view == VIEW_SCRIPT || v.f.time || v.o.flamechart ||
			 hs_outputs_times(v.outs.path, (size_t)v.outs.n, v.outs.format) != HS_TIMES_UNUSED;
	p = cli_load(in, nin, &v.lo);
	name = nin > 1 ? "the inputs" : in[0];
	rc = 1;
	if (!p || cli_resolve_value(p, &v.o) || cli_filter_apply(&v.f, &v.o, &p, name))
		goto out;
	if (v.o.flamechart && !hs_profile_has_time(p))
		cli_error("%s: --flamechart needs timestamps, and this profile kept none (record with --keep-time, "
			  "or read a perf.data)",
			  strcmp(name, "-") ? name : "<stdin>");
	else if (v.o.annotate && hs_annotate_check(p, &v.o, &sb))
		cli_error("no function '%s' in %s%s", v.o.annotate, name, hs_strbuf_str(&sb));
	else
		rc = cli_outputs_write(&v.outs, NULL, p, &v.o) ? 1 : 0;
	goto out;
usage_error:
	rc = 2;
out:
	hs_strbuf_release(&sb);
	hs_profile_free(p);
	hs_filter_release(&v.f);
	free(deflt);
	return rc;
}
