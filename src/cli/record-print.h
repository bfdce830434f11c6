/* What record says to a person: the errors of a recording with the advice that goes with
 * them, the summary at its end, and the list of events (src/cli/record-print.c). */
#ifndef HS_CLI_RECORD_PRINT_H
#define HS_CLI_RECORD_PRINT_H

#include <stdbool.h>

#include "cli.h"
#include "profile/builder.h"
#include "live/live.h"
#include "record/events.h"
#include "record/opts.h"

/* -e list, or -e list:CATEGORY for the tracepoints of one category; returns the exit status. */
int cli_record_list_events(const char *what);
/* Says why -e CATEGORY:NAME (name) was not found, and what to do. */
void cli_tracepoint_error(const struct hs_error *err, const char *name);
/* Says what failed in recording with options ro, with what a person can do about it; returns
 * the exit status: 127 for a command not found, 126 for one that could not be run, as a shell
 * has it, else 1. */
int cli_record_error(const struct hs_error *err, const struct hs_record_opts *ro);
/* The summary on stderr (more of it with -v) of recording rec into p (or into periods of
 * which p is the last); lost samples are said in p's comments too. lbr_repair and off_cpu:
 * what the recording was asked for. */
void cli_record_summary(struct hs_profile *p, unsigned periods, const struct hs_builder_summary *s,
			const struct hs_record *rec, bool lbr_repair, bool off_cpu);
/* What --push URL did, at the end: a warning where profiles were dropped or left waiting. */
void cli_record_push_summary(const struct hs_live *lv);

/* The event and the call graph of a looked up, and the targets, into a->ro: -1 to go on, else
 * the exit status after saying what is wrong (sampling.c). */
int cli_sampling_settle(struct hs_record_args *a);
/* Says that a stack copy size (--stack-size, -g dwarf,BYTES) arg is out of range. */
void cli_stack_size_error(const char *arg);
/* --serve ADDR: 0 with *ret set, or -1 after saying what is wrong. */
int cli_serve_arg(const char *arg, const char **ret);

#endif
