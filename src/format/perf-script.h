/* A streaming, bounded reader of `perf script` text: samples (header line, then one line per
 * frame, then a blank line) as FlameGraph's stackcollapse-perf.pl reads them, one at a time.
 * Memory holds the largest sample and each distinct frame line once (parsed once), never the
 * input. */
#ifndef HS_PERF_SCRIPT_H
#define HS_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/format.h"

/* Bytes borrowed from the reader: not NUL-terminated; any byte but '\n' may occur. */
struct hs_ps_str {
	const char *p;
	size_t n;
};

/* Perl's \s on one byte, [ \t\n\v\f\r]: a header line starts with anything else, a frame
 * line may start with it. */
static inline bool hs_ps_is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* What the module column says about a frame, decided the way stackcollapse-perf.pl decides. */
enum {
	HS_PS_KERNEL = 1 << 0,  /* module starts with '[' or ends with "vmlinux", and has no "unknown" */
	HS_PS_JIT = 1 << 1,     /* module contains "/tmp/perf-<digits>.map" */
	HS_PS_INLINED = 1 << 2, /* perf printed "(inlined)" where the module goes (perf script --inline) */
};

/* One frame line: "  ADDR SYMBOL+0xOFF (MODULE)". The columns are split as the Perl script's
 * pattern splits them: MODULE runs from the last " (" that some ')' follows to the last ')';
 * SYMBOL is everything between the address and that " (", spaces included. */
struct hs_ps_frame {
	struct hs_ps_str addr;   /* the address column: a run of [0-9A-Za-z_], normally hex */
	uint64_t ip;             /* its value when it is 1 to 16 hex digits, else 0 */
	struct hs_ps_str rawsym; /* the symbol column as printed, offset included */
	struct hs_ps_str sym;    /* rawsym without a trailing "+0x<hex>" */
	uint64_t offset;         /* that offset; 0 when there is none */
	struct hs_ps_str module; /* "/usr/lib/libc.so.6", "[kernel.kallsyms]", "[unknown]", "inlined" ... */
	unsigned flags;          /* HS_PS_* */
	/* The command of the header line this frame followed: the sample's, unless a second
	 * header came before the blank line that ends the sample (see merged_headers). */
	struct hs_ps_str comm;
	/* Identical frame lines have the same id, different ones different ids (ids count up
	 * from 0); UINT32_MAX once the reader has stopped remembering lines (opts.max_known). */
	uint32_t id;
	/* With opts.srcline: the source lines perf printed after this frame (perf script
	 * -F+srcline), raw, as srclines[srcline .. srcline + nsrcline) of the sample. */
	uint32_t srcline, nsrcline;
};

/* One sample. Header fields not printed are empty strings and -1 (or 0 for period). */
struct hs_ps_sample {
	struct hs_ps_str comm;     /* may contain spaces, colons, digits: "V8 WorkerThread" */
	struct hs_ps_str pid_text; /* digits as printed; empty when perf printed one number (the tid) */
	struct hs_ps_str tid_text; /* the one number, or the part after '/' in "pid/tid" */
	int64_t pid, tid;          /* their values, -1 when absent or out of range */
	int cpu;                   /* "[003]" -> 3 */
	struct hs_ps_str time_text; /* "6544038.708352" */
	uint64_t time_ns;
	struct hs_ps_str period_text; /* digits before the event name; empty when not printed */
	uint64_t period;              /* their value (saturated), 0 when not printed */
	struct hs_ps_str event;       /* "cycles", "cpu-clock:ppp"; empty when the header line does not
				       * end in "EVENT:" after a time (then the event filter does not apply) */
	const struct hs_ps_frame *frames; /* leaf first, as printed */
	size_t nframes;
	const struct hs_ps_str *srclines;
	size_t nsrclines;
	uint64_t line; /* line number (from 1) of the header */
};

/* Reads up to n bytes into buf; returns the count, 0 at the end, or a negative errno. */
typedef ssize_t (*hs_ps_read_fn)(void *ctx, void *buf, size_t n);

#define HS_PS_MAX_LINE (1u << 20)        /* longest line, in bytes */
#define HS_PS_MAX_FRAMES (1u << 17)      /* most frames in one sample */
#define HS_PS_MAX_SAMPLE (64u << 20)     /* most bytes of frame text kept for one sample */
#define HS_PS_MAX_KNOWN (256u << 20)     /* most bytes of distinct frame lines remembered */

struct hs_perf_script_opts {
	/* Only samples of this event (the header's EVENT as printed, "cycles:ppp"); NULL or "":
	 * the first event in the input, as stackcollapse-perf.pl defaults. */
	const char *event_filter;
	/* Input from `perf script -F+srcline`: source lines follow each frame line, as many as
	 * hs_perf_script_srclines() says, or srclines(srclines_ctx, frame) when that is set and
	 * not negative (stackcollapse-perf.pl reads none after a frame it expanded with
	 * addr2line). srclines is called once per distinct frame line, the first time it is in a
	 * sample, in input order, with f's comm and source-line fields unset; it must answer the
	 * same for the same line. */
	bool srcline;
	int (*srclines)(void *ctx, const struct hs_ps_frame *f);
	void *srclines_ctx;
	size_t max_line, max_frames, max_sample, max_known; /* 0: the HS_PS_MAX_* defaults */
};

struct hs_perf_script_stats {
	uint64_t lines;
	uint64_t headers;            /* header lines accepted (of the event filtered to) */
	uint64_t samples;            /* returned */
	uint64_t filtered;           /* header lines of another event, skipped with their frames */
	uint64_t orphan_frames;      /* frame lines with no accepted header before them */
	uint64_t merged_headers;     /* headers that arrived before the blank line ending a sample:
				      * the sample takes the newer header and keeps the frames */
	uint64_t unrecognized;       /* lines that are neither header, frame, comment nor blank */
	uint64_t first_unrecognized; /* the line number of the first of those */
	bool truncated;              /* the input ended inside a sample (no blank line after it);
				      * that sample is not returned, as stackcollapse-perf.pl drops it */
};

struct hs_perf_script;

/* A reader pulling bytes from read(ctx, ...). opts may be NULL. */
struct hs_perf_script *hs_perf_script_new(hs_ps_read_fn read, void *ctx, const struct hs_perf_script_opts *opts);
void hs_perf_script_free(struct hs_perf_script *r);

/* The next sample. Returns 1 with *ret filled (its strings and arrays are valid until the next
 * call or hs_perf_script_free), 0 at the end of input, or a negative errno: -EOVERFLOW for a
 * line, sample or frame count over its cap, -EBADMSG for input that is not perf script text,
 * -EMEDIUMTYPE for a perf.data file (perf script's input, not its output), or the error read()
 * returned. err (may be NULL) then holds the line
 * number and byte offset of the line at fault; later calls return the same error. */
int hs_perf_script_next(struct hs_perf_script *r, struct hs_ps_sample *ret, struct hs_error *err);

/* The event samples are being filtered to: the option, or the first event seen; NULL before
 * any. Owned by the reader. */
const char *hs_perf_script_event(const struct hs_perf_script *r);
const struct hs_perf_script_stats *hs_perf_script_stats(const struct hs_perf_script *r);

/* Line-level parsers (what hs_perf_script_next uses), for one line without its '\n'. Each
 * returns true when the line is of its kind; ret's strings point into line. A header fills
 * only header fields of the sample; a frame fills no srcline fields. */
bool hs_perf_script_parse_header(const char *line, size_t n, struct hs_ps_sample *ret);
bool hs_perf_script_parse_frame(const char *line, size_t n, struct hs_ps_frame *ret);

/* How many source lines perf script -F+srcline prints after frame f, as stackcollapse-perf.pl
 * counts them: one per name of an "a->b" chain, up to the first "[unknown]" name of an
 * "[unknown]" module; none for a name "(...)" (a process name, not a frame). */
uint32_t hs_perf_script_srclines(const struct hs_ps_frame *f);

/* The names in a symbol that FlameGraph writes as an inline chain "caller->callee": split at
 * each "->", trailing empty names dropped (Perl's split). Usage:
 *	struct hs_ps_parts it;
 *	hs_ps_parts_init(&it, f->sym);
 *	while (hs_ps_parts_next(&it, &name)) ...  */
struct hs_ps_parts {
	const char *p, *end;
	bool done;
};
void hs_ps_parts_init(struct hs_ps_parts *it, struct hs_ps_str sym);
bool hs_ps_parts_next(struct hs_ps_parts *it, struct hs_ps_str *ret);

#endif
