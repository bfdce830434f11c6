#include "view-opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

enum { OPT_NO_DEMANGLE = OPT_CMD_BASE + 90, OPT_NO_INLINE, OPT_SYMFS };

const char cli_perf_data_help[] =
	"      --symfs DIR         perf.data: look the recording's files up under DIR first (DIR/PATH,\n"
	"                          and their debug files under DIR/usr/lib/debug): another machine's\n"
	"                          or an image's files\n"
	"      --no-demangle       perf.data: C++ and Rust symbols as they are in the symbol table\n"
	"      --no-inline         perf.data: no DWARF debug information: no inline frames, no\n"
	"                          source lines (faster where debug information is large)\n";

const struct option cli_symbol_longopts[] = {
	{"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
	{"no-inline", no_argument, NULL, OPT_NO_INLINE},
	{"symfs", required_argument, NULL, OPT_SYMFS},
	{0, 0, 0, 0},
};

static const struct option shared[] = {
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"input", required_argument, NULL, 'i'},
	{0, 0, 0, 0},
};

size_t cli_longopts_append(struct option *to, size_t n, size_t cap, const struct option *from)
{
	for (; from->name; from++) {
		if (n + 1 >= cap)
			abort(); /* a table too small: a programming error, found by any run */
		to[n++] = *from;
	}
	return n;
}

/* The getopt_long table: the shared options, --help, then own (terminated by an all-zero
 * entry), into longopts of cap entries; in this order getopt lists an ambiguous abbreviation's
 * matches. */
static void view_longopts(struct option *longopts, size_t cap, const struct option *own)
{
	static const struct option help[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
	size_t n = cli_longopts_append(longopts, 0, cap, cli_output_longopts);

	n = cli_longopts_append(longopts, n, cap, cli_filter_longopts);
	n = cli_longopts_append(longopts, n, cap, cli_report_longopts);
	n = cli_longopts_append(longopts, n, cap, shared);
	n = cli_longopts_append(longopts, n, cap, cli_symbol_longopts);
	n = cli_longopts_append(longopts, n, cap, help);
	n = cli_longopts_append(longopts, n, cap, own);
	longopts[n] = (struct option){0, 0, 0, 0};
}

int cli_symbol_option(int c, const char *arg, struct cli_symbol_opts *s)
{
	switch (c) {
	case OPT_NO_DEMANGLE:
		s->no_demangle = true;
		return 1;
	case OPT_NO_INLINE:
		s->no_inline = true;
		return 1;
	case OPT_SYMFS:
		s->symfs = arg;
		return 1;
	}
	return 0;
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
static int view_option(int c, const char *arg, struct cli_view_opts *v)
{
	struct cli_symbol_opts s = {v->lo.no_demangle, v->lo.no_inline, v->lo.symfs};
	int rc;

	switch (c) {
	case 'o':
		return cli_outputs_add(&v->outs, arg) ? -1 : 1;
	case OPT_FORMAT:
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
	}
	if (cli_symbol_option(c, arg, &s)) {
		/* a view checks --symfs as it comes */
		if (c == OPT_SYMFS && cli_symfs_check(arg))
			return -1;
		v->lo.no_demangle = s.no_demangle;
		v->lo.no_inline = s.no_inline;
		v->lo.symfs = s.symfs;
		return 1;
	}
	rc = cli_filter_option(c, arg, &v->f, &v->o);
	if (rc == 0)
		rc = cli_output_option(c, arg, &v->o);
	return rc;
}

int cli_view_parse(int argc, char **argv, const struct option *own, struct cli_view_opts *v,
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
			fputs(cli_perf_data_help, stdout);
			cli_output_opts_help(stdout, false);
			cli_output_opts_help(stdout, true);
			fputs(CLI_FILTER_OPTS_HELP, stdout);
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
