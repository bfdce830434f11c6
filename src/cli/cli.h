/* What the subcommands share: messages in one grammar, loading inputs, writing outputs.
 * src/cli/ is the only code that prints to a person or exits. */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "output/output.h"
#include "profile/profile.h"
#include "util/util.h"

/* "hotstack: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...) HS_PRINTF(1, 2);
void cli_warn(const char *fmt, ...) HS_PRINTF(1, 2);
/* Progress and notes for a person: printed only when stderr is a terminal or verbose is set. */
void cli_info(const char *fmt, ...) HS_PRINTF(1, 2);
extern int cli_verbose;
extern int cli_quiet;

struct hs_load_opts;
/* Loads profile inputs, files or directories, merged into one (opts NULL: the defaults); prints
 * the error and returns NULL on failure. Warnings (a perf.data cut short, files changed since
 * the recording) are printed too, each input's. */
struct hs_profile *cli_load(const char *const *paths, size_t n, const struct hs_load_opts *opts);
/* Says how to get function names when most user-space samples have none. */
void cli_warn_unnamed(const struct hs_profile *p);
/* A detail for those who asked for them (-v), a line; lines: each line of it, "\n" between. */
void cli_detail(const char *fmt, ...) HS_PRINTF(1, 2);
void cli_detail_lines(const char *lines);
/* cli_warn() of each line of lines (each ended by "\n"). */
void cli_warn_lines(const char *lines);

/* Output paths gathered from repeated -o, with an optional --format for "-". */
struct cli_outputs {
	const char *path[16];
	int n;
	const char *format;
	bool say; /* "wrote FILE" even where stderr is no terminal: the end of a recording */
};
/* Adds -o PATH; returns -1 (after printing) when there are too many. */
int cli_outputs_add(struct cli_outputs *outs, const char *path);
/* The format each output path asks for; prints and returns -1 when one is unknown. Call before
 * doing long work so a bad -o fails fast. */
int cli_outputs_check(const struct cli_outputs *outs);
/* Writes p to every output, or with a (not NULL) the differential view of p against a (formats
 * with a write_diff); returns 0, or -1 if any failed (each failure printed). */
int cli_outputs_write(const struct cli_outputs *outs, const struct hs_profile *a, const struct hs_profile *p,
		      const struct hs_output_opts *o);
/* Says the one next step for the first output that has one ("next: open x.svg in a browser"). */
void cli_outputs_next(const struct cli_outputs *outs);

/* Options every writer understands (key: getopt's, hs_output_options_getopt()). Returns 1 if
 * the option was one of them (consumed), 0 if not, -1 on a bad value (printed). */
int cli_output_option(int key, const char *arg, struct hs_output_opts *o);
/* Prints the help of the options every writer understands (cli_output_option()), the formats
 * and extensions listed from hs_formats[]; views: those of the commands that read a profile. */
void cli_output_opts_help(FILE *fp, bool views);
/* Prints the help lines of the rows of t. */
void cli_options_help(FILE *fp, const struct hs_option *t);
/* Refuses (says so, returns -1) a writer option given that changes none of the outputs (as not
 * NULL: that is what every output is, e.g. hs_annotate_format). */
int cli_outputs_refuse(const struct cli_outputs *outs, const struct hs_format *as, const char *cmd);
/* Says in one line what getopt_long (opterr 0, optstring starting with ':') found wrong when it
 * returned c ('?' or ':'), and points to CMD --help; returns the exit status, 2. */
int cli_option_error(const char *cmd, int c, char **argv, const struct option *longopts);

/* --value TYPE resolved against a loaded profile; prints and returns -1 if absent. */
int cli_resolve_value(const struct hs_profile *p, struct hs_output_opts *o);
/* The value the view options ask for: "wall" for --wall, --value's name, or NULL (samples). */
const char *cli_value_wanted(void);

/* The format output i is written in (after cli_outputs_check()). */
const struct hs_format *cli_output_format(const struct cli_outputs *outs, int i);

struct hs_filter;
/* Replaces *p by its filtered copy when f filters anything (f->value_index taken from o);
 * prints and returns -1 on failure (a time window on a profile without timestamps). */
int cli_filter_apply(struct hs_filter *f, const struct hs_output_opts *o, struct hs_profile **p, const char *name);

int cmd_record(int argc, char **argv);
/* report, flame, convert, script, annotate: the command is argv[0]. */
int cmd_view(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
