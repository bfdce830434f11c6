/* hotstack collapse's engine: `perf script` text to folded stacks, line for line what
 * FlameGraph's stackcollapse-perf.pl prints for the same input and options, streamed: memory
 * grows with the number of distinct stacks, not with the input. It prints nothing and never
 * exits: errors come back as a negative errno and a message, warnings through a callback. */
#ifndef HS_COLLAPSE_H
#define HS_COLLAPSE_H

#include <stdbool.h>

#include "format/perf-script.h"
#include "util/option.h"
#include "util/outfile.h"

struct hs_collapse_opts {
	bool pid;     /* root is comm-PID */
	bool tid;     /* root is comm-PID/TID */
	bool kernel;  /* _[k] after kernel functions */
	bool jit;     /* _[j] after JIT functions (from /tmp/perf-PID.map) */
	bool addrs;   /* [module <address>] for frames without a symbol */
	bool inline_; /* expand inlined functions with addr2line (binutils) */
	bool context; /* with inline_: function:file:line */
	bool srcline; /* the input is from perf script -F+srcline: add :file:line to names */
	/* Only samples of this event; NULL or "": the first event in the input. Borrowed for the
	 * life of the engine. */
	const char *event_filter;
	/* Called, in the order things happen, with a message (lower-case, no full stop) about
	 * something that does not stop the run, such as addr2line that cannot be run; may be
	 * NULL. The message lives for the call only. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

struct hs_collapse;

/* An engine with these options (copied). Never fails but for memory, which exits as every
 * hs_x* allocation does. */
struct hs_collapse *hs_collapse_new(const struct hs_collapse_opts *opts);
/* Accepts NULL. */
void hs_collapse_free(struct hs_collapse *c);

/* What hs_collapse_read() failed at (struct hs_error's cause). */
enum hs_collapse_failure {
	HS_COLLAPSE_CANNOT_READ = 1, /* open(2) or read(2) failed: the code says why */
	HS_COLLAPSE_GZIP_CORRUPT,    /* gzip data corrupt or cut short (-EPROTO): the detail says so */
	HS_COLLAPSE_BOMB,            /* gzip data past the decompression bound: the detail says how far */
	HS_COLLAPSE_BAD_INPUT,       /* the reader refused a line (format/perf-script.h): the detail,
	                              * and the line */
};

/* Reads `perf script` text from path ("-": standard input), gzipped or not, and folds every
 * sample. Call once. At its end, what was left out (samples of other events, a last sample
 * cut short, lines that are no perf script text) is said through opts->warn. Returns 0, or a negative errno with err saying what went wrong: -EPROTO
 * gzip data corrupt or cut short, -EFBIG a decompression bomb, -EOVERFLOW, -EBADMSG and
 * -EMEDIUMTYPE (a perf.data file) from the reader, or what open(2) or read(2) returned. */
int hs_collapse_read(struct hs_collapse *c, const char *path, struct hs_error *err);

/* After hs_collapse_read(): what the reader counted (samples, and the lines and samples left
 * out), and the event the samples were filtered to (NULL when none was seen). Owned by c. */
const struct hs_perf_script_stats *hs_collapse_stats(const struct hs_collapse *c);
const char *hs_collapse_event(const struct hs_collapse *c);

/* Writes the folded stacks, "root;...;leaf count" sorted as the Perl script sorts them, to
 * of; a failed write is left in of for hs_outfile_commit() to return. */
void hs_collapse_write(const struct hs_collapse *c, struct hs_outfile *of);

/* collapse's rows, with their help (src/collapse/opts.c). */
extern const struct hs_option hs_collapse_options[];
/* Takes option key with arg into o: 1, or 0 when it is none of the engine's. */
int hs_collapse_option(struct hs_collapse_opts *o, int key, const char *arg);

#endif
