/* The options of the commands that read a profile, as the profile layer takes them: the filters
 * (--pid, --comm, --time, ...) and how a perf.data's files are read for names (--symfs, ...). */
#ifndef HS_PROFILE_VIEW_OPTS_H
#define HS_PROFILE_VIEW_OPTS_H

#include "profile/filter.h"
#include "profile/load.h"
#include "util/option.h"

/* The filters' rows, with their help. */
extern const struct hs_option hs_filter_options[];
/* Takes filter option key into f (--min-percent sets *tree_min, the report's tree threshold, as
 * well). Returns 1, 0 when key is none of these, or -EINVAL with err saying what is wrong. */
int hs_filter_option(struct hs_filter *f, int key, const char *arg, double *tree_min, struct hs_error *err);

/* The keys of --no-demangle, --no-inline, --symfs (record takes them too, with its own help). */
enum { HS_LOAD_NO_DEMANGLE = HS_OPT_SYMBOL, HS_LOAD_NO_INLINE, HS_LOAD_SYMFS };
/* Their rows, with the help of the commands that read a perf.data. */
extern const struct hs_option hs_load_symbol_options[];
/* Takes symbol option key into o: 1, or 0 when it is none of these. --symfs is not checked. */
int hs_load_symbol_option(struct hs_load_opts *o, int key, const char *arg);

#endif
