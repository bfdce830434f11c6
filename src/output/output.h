/* Writers: one per output format, all reading a struct hs_profile, each a row of the table
 * hs_formats[] (formats.c) that the rest of hotstack finds them in. Every writer writes to a
 * struct hs_outfile, so a failed write (ENOSPC, ...) surfaces at hs_outfile_commit() and never
 * leaves a truncated file in place of the target. */
#ifndef HS_OUTPUT_H
#define HS_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/outfile.h"
#include "util/option.h"

/* Flame graph colours: by kind of code (the default), or FlameGraph's palettes. */
enum hs_palette {
	HS_PALETTE_KIND = 0,
	HS_PALETTE_HOT,
	HS_PALETTE_MEM,
	HS_PALETTE_IO,
	HS_PALETTE_JAVA,
	HS_PALETTE_JS,
};

/* Report grouping keys (--sort), in the order given. */
enum hs_sort_key { HS_SORT_COMM = 1, HS_SORT_PID, HS_SORT_TID, HS_SORT_DSO, HS_SORT_SYM };
#define HS_SORT_MAX 5

/* The palette called name ("kind", "hot", "mem", "io", "java", "js") in *ret: 0, or -EINVAL
 * for another name (ret untouched). */
int hs_palette_from_name(const char *name, enum hs_palette *ret);
/* Report sort keys "comm,pid,tid,dso,sym" (some of them, each once, in any order) into ret,
 * 0-terminated. Returns 0; -EINVAL for an unknown or repeated key, -ENODATA for none (an empty
 * list). ret is untouched on failure. */
int hs_sort_parse(const char *keys, uint8_t ret[HS_SORT_MAX]);

/* Report call trees (--tree, -g), in perf report's orders: caller, from the callers down (the
 * outermost frame first, callees under their callers); callee, from the leaves up (the
 * innermost frame first, callers under the functions they called). NONE: none asked for (the
 * text report has none, the JSON report its caller tree); OFF: -g none, no tree in either. */
enum hs_tree { HS_TREE_NONE = 0, HS_TREE_CALLER, HS_TREE_CALLEE, HS_TREE_OFF };

/* The report tree called name ("caller", "callee") in *ret: 0, or -EINVAL (ret untouched). */
int hs_tree_from_name(const char *name, enum hs_tree *ret);

/* The report's function tables (--children, --no-children): both, the self one first (the
 * default); with children: self and total (children) columns, rows by total; without: self
 * only, rows by self. */
enum hs_children { HS_CHILDREN_BOTH = 0, HS_CHILDREN_ON, HS_CHILDREN_OFF };

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
	unsigned refresh;      /* html: a live page (--serve), reloading itself every this many seconds
				* unless its reader zoomed or searched, and saying so; 0 = a file */
	int width;             /* flame graph width in pixels; 0 = 1200 */
	double min_width;      /* flame graph: frames narrower than this many pixels are merged; 0 = 0.1 */
	bool inverted;         /* icicle graph */
	bool reverse;          /* flame graph: stacks merged from the leaves (leaf at the bottom) */
	bool flamechart;       /* flame graph: each thread's samples in time order, not merged by name */
	enum hs_palette palette;
	int top;               /* report: how many functions; 0 = 20 */
	bool stats;            /* report: how stacks end (per stop reason and module), where samples land */
	enum hs_tree tree;     /* report: call tree, callees under callers or callers under callees */
	double tree_min;       /* report: tree lines under this percentage left out; 0 = 0.5, < 0 = none */
	uint8_t sort[HS_SORT_MAX]; /* report: group by these keys (enum hs_sort_key), 0-terminated */
	enum hs_children children; /* report: which function tables */
	int base_value_index;  /* diff: the value_index of the profile compared against */
	bool normalize;        /* diff folded: the first profile's counts scaled to the second's total */
	const char *annotate;  /* text: instead of the report, the annotation of the functions named so
				* (exactly, else by an extended regular expression): hotstack annotate */
};

/* perf report's -g/--call-graph value, "TYPE,THRESHOLD,ORDER,KEY" (each optional, at most one
 * of each, in any order: "caller", "graph,0.5,callee", "none", "caller,function"), set in o: type
 * graph (a tree) or none, a threshold percent (o->tree_min; 0: every line), order caller or
 * callee, key function (the only key the tree has). NULL (a bare -g) is "graph,caller". Returns
 * 0, or -EINVAL for another word (perf's flat, fractal, folded, address, branch, a print limit)
 * or one given twice (o untouched). */
int hs_report_callgraph_set(struct hs_output_opts *o, const char *arg);
/* Whether arg is meant as a -g value rather than a file's name: it has a comma, or it is one
 * hs_report_callgraph_set() takes, or it is one of perf's -g words. */
bool hs_report_callgraph_like(const char *arg);
/* What -g takes, for messages. */
#define HS_REPORT_CALLGRAPH_WORDS                                                             \
	"graph or none, a threshold percent, caller or callee, function, each once; e.g. -g " \
	"graph,0.5,caller,function"
/* The keys --sort takes, for messages. */
#define HS_SORT_WORDS "comm, pid, tid, dso, sym or symbol"

struct hs_format;
struct hs_strbuf;
/* The writers' options (--width, --tree, ...) as a table: each with its help and the formats it
 * applies to, so that an option given for outputs it does not change is refused. */
struct hs_output_option {
	const char *name;    /* the long option, without "--" */
	const char *formats; /* the formats it changes, by name, space-separated; NULL: every format */
	const char *sets;    /* what it changes, for the refusal: "the flame graph's width" */
	const char *help;    /* its --help lines, option column included, each ending in a newline */
	bool views_only;     /* taken by the commands that read a profile, not by record */
	int arg;             /* getopt's no_argument, required_argument or optional_argument */
	int key;             /* what getopt returns for it: 0, HS_OPT_OUTPUT + 1 + its index */
};
/* What getopt returns for --format. */
#define HS_OUTPUT_FORMAT_KEY HS_OPT_OUTPUT
extern const struct hs_output_option hs_output_options[];
extern const size_t hs_noutput_options;
/* The option called name, or NULL. */
const struct hs_output_option *hs_output_option_find(const char *name);
/* Appends the getopt_long entries of the writers' options (views: those only the commands that
 * read a profile take; else --format and the others) to to, as hs_options_getopt(). */
size_t hs_output_options_getopt(struct option *to, size_t n, size_t cap, bool views);
/* The option getopt returned key for ('s': --sort, perf's), or NULL. */
const struct hs_output_option *hs_output_option_of_key(int key);
/* Whether option opt changes output format f. */
bool hs_output_option_applies(const struct hs_output_option *opt, const struct hs_format *f);
/* Appends the help of the writers' options: -o and --format (listing the formats), then the
 * table's options (views: those only the commands that read a profile take, instead). */
void hs_output_options_help(struct hs_strbuf *sb, bool views);
struct hs_error;
/* Sets the writers' option called name (hs_output_options[], but --value and --wall, which the
 * profile resolves) from arg (NULL for none) in o. Returns 0; -EINVAL for a wrong value (err
 * says why, for a person), -ENOENT for a name that is no writer's option to set here. */
int hs_output_option_set(struct hs_output_opts *o, const char *name, const char *arg, struct hs_error *err);
/* What format f is, for the refusal's message: "a text report", "a flame graph", ... */
const char *hs_format_noun(const struct hs_format *f);
/* Whether o->annotate names a function of p (one with samples): 0, or -ENOENT with the names
 * closest to it (those holding it, hottest first, then the nearest by edit distance; at most
 * three) appended to names as " (closest: a, b, c)" (nothing when p has no names). */
int hs_annotate_check(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_strbuf *names);
/* What annotate writes, to the table of writer options (hs_output_option_applies()): no format of
 * hs_formats[], only its name. */
extern const struct hs_format hs_annotate_format;
/* What diff writes, to the same table: its writers (hs_format.write_diff) take fewer options than
 * the formats' own (no report tables, tree or statistics; no palette: colours are the change). */
extern const struct hs_format hs_diff_format;
/* Whether diff can write the n outputs (paths with --format, each with a format, as
 * hs_format_for_output() takes them): each format has a diff writer, and normalize (--normalize)
 * changes one of them (.folded). 0, or -EINVAL (err says why, for a person). */
int hs_diff_outputs_check(const char *const *paths, size_t n, const char *format, bool normalize, struct hs_error *err);

/* The root of folded stacks (--root): "comm" (the default), "pid" (comm-pid) or "tid"
 * (comm-pid/tid), set in o. Returns 0, or -EINVAL for another name, with o untouched. */
int hs_root_set(struct hs_output_opts *o, const char *name);

/* How a format uses the time of each sample. */
enum hs_format_times {
	HS_TIMES_UNUSED = 0, /* merged samples write the same */
	HS_TIMES_IF_KEPT,    /* written where the profile has them (pprof's timestamp labels): worth
			      * keeping when a file is read, not worth a recording's memory */
	HS_TIMES_ORDER,      /* samples written in time order (speedscope): always kept */
};

#define HS_FORMAT_MAX_NAMES 3

/* One output format: a row of hs_formats[]. All writers return 0 or a negative errno. */
struct hs_format {
	const char *name;                          /* what --format calls it */
	const char *aliases[HS_FORMAT_MAX_NAMES];  /* other names --format takes */
	/* -o extensions, the first the one help lists; a format without one is chosen by name
	 * only, by the command that writes it (script), and help does not list it */
	const char *exts[HS_FORMAT_MAX_NAMES];
	int (*write)(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
	/* The differential view of b against a, or NULL where the format has none: widths are
	 * b's, colours say how each frame's share of the total changed. */
	int (*write_diff)(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
			  struct hs_outfile *out);
	const char *diff_help; /* what write_diff writes, as diff's messages name it */
	enum hs_format_times times;
};

/* Every output format, in the order help lists them. */
extern const struct hs_format hs_formats[];
extern const size_t hs_nformats;

/* The format an output path asks for by its extension, or NULL. */
const struct hs_format *hs_format_from_path(const char *path);
/* The format --format names (a row's name or one of its aliases), or NULL. */
const struct hs_format *hs_format_from_name(const char *name);

/* The format of output path: by its extension, else by format (--format, for "-" and for paths
 * whose extension names none); NULL when neither tells. */
const struct hs_format *hs_format_for_output(const char *path, const char *format);
/* The most that any of n outputs (paths with --format, as hs_format_for_output() takes them;
 * each with a format) makes of sample times: HS_TIMES_ORDER when one needs them in order. */
enum hs_format_times hs_outputs_times(const char *const *paths, size_t n, const char *format);
struct hs_strbuf;
/* Appends the formats help lists (those with an extension; with diff, those with a differential
 * writer), by name or (by_ext) by their first extension, each after prefix, between sep. */
void hs_formats_list(struct hs_strbuf *sb, bool by_ext, bool diff, const char *prefix, const char *sep);
/* Appends the one next step for a file written at path in format f ("open x.svg in a browser"),
 * the path quoted for a shell; false (nothing appended) where the format has none. */
bool hs_format_next(const struct hs_format *f, const char *path, struct hs_strbuf *sb);
/* Appends what diff writes, the formats with a differential writer saying the same thing
 * together: "flame graphs (.svg, .html) and two-column folded stacks (.folded)". */
void hs_formats_diff_help(struct hs_strbuf *sb);
/* Writes b in format f to path ("-": standard output), or with a the differential view of b
 * against a; the file is replaced only when all of it was written. Returns 0 or a negative
 * errno: the write's own error (-ENOSPC) where one failed, -EINVAL for a diff of a format
 * without one. */
int hs_format_write_path(const struct hs_format *f, const char *path, const struct hs_profile *a,
			 const struct hs_profile *b, const struct hs_output_opts *o);
/* Whether path can be written (created or replaced), found out without changing it: 0 or a
 * negative errno. A FIFO is not opened (its reader would take that for the end of the data)
 * and passes. */
int hs_output_probe(const char *path);
/* The default output name for input in: its name with its profile extension (.pb.gz, .pprof,
 * .pb, .folded, .txt, .data) replaced by ext (a.pb.gz -> a.svg; a directory "d/" -> d.svg), or
 * base + ext for "-" (standard input) and for the directories "." and "..". Freed by the caller. */
char *hs_output_name(const char *in, const char *base, const char *ext);

/* ---- frames as people see them, shared by the stack-merging writers ---- */

struct hs_strbuf;

struct hs_frame {
	const char *name;  /* borrowed from the profile */
	const char *file;  /* source file, "" when unknown; borrowed */
	const char *module; /* hs_profile_location_module(): the mapping's file, a Python
			    * function's source file, "" when none; borrowed */
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
/* One location's frames the same way, written from (*frames)[n] on; returns the new count. */
size_t hs_location_frames(const struct hs_profile *p, uint32_t loc, struct hs_frame **frames, size_t *cap, size_t n);
struct hs_thread_names;
/* The root frame of sample s as folded output names it: the command name with spaces made
 * underscores, then "-pid" (o->root_pid) or "-pid/tid" (o->root_tid, where the name is the
 * thread's latest in names: hs_thread_names_init()). Appends to sb. */
void hs_folded_root(const struct hs_profile *p, const struct hs_output_opts *o, const struct hs_thread_names *names,
		    const struct hs_sample *s, struct hs_strbuf *sb);
/* The value index o asks for, resolved against p (the first when out of range). */
uint32_t hs_output_value_index(const struct hs_profile *p, const struct hs_output_opts *o);

#endif
