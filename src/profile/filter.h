/* Filters on a profile, applied once for every view (report, flame graphs, conversions, diff):
 * which processes, threads, commands and stacks to keep, a time window, and a call-tree share
 * below which frames are folded away. The result is a new profile holding only what is kept
 * and what it refers to. */
#ifndef HS_FILTER_H
#define HS_FILTER_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/error.h"

/* A zeroed struct keeps everything. Owns its lists and compiled expressions: release it with
 * hs_filter_release(). */
struct hs_filter {
	HS_VEC(int32_t) pids;    /* keep samples of these processes; empty = any */
	HS_VEC(int32_t) tids;    /* keep samples of these threads; empty = any */
	HS_VEC(regex_t) comm;    /* keep threads whose command name matches one; empty = any */
	HS_VEC(regex_t) include; /* keep samples with a frame whose function matches one */
	HS_VEC(regex_t) exclude; /* drop samples with a frame whose function matches one */
	bool time;               /* keep samples in [time_start, time_end) only */
	double time_start;       /* seconds after the profile's first timestamped sample */
	double time_end;         /* < 0: no end */
	double min_percent;      /* > 0: call-tree frames under this share of the total are cut */
	uint32_t value_index;    /* the value min_percent measures */
	const int64_t *since;    /* the profile's values at an earlier time (nsince of them): each
	                          * sample's values less what it had then, a sample with nothing
	                          * added since dropped */
	size_t nsince;
};

enum hs_filter_re { HS_FILTER_COMM, HS_FILTER_INCLUDE, HS_FILTER_EXCLUDE };

/* Adds a POSIX extended regular expression (matched anywhere in the name, as grep does).
 * Returns 0, or -EINVAL with the compiler's message in err (may be NULL). */
int hs_filter_add_regex(struct hs_filter *f, enum hs_filter_re which, const char *pattern, struct hs_error *err);
void hs_filter_release(struct hs_filter *f);
/* Whether f drops or changes anything at all. */
bool hs_filter_active(const struct hs_filter *f);

/* Adds the ids of a list "1,2,3" (each from 0 to INT32_MAX) to f's thread ids (tids) or
 * process ids. Returns 0, or -EINVAL for a malformed list, with f untouched. */
int hs_filter_add_ids(struct hs_filter *f, bool tids, const char *list);
/* Sets the time window "START,END" (seconds from the first sample, each from 0 to 1e9, either
 * left out; START < END). Returns 0, or -EINVAL for a malformed window, with f untouched. */
int hs_filter_set_time(struct hs_filter *f, const char *window);
/* Sets min_percent from "P", a percentage from 0 to 100. Returns 0, or -EINVAL, with f
 * untouched. */
int hs_filter_set_min_percent(struct hs_filter *f, const char *percent);

/* The name of the pseudo-frame that replaces the frames cut by min_percent, for a threshold. */
#define HS_FILTER_SMALL_FMT "[frames under %g%%]"

/* Builds the filtered copy of p in *ret. Returns 0, or -ENODATA when f asks for a time window
 * and no sample of p kept its timestamp. Samples keep their order; a sample's stack is cut
 * (min_percent) at the first frame, from the root, whose node in the call tree (frames merged
 * by function name from the outermost one, threads together) holds less than min_percent of
 * the total, and the cut part becomes one pseudo-frame named by HS_FILTER_SMALL_FMT. */
int hs_profile_filter(const struct hs_profile *p, const struct hs_filter *f, struct hs_profile **ret);

/* A copy of p for pprof, whose first mapping is the main binary (profile.proto) and whose
 * tools read addresses of it as the file's own: main (a mapping id of p, see
 * hs_profile_main_mapping()) becomes mapping 1, the other mappings of its file follow, and
 * these are moved, with the addresses of their locations, by their elf_base (then 0). The rest
 * is p's, mappings in the order samples first use them. Returns 0, or -EINVAL for a main that
 * is no mapping of p. */
int hs_profile_main_first(const struct hs_profile *p, uint32_t main, struct hs_profile **ret);

#endif
