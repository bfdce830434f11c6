/* hotstack top's options (src/top/opts.c): their rows in the order --help lists them, and their
 * values. */
#ifndef HS_TOP_OPTS_H
#define HS_TOP_OPTS_H

#include "record/opts.h"
#include "top/top-data.h"

struct hs_top_args {
	struct hs_record_args ra; /* what to record: record's options */
	const char *serve;        /* --serve [ADDR:]PORT, checked, or NULL */
	double refresh, window;   /* -d, --window: seconds */
	bool stdio;               /* --stdio */
	enum hs_top_sort sort;    /* -s, --sort */
	const char *comm;         /* --comm NAME[,NAME], or NULL */
};

/* top's rows, with their help. */
extern const struct hs_option hs_top_options[];
/* The defaults: a refresh a second, a window of 5, record's. */
void hs_top_args_init(struct hs_top_args *a);
/* Takes option key with arg into a (argv, optind: getopt's, for -g). Returns 1, 0 when key is
 * none of top's, or -EINVAL with err saying what is wrong. */
int hs_top_args_option(struct hs_top_args *a, int key, char *arg, char **argv, int *optind, struct hs_error *err);
/* Whether the window and the refresh go together: NULL, or a line saying why not (in buf). */
const char *hs_top_args_check(const struct hs_top_args *a, char *buf, size_t size);

#endif
