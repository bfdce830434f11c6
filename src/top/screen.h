/* The terminal screen of hotstack top (ncurses, no colours: fit for 80x24 over SSH): a status
 * line, the table of functions with the callers and callees of one unfolded under it, and a
 * line of keys or of the filter being typed. Keys change what it shows; what they ask of the
 * recording (quit, zero the counts) is handed back to the caller. Not thread-safe: one screen,
 * on the thread that reads the keys. */
#ifndef HS_TOP_SCREEN_H
#define HS_TOP_SCREEN_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "top-data.h"

/* What the caller knows of the recording, for the status line. */
struct hs_screen_status {
	double rate;       /* samples a second in the window shown */
	double span;       /* seconds the window shown covers */
	uint64_t samples;  /* since the start, or the last zero */
	uint64_t lost;     /* ... lost */
	bool no_kernel;    /* recorded without kernel stacks */
};

/* What hs_screen_keys() found, as bits. */
enum {
	HS_SCREEN_CHANGED = 1, /* the screen wants drawing again */
	HS_SCREEN_QUIT = 2,    /* q */
	HS_SCREEN_ZERO = 4,    /* z: the counts start again */
};

struct hs_screen;

/* Takes over the terminal on standard input and output, the rows sorted by sort and of the
 * thread names of comm only (as struct hs_top_opts, copied; NULL: all); NULL when it cannot (no
 * terminal description for $TERM). */
struct hs_screen *hs_screen_open(enum hs_top_sort sort, const char *comm);
/* Gives the terminal back as it was; NULL does nothing. */
void hs_screen_close(struct hs_screen *s);
/* Reads the keys waiting, never waiting for one; returns HS_SCREEN_* bits. */
int hs_screen_keys(struct hs_screen *s);
/* Whether p (display frozen) is on: the caller keeps showing the same profile. */
bool hs_screen_paused(const struct hs_screen *s);
/* Draws p (NULL: nothing yet) with st. p is only read during the call. */
void hs_screen_draw(struct hs_screen *s, const struct hs_profile *p, const struct hs_screen_status *st);
/* Says msg (a line, copied) on the key line for a few seconds. */
void hs_screen_note(struct hs_screen *s, const char *msg);

#endif
