/* A command's options as a table: each row its long name, its key for getopt_long and its --help
 * lines, so that a layer declares the options it takes in one place, a line each, and the CLI
 * builds getopt's table and the help from the rows. */
#ifndef HS_UTIL_OPTION_H
#define HS_UTIL_OPTION_H

#include <getopt.h>
#include <stddef.h>

#include "util/error.h"

struct hs_strbuf;

struct hs_option {
	const char *name; /* the long option, without "--"; NULL: a row of help, or more's rows */
	int key;          /* what getopt_long returns: the short option's letter, or a code below */
	int arg;          /* no_argument, required_argument or optional_argument */
	const char *help; /* its --help lines, each ending in "\n"; NULL: said in a neighbour's */
	const struct hs_option *more; /* with name NULL: the rows of this table, here */
	int *flag;        /* not NULL: getopt_long sets *flag to key, and returns 0 */
};
/* The rows of table t, in place of this row. A table ends with an all-zero row. */
#define HS_OPTIONS(t) {NULL, 0, 0, NULL, t}

/* The codes of long options with no short letter: a range per layer, so that one command's
 * table takes rows of several. */
enum {
	HS_OPT_OUTPUT = 1000,
	HS_OPT_FILTER = 1100,
	HS_OPT_SYMBOL = 1150,
	HS_OPT_RECORD = 1200,
	HS_OPT_RUNTIME = 1300,
	HS_OPT_LIVE = 1400,
	HS_OPT_TOP = 1500,
	HS_OPT_COLLAPSE = 1600,
};

/* Appends getopt_long entries of t's rows to to, which holds n of cap; returns the new n, with
 * to[n] all zero (one short of cap at most: a table too small aborts, a programming error). */
size_t hs_options_getopt(const struct hs_option *t, struct option *to, size_t n, size_t cap);
/* Appends the help lines of t's rows to sb, in their order. */
void hs_options_help(const struct hs_option *t, struct hs_strbuf *sb);

/* A number from lo to hi into *ret: 0, or -EINVAL with "invalid WHAT 'ARG' (expected a number
 * from LO to HI)" in err. */
int hs_option_ulong(const char *arg, const char *what, unsigned long lo, unsigned long hi, unsigned long *ret,
		    struct hs_error *err);

#endif
