/* hotstack record's options (src/live/opts.c): their rows in the order --help lists them, and
 * their values, each taken by the layer that owns it. */
#ifndef HS_LIVE_OPTS_H
#define HS_LIVE_OPTS_H

#include "live/live.h"
#include "profile/load.h"
#include "record/opts.h"
#include "runtime/opts.h"

struct hs_live_args {
	struct hs_record_args ra;
	struct hs_live_opts lo;
	struct hs_load_opts syms; /* --no-demangle, --no-inline, --symfs */
	struct hs_rt_choice rt;
	uint64_t off_cpu_min;
	bool off_cpu_min_given, keep_time, no_jvm_perfmap;
	unsigned window; /* --window SECONDS, or 0 */
};

/* The key of --serve, which the caller takes: its address is the server's to check. */
enum { HS_LIVE_SERVE = HS_OPT_LIVE };
/* record's rows but the writers' (hs_output_options_getopt()), with their help. */
extern const struct hs_option hs_live_record_options[];
/* Takes option key with arg into a (argv, optind: getopt's, for -g). Returns 1, 0 when key is
 * none of record's, or -EINVAL with err saying what is wrong. */
int hs_live_args_option(struct hs_live_args *a, int key, char *arg, char **argv, int *optind, struct hs_error *err);

#endif
