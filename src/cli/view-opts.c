/* The options of the commands that read profiles: getopt's table from the layers' rows, --help,
 * and each value handed to the layer that takes it. */
#include "view-opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

static const struct hs_option shared[] = {
	{"output", 'o', required_argument},
	{"quiet", 'q', no_argument},
	{"input", 'i', required_argument},
	HS_OPTIONS(hs_load_symbol_options),
	{"help", 'h', no_argument},
	{0},
};

/* The getopt_long table: the writers' options, the filters, the shared options, --help, then
 * own, into longopts of cap entries. */
static void view_longopts(struct option *longopts, size_t cap, const struct hs_option *own)
{
	size_t n = hs_output_options_getopt(longopts, 0, cap, false);

	n = hs_options_getopt(hs_filter_options, longopts, n, cap);
	n = hs_output_options_getopt(longopts, n, cap, true);
	n = hs_options_getopt(shared, longopts, n, cap);
	hs_options_getopt(own, longopts, n, cap);
}

int cli_symfs_check(const char *symfs)
{
	struct stat st;

	if (stat(symfs, &st) || !S_ISDIR(st.st_mode)) {
		cli_error("--symfs: '%s' is not a directory", symfs);
		return -1;
	}
	return 0;
}

/* Takes shared option c: 1 when taken, 0 when it is not one of them, -1 when its value is
 * wrong (a message said why). */
/* Takes shared option c: 1 when taken, 0 when it is not one of them, -1 when its value is
 * wrong (a message said why). */
static int view_option(int c, const char *arg, struct cli_view_opts *v)
{
	struct hs_error err = {0};
	int rc;

	switch (c) {
	case 'o':
		return cli_outputs_add(&v->outs, arg) ? -1 : 1;
	case HS_OUTPUT_FORMAT_KEY:
		v->outs.format = arg;
		return 1;
	case 'q':
		cli_quiet = 1;
		return 1;
	case 'i':
		v->input = arg;
		return 1;
	case 's':
		if (!v->symbol)
			break; /* --sort's */
		v->symbol = arg;
		return 1;
	case HS_LOAD_SYMFS: /* a view checks --symfs as it comes */
		if (cli_symfs_check(arg))
			return -1;
	}
	if ((rc = hs_load_symbol_option(&v->lo, c, arg)))
		return rc;
	rc = hs_filter_option(&v->f, c, arg, &v->o.tree_min, &err);
	if (rc < 0)
		cli_error("%s", err.detail);
	return rc ? rc : cli_output_option(c, arg, &v->o);
}

int cli_view_parse(int argc, char **argv, const struct hs_option *own, struct cli_view_opts *v,
		   void (*usage)(FILE *fp, const void *ctx), const void *ctx)
{
	struct option longopts[96];
	int c, rc;

	view_longopts(longopts, HS_ARRAY_SIZE(longopts), own);
	while ((c = getopt_long(argc, argv, ":o:hqi:g::s:", longopts, NULL)) != -1) {
		if (c == 0) /* a flag of the command's own */
			continue;
		if (c == '?' || c == ':')
			return cli_option_error(argv[0], c, argv, longopts);
		if (c == 'h') {
			usage(stdout, ctx);
			cli_options_help(stdout, hs_load_symbol_options);
			cli_output_opts_help(stdout, false);
			cli_output_opts_help(stdout, true);
			cli_options_help(stdout, hs_filter_options);
			return 0;
		}
		/* perf's "-g caller": the value in the next word, where it is one or no file's name */
		if (c == 'g' && !optarg && optind < argc &&
		    (hs_report_callgraph_like(argv[optind]) ||
		     (!strpbrk(argv[optind], "./-") && access(argv[optind], F_OK))))
			optarg = argv[optind++];
		rc = view_option(c, optarg, v);
		if (rc == 1)
			continue;
		return 2;
	}
	return -1;
}
