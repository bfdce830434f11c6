/* hotstack collapse: perf script text to folded stacks, line for line what FlameGraph's
 * stackcollapse-perf.pl prints for the same input and options (the engine is in
 * src/collapse/); here are its options and its messages. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "collapse/collapse.h"
#include "util/outfile.h"

static const char collapse_usage[] =
	"usage: hotstack collapse [FILE|-] [options]\n"
	"Folds `perf script` text (FILE, gzipped or not; standard input by default) into one line\n"
	"per distinct stack, \"comm;root;...;leaf count\", as stackcollapse-perf.pl does.\n"
	"\n";

static void print_warning(void *ctx, const char *msg)
{
	cli_warn("%s", msg);
}

static void collapse_error(const struct hs_error *err, const char *path)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";

	if (err->cause == HS_COLLAPSE_CANNOT_READ)
		cli_error("cannot read '%s': %s", path, strerror(-err->code));
	else if (err->line)
		cli_error("%s: line %llu: %s%s", name, (unsigned long long)err->line, err->detail,
			  err->code == -EMEDIUMTYPE ? ": run 'perf script' on it" : "");
	else
		cli_error("%s: %s", name, err->detail);
}

int cmd_collapse(int argc, char **argv)
{
	struct option longopts[32];
	struct hs_collapse_opts co = {.warn = print_warning};
	struct hs_collapse *c;
	struct hs_error err = {0};
	struct hs_outfile of;
	const char *path = "-", *out = "-";
	int ch, rc;

	hs_options_getopt(hs_collapse_options, longopts, 0, HS_ARRAY_SIZE(longopts));
	while ((ch = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			cli_quiet = 1;
			break;
		case 'h':
			fputs(collapse_usage, stdout);
			cli_options_help(stdout, hs_collapse_options);
			return 0;
		default:
			if (!hs_collapse_option(&co, ch, optarg))
				return cli_option_error(argv[0], ch, argv, longopts);
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	rc = hs_outfile_open(&of, out);
	if (rc) {
		cli_error("cannot write '%s': %s", out, strerror(-rc));
		hs_outfile_abort(&of);
		return 1;
	}
	c = hs_collapse_new(&co);
	rc = hs_collapse_read(c, path, &err);
	if (rc) {
		collapse_error(&err, path);
		hs_outfile_abort(&of);
	} else {
		hs_collapse_write(c, &of);
		rc = hs_outfile_commit(&of);
		if (rc)
			cli_error("cannot write '%s': %s", out, strerror(-rc));
	}
	hs_collapse_free(c);
	return rc ? 1 : 0;
}
