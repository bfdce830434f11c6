/* hotstack top's side of a live recording: at each tick of the recording, the keys read and the
 * window's profile drawn on the terminal (screen.h), or, with stdio, a text report of each new
 * window written out. */
#ifndef HS_TOP_H
#define HS_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "live/live.h"
#include "top-data.h"

struct hs_top_config {
	bool stdio;      /* reports to out at each step of the window; else the screen */
	FILE *out;       /* with stdio */
	unsigned rows;   /* with stdio: the functions a report lists (0: 20) */
	bool no_kernel;  /* recorded without kernel stacks */
	enum hs_top_sort sort; /* the rows' order at the start (s changes it on the screen) */
	const char *comm;      /* only the rows of these thread names (--comm; struct hs_top_opts) */
};

struct hs_top {
	struct hs_top_config c;
	struct hs_live *lv;
	struct hs_screen *screen;
	struct hs_snapshot *shown; /* the window shown (a reference) */
	uint64_t steps;            /* the view's steps when it was taken */
	uint64_t zero_samples, zero_lost; /* the builder's counts at the last zero */
	int write_error;           /* with stdio: errno of a failed write (the recording ends) */
};

struct hs_top_run_opts {
	struct hs_record_opts *ro; /* what to record, settled (hs_record_targets_settle()) */
	const struct hs_callgraph_opts *cgo;
	struct hs_view_opts view;  /* the refresh (step) and the window */
	struct hs_top_config top;
	const char *serve;                /* --serve [ADDR:]PORT, or NULL */
	const struct hs_output_opts *oo;  /* the served pages' options */
	/* What there is to say when the screen is not up to show it on its last line: say as
	 * struct hs_live_hooks' (a warning, or a detail), info a plain line (where it serves). */
	void (*say)(void *ctx, bool detail, const char *msg);
	void (*info)(void *ctx, const char *msg);
	void *ctx;
};

enum hs_top_failure {
	HS_TOP_OK,
	HS_TOP_RECORDING, /* err is the recording's (its cause an enum hs_record_failure) */
	HS_TOP_SERVING,   /* err says why the server did not start */
	HS_TOP_TERMINAL,  /* the terminal cannot be used */
	HS_TOP_WRITING,   /* err says why a --stdio report could not be written */
};

/* hotstack top: records as o->ro asks and shows it until q, a signal, or the command's end;
 * the signals are blocked (hs_record_block_signals()). Returns HS_TOP_OK, or what failed.
 * *status: a command's exit status where the command's end ended it (as a shell has it), else
 * 0. */
enum hs_top_failure hs_top_run(const struct hs_top_run_opts *o, int *status, struct hs_error *err);

/* Starts showing lv's view (lv->view set): takes the terminal over unless c->stdio. Returns 0,
 * or -ENOTTY when the terminal cannot be used. */
int hs_top_start(struct hs_top *t, struct hs_live *lv, const struct hs_top_config *c);
/* The recording's tick (struct hs_live_hooks.tick), ctx a struct hs_top: reads the keys, draws
 * or writes what is new, ends the recording on q. Returns the ns until the next. */
uint64_t hs_top_tick(void *ctx);
/* Something to say while the screen is up, on its key line; false with no screen (the caller
 * says it). */
bool hs_top_say(struct hs_top *t, const char *msg);
/* Gives the terminal back (before anything is said on it) and drops the window shown. */
void hs_top_end(struct hs_top *t);
/* After the view's end (hs_view_end()): with stdio, the report of its last window, the part of
 * a refresh the recording ended in (all there is of a command shorter than one). */
void hs_top_last(struct hs_top *t);

#endif
