/* The options every command that reads profiles takes: outputs (-o, --format and the writers'
 * options), filters, -q, and how a perf.data is read (--no-demangle, --no-inline, --symfs). */
#ifndef HS_CLI_VIEW_OPTS_H
#define HS_CLI_VIEW_OPTS_H

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "profile/filter.h"
#include "profile/load.h"

struct cli_view_opts {
	struct hs_output_opts o;
	struct hs_filter f;
	struct cli_outputs outs;
	struct hs_load_opts lo;
	const char *input;  /* -i FILE (perf's), or NULL */
	const char *symbol; /* not NULL: -s is annotate's -s/--symbol FUNCTION, set here ("": not given) */
};

/* What --help says of the perf.data options. */
extern const char cli_perf_data_help[];

/* How the sampled files are read for names (record, and the views of a perf.data):
 * --no-demangle, --no-inline, --symfs DIR. */
struct cli_symbol_opts {
	bool no_demangle;
	bool no_inline;
	const char *symfs; /* borrowed from argv */
};
/* getopt_long entries for cli_symbol_option, terminated by an all-zero entry. */
extern const struct option cli_symbol_longopts[];
/* Takes symbol option c: 1 when taken, 0 when it is not one of them. --symfs is checked
 * apart, by cli_symfs_check(), when the command checks its other values. */
int cli_symbol_option(int c, const char *arg, struct cli_symbol_opts *s);
/* 0 when symfs is a directory, else -1 after saying so. */
int cli_symfs_check(const char *symfs);

/* Appends the entries of from (up to its all-zero one) to to, which holds n of cap; returns the
 * new n, one short of cap at most (room for the terminator). */
size_t cli_longopts_append(struct option *to, size_t n, size_t cap, const struct option *from);
/* Reads the options of a command that reads profiles into v: the shared ones, -h, and own
 * (long options only, each a flag that getopt_long sets itself, or 's' where v->symbol is set;
 * terminated by an all-zero entry). usage(fp, ctx) prints the command's own usage. Returns -1 to go on, else what the
 * command exits with: 0 after --help, 2 after a wrong option (said in one line). */
int cli_view_parse(int argc, char **argv, const struct option *own, struct cli_view_opts *v,
		   void (*usage)(FILE *fp, const void *ctx), const void *ctx);

#endif
