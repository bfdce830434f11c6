/* Live views of a recording (hotstack top, --serve): the profile of the last seconds (a window
 * that moves every step), of everything so far, and of the next N seconds, handed to readers as
 * snapshots that never change once made.
 *
 * The recording's main thread drives it from its tick (hs_view_tick()): it alone touches the
 * builder, copying what readers asked for. Readers on other threads (the HTTP server's) ask with
 * hs_view_get() and hs_view_next() and wait for the main thread; the main thread never waits for
 * a reader, so a slow or stuck reader cannot stall the sampling. */
#ifndef HS_LIVE_VIEW_H
#define HS_LIVE_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/builder.h"

/* A profile that is never changed once made, shared by its readers: the last hs_snapshot_put()
 * frees it. */
struct hs_snapshot {
	struct hs_profile *p;
	int64_t start_wall, end_wall; /* what it covers: ns since the epoch */
	uint64_t seq;                 /* differs between any two snapshots of one view */
	unsigned refs;                /* hs_snapshot_get() and hs_snapshot_put() only */
};

struct hs_snapshot *hs_snapshot_get(struct hs_snapshot *s);
void hs_snapshot_put(struct hs_snapshot *s);

enum hs_view_kind {
	HS_VIEW_WINDOW, /* the last window (everything so far where the view has no window) */
	HS_VIEW_ALL,    /* everything so far (since the start, or the last hs_view_zero()) */
};

/* The longest hs_view_next() may be asked for, and how many may wait at once; the most steps a
 * window holds. */
#define HS_VIEW_MAX_SECONDS 3600
#define HS_VIEW_MAX_WAITING 48
#define HS_VIEW_MAX_STEPS 3600

struct hs_view_opts {
	uint64_t step_ns; /* how often the window moves (1 s when 0) */
	unsigned window;  /* steps in the window (at most HS_VIEW_MAX_STEPS); 0: no window */
};

struct hs_view *hs_view_new(const struct hs_view_opts *o);
/* After hs_view_end() and once no reader can call in any more (the server stopped). */
void hs_view_free(struct hs_view *v);

/* The main thread's side. */

/* Does what is due: the window's step, the copies readers asked for, the profiles of the next
 * N seconds that are complete. Returns the ns until it wants to be called again. */
uint64_t hs_view_tick(struct hs_view *v, struct hs_builder *b, uint64_t now_ns);
/* The counts start again now: the window and everything so far are empty. */
void hs_view_zero(struct hs_view *v, struct hs_builder *b);
/* The builder's profile is about to start afresh (hs_builder_rebase(), a period's end): the
 * samples of the current step, of everything so far and of each reader's seconds so far are
 * kept aside for them. Everything so far stays everything since the start (or the last
 * hs_view_zero()): the view keeps the ended periods merged by command name (without process
 * and thread ids or times), at most 65536 distinct stacks of them, the rest on one
 * "[too many stacks]" stack, so that what it keeps stays bounded however long it runs. */
void hs_view_rebase(struct hs_view *v, struct hs_builder *b);
/* The recording ended (b finished or not): a last step, the waiting readers answered with what
 * they have, and from now on every reader gets the last snapshots at once. b NULL: it failed,
 * and the waiting readers get NULL. Before the server stops: its readers may be waiting. */
void hs_view_end(struct hs_view *v, struct hs_builder *b);
/* The latest window (a reference, or NULL before the first step). Any thread. */
struct hs_snapshot *hs_view_window(struct hs_view *v);
/* How many steps the view has made (the window changed when this did). Any thread. */
uint64_t hs_view_steps(struct hs_view *v);
/* How many readers wait in hs_view_next(). Any thread. */
unsigned hs_view_waiting(struct hs_view *v);

/* The readers' side, any thread but the main one. */

/* A snapshot of kind at most a step old (a reference): everything so far made by the main
 * thread, waited for; the window merged by the calling thread from the steps the main thread
 * made. NULL when it cannot be had (the recording ended before any was made, or no answer came
 * in 10 s). */
struct hs_snapshot *hs_view_get(struct hs_view *v, enum hs_view_kind kind);
/* The profile of the next seconds (1 to HS_VIEW_MAX_SECONDS), after waiting for them: a
 * reference, or NULL with *why set when too many wait already ("busy"), seconds is out of
 * range ("range"), the recording ended ("ended") or gone(ctx), asked each second, said the
 * reader is gone ("gone"; gone may be NULL). When the recording ends sooner, what there was. */
struct hs_snapshot *hs_view_next(struct hs_view *v, unsigned seconds, const char **why, bool (*gone)(void *ctx),
				 void *ctx);

#endif
