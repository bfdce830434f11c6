/* The options every command that reads profiles takes: outputs (-o, --format and the writers'
 * options), filters, -q, and how a perf.data is read (--no-demangle, --no-inline, --symfs). */
#ifndef HS_CLI_VIEW_OPTS_H
#define HS_CLI_VIEW_OPTS_H

#include <stdio.h>

#include "cli.h"
#include "profile/view-opts.h"

struct cli_view_opts {
	struct hs_output_opts o;
	struct hs_filter f;
	struct cli_outputs outs;
	struct hs_load_opts lo;
	const char *input;  /* -i FILE (perf's), or NULL */
	const char *symbol; /* not NULL: -s is annotate's -s/--symbol FUNCTION, set here ("": not given) */
};

/* 0 when symfs is a directory, else -1 after saying so. */
int cli_symfs_check(const char *symfs);

/* Reads the options of a command that reads profiles into v: the shared ones, -h, and own
 * (long options only, each a flag that getopt_long sets itself, or 's' where v->symbol is set).
 * usage(fp, ctx) prints the command's own usage. Returns -1 to go on, else what the command
 * exits with: 0 after --help, 2 after a wrong option (said in one line). */
int cli_view_parse(int argc, char **argv, const struct hs_option *own, struct cli_view_opts *v,
		   void (*usage)(FILE *fp, const void *ctx), const void *ctx);

#endif
