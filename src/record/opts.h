/* What to record and how, from the options record and top share (-p, -t, -a, -C, -F, -e, -g,
 * spelt as perf spells them) and record's own (-d, -c, -m, ...): their keys and their values. */
#ifndef HS_RECORD_OPTS_H
#define HS_RECORD_OPTS_H

#include "record/callgraph.h"
#include "record/events.h"
#include "record/session.h"
#include "util/option.h"

/* The keys of the long options with no letter (the others' are their letters). */
enum {
	HS_REC_MAX_STACK = HS_OPT_RECORD,
	HS_REC_STACK_SIZE,
	HS_REC_NO_KERNEL,
	HS_REC_OFF_CPU,
	HS_REC_USER,
};

struct hs_record_args {
	struct hs_record_opts ro;
	struct hs_record_pids pids, tids;
	const char *event, *cg; /* -e, -g as given */
	struct hs_event_desc tracepoint;
	struct hs_callgraph_opts cgo;
	const char *stack_size, *user; /* --stack-size, --user as given, or NULL */
};

/* perf's defaults: -F 999, -e cpu-clock, -g auto, kernel frames. */
void hs_record_args_init(struct hs_record_args *a);
/* Takes option key with arg (argv and *optind: getopt's, for -g's value in the next word) into
 * a. Returns 1, 0 when key is none of these, or -EINVAL with err saying what is wrong. */
int hs_record_args_option(struct hs_record_args *a, int key, char *arg, char **argv, int *optind, struct hs_error *err);
void hs_record_args_release(struct hs_record_args *a);

#endif
