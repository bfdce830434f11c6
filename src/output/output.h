/* Writers: one per output format, all reading a struct hs_profile. Every writer writes to a
 * struct hs_outfile, so a failed write (ENOSPC, ...) surfaces at hs_outfile_commit() and never
 * leaves a truncated file in place of the target. */
#ifndef HS_OUTPUT_H
#define HS_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/outfile.h"

enum hs_format {
	HS_FMT_NONE = 0,
	HS_FMT_PPROF,   /* .pb.gz, .pprof */
	HS_FMT_FOLDED,  /* .folded */
	HS_FMT_SVG,     /* .svg */
	HS_FMT_TEXT,    /* .txt: the text report */
	HS_FMT_SCRIPT,  /* perf-script-style text of every sample */
};

/* Options shared by the writers; a zeroed struct gives the defaults. */
struct hs_output_opts {
	int value_index;       /* which sample value to draw/count: 0 = the first (samples) */
	bool root_pid;         /* folded root "comm-pid" */
	bool root_tid;         /* folded root "comm-pid/tid" */
	bool no_annotate;      /* no _[k] / _[j] suffixes in folded output */
	bool annotate_inline;  /* _[i] on inlined frames */
	bool lines;            /* frames shown as function:file:line where the line is known */
	const char *title;     /* flame graph title; NULL = "Flame Graph" */
	const char *subtitle;  /* flame graph subtitle, or NULL */
	int width;             /* flame graph width in pixels; 0 = 1200 */
	double min_width;      /* flame graph: frames narrower than this many pixels are merged; 0 = 0.1 */
	bool inverted;         /* icicle graph */
	int top;               /* report: how many functions; 0 = 20 */
	bool stats;            /* report: how stacks end (per stop reason and module) */
};

/* The format an output path asks for by its extension, or HS_FMT_NONE. */
enum hs_format hs_format_from_path(const char *path);
/* The format named by --format (pprof, folded, svg, txt|text), or HS_FMT_NONE. */
enum hs_format hs_format_from_name(const char *name);

/* All return 0 or a negative errno. */
int hs_write_folded(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_svg(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_pprof(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_report(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_script(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_format(const struct hs_profile *p, enum hs_format f, const struct hs_output_opts *o,
		    struct hs_outfile *out);

/* ---- frames as people see them, shared by the stack-merging writers ---- */

struct hs_strbuf;

struct hs_frame {
	const char *name;  /* borrowed from the profile */
	const char *file;  /* source file, "" when unknown; borrowed */
	int64_t line;      /* 0 when unknown */
	uint8_t kind;      /* enum hs_kind */
	bool inlined;      /* this function was inlined into the next frame towards the root */
};

/* The name a frame is shown under: its function's, or with o->lines "function:file:line" (when
 * the line is known), composed in sb. */
const char *hs_frame_label(const struct hs_frame *f, const struct hs_output_opts *o, struct hs_strbuf *sb);

/* Expands a sample's stack root first: every location's inline chain becomes frames
 * (outermost first). Returns the number of frames; *frames is reused across calls and must be
 * freed by the caller. The thread's command name is not included. */
size_t hs_stack_frames(const struct hs_profile *p, uint32_t stack, struct hs_frame **frames, size_t *cap);
/* The root frame of a stack as folded output names it: the command name with spaces made
 * underscores, then "-pid" (o->root_pid) or "-pid/tid" (o->root_tid). Appends to sb. */
void hs_folded_root(const struct hs_profile *p, const struct hs_output_opts *o, uint32_t comm, int32_t pid,
		    int32_t tid, struct hs_strbuf *sb);
/* The value index o asks for, resolved against p (the first when out of range). */
uint32_t hs_output_value_index(const struct hs_profile *p, const struct hs_output_opts *o);

#endif
