/* A recording's files written while it runs (record --switch-output, checkpoints): when the
 * next write is due, what each period's files are called, and which of them are kept. The
 * writing itself is the caller's: this only keeps the time and the names. */
#ifndef HS_PERIODIC_H
#define HS_PERIODIC_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

/* The longest a recording to a file goes without writing what it has: a recording killed then
 * (SIGKILL, the OOM killer) leaves a complete file of all but its last seconds. Checkpoints
 * that take long are spaced out to at most a tenth of the time (hs_periodic_due()). */
#define HS_CHECKPOINT_NS (8 * 1000000000ULL)

struct hs_periodic_opts {
	uint64_t period_ns; /* --switch-output=TIME: each period's length; 0: not by time */
	bool by_signal;     /* --switch-output=signal: a SIGUSR2 ends the period */
	unsigned max_files; /* --switch-max-files: each output's newest files kept; 0: all */
	bool checkpoints;   /* write what the period has every HS_CHECKPOINT_NS or so */
};

/* Parses --switch-output's value: "signal", or a period: a number of seconds with s, m, h or
 * d after it (a bare number is seconds; at least 1 s). Returns 0 with o->period_ns or
 * o->by_signal set, or -EINVAL (o untouched). */
int hs_switch_output_parse(const char *arg, struct hs_periodic_opts *o);

/* The file of output path for a period that began at wall_ns (since the epoch): the time in
 * UTC, .YYYYmmddHHMMSS, before the extension that names its format (prof.pb.gz ->
 * prof.20261123191023.pb.gz; at the end of a name without one), with _seq after it for a
 * period begun in the same second as the one before (seq > 0). Returns a string to free(). */
char *hs_period_path(const char *path, int64_t wall_ns, unsigned seq);

/* Whether each of the n outputs is a file that a write replaces: none standard output ("-"),
 * a pipe or a device, there or through a link (those are written once, at the end). */
bool hs_outputs_files(const char *const *paths, size_t n);

enum hs_periodic_due {
	HS_DUE_NONE = 0,
	HS_DUE_CHECKPOINT, /* the period so far, to the period's files */
	HS_DUE_PERIOD,     /* the period is over: its last write, and the next one begins */
};

struct hs_periodic {
	struct hs_periodic_opts o;
	size_t n;                 /* outputs */
	const char *const *paths; /* as given (borrowed) */
	char **names;             /* the current period's file of each output (owned) */
	char ***kept;             /* per output, the period files written, oldest first */
	size_t *nkept;
	bool written;             /* the current period's files were written */
	uint64_t start;           /* the current period's start (monotonic ns) */
	int64_t start_wall;       /* ... since the epoch */
	uint64_t last_write;      /* monotonic ns */
	uint64_t write_ns;        /* how long the last checkpoint took */
	unsigned seq;
	unsigned periods;         /* ended so far */
};

/* Starts the first period at now (monotonic ns) and now_wall (since the epoch). With
 * o->period_ns or o->by_signal, each output's files are named by hs_period_path(); else they
 * are the paths themselves. */
void hs_periodic_init(struct hs_periodic *pe, const struct hs_periodic_opts *o, const char *const *paths, size_t n,
		      uint64_t now, int64_t now_wall);
void hs_periodic_release(struct hs_periodic *pe);
bool hs_periodic_switching(const struct hs_periodic *pe);
/* Whether o asks for periods (by time or by signal) */
static inline bool hs_periodic_opts_switching(const struct hs_periodic_opts *o)
{
	return o->period_ns || o->by_signal;
}
/* What is due at now; switch_asked: a SIGUSR2 came. */
enum hs_periodic_due hs_periodic_due(const struct hs_periodic *pe, uint64_t now, bool switch_asked);
/* The nanoseconds from now until the next write is due by time (UINT64_MAX: none is). */
uint64_t hs_periodic_next(const struct hs_periodic *pe, uint64_t now);
/* The current period's files, one per output. */
static inline const char *const *hs_periodic_names(const struct hs_periodic *pe)
{
	return (const char *const *)pe->names;
}
/* Says the current period's files were written, the write having begun at began (and
 * began_wall, since the epoch) and ended at now. Each output's files past o.max_files are
 * removed, oldest first (those this recording wrote: nothing else is ever removed); returns
 * how many could not be. With ended, the next period begins where this one ended, at began
 * and began_wall: one period's end is the next one's start. */
size_t hs_periodic_written(struct hs_periodic *pe, uint64_t began, int64_t began_wall, uint64_t now, bool ended);

#endif
