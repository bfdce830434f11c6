/* The writers hs_formats[] lists, and helpers they share that nothing outside src/output/ uses:
 * text escaping, folded lines, the flame-graph tree (merged, reversed, or in time order) and its
 * layout, colours. */
#ifndef HS_OUTPUT_WRITERS_H
#define HS_OUTPUT_WRITERS_H

#include <stdbool.h>
#include <stdint.h>

#include "output.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* ---- the writers, rows of hs_formats[] ---- */

int hs_write_folded(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_svg(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_html(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_pprof(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_report(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_script(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_speedscope(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
/* Writes data[len] to out gzip-compressed (RFC 1952): 0 or a negative errno */
int hs_gzip_out(const uint8_t *data, size_t len, struct hs_outfile *out);
/* OTLP profiles (otlp.h): an ExportProfilesServiceRequest, a resource per process */
int hs_write_otlp(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_json(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
/* The Firefox Profiler's processed profile format (firefox.c), gzip-compressed where the output's
 * name ends in .gz; Chrome's trace-event JSON (chrome.c): a timeline per thread in both. */
int hs_write_firefox(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
int hs_write_chrome(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
/* The text report's form with o->annotate: samples per source line of each function it names,
 * hottest first (at most o->top, default 20), with the source text where the file can be read. */
int hs_write_annotate(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out);
/* Differential views of b against a: flame graphs, and the two-column "stack count_a count_b"
 * lines FlameGraph's difffolded.pl writes (o->normalize: a's counts scaled to b's total). */
int hs_write_svg_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
		      struct hs_outfile *out);
int hs_write_html_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
		       struct hs_outfile *out);
/* The text diff: functions by how their share of self and of total changed from a to b. */
int hs_write_report_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
			 struct hs_outfile *out);
int hs_write_folded_diff(const struct hs_profile *a, const struct hs_profile *b, const struct hs_output_opts *o,
			 struct hs_outfile *out);

/* ---- text ---- */

/* Length of the UTF-8 sequence at s and its code point, or 0 when it is not valid UTF-8
 * (overlong forms, surrogates and values past U+10FFFF included). */
size_t hs_utf8_next(const unsigned char *s, uint32_t *cp);
/* Appends at most maxchars characters of s as XML (or HTML) text or attribute content; bytes
 * that are not UTF-8 or not allowed in XML become U+FFFD. */
void hs_xml_add(struct hs_strbuf *sb, const char *s, size_t maxchars);
/* Appends s as a JSON string, quotes included; invalid UTF-8 becomes U+FFFD and '<' is
 * written \u003c, so the text can sit inside an HTML <script> element. */
void hs_json_add(struct hs_strbuf *sb, const char *s);

/* ---- thread names (frames.c) ---- */

/* Where an output names a thread by its tid (report --sort tid, the JSON report's threads,
 * --root tid, flame chart lanes, speedscope profiles), it names it after its latest sample (by
 * time, then by order in the profile): a thread names itself (pthread_setname_np, prctl) after
 * it starts, so its first name is usually its creator's. */
struct hs_thread_names {
	struct hs_u64map latest; /* pid << 32 | tid -> the thread's latest sample */
};

void hs_thread_names_init(struct hs_thread_names *t, const struct hs_profile *p);
/* The name (string id) of s's thread; s's own comm when s has no tid. */
uint32_t hs_thread_name(const struct hs_thread_names *t, const struct hs_profile *p, const struct hs_sample *s);
void hs_thread_names_release(struct hs_thread_names *t);

/* ---- per-thread timelines (timeline.c), for the viewers' formats (firefox.c, chrome.c) ---- */

/* A sample's index with its time (or its index where the profile kept none), and their order:
 * by time, then by index. For qsort, by the writers that lay samples out in time. */
struct hs_time_order {
	uint64_t time;
	uint32_t sample;
};
int hs_time_order_cmp(const void *a, const void *b);

/* One sample of a thread on its timeline, in ns from the timeline's start: an on-CPU sample
 * lasts until the thread's next sample or one interval, whichever comes first; an off-CPU
 * period (record --off-cpu) as long as the thread was blocked. */
struct hs_tl_span {
	uint32_t sample; /* index in p->samples */
	bool off_cpu;
	uint64_t start, end;
};

struct hs_tl_thread {
	int32_t pid, tid;  /* -1 when unknown */
	uint32_t name;     /* string id: the thread's latest name (hs_thread_name()) */
	uint32_t process;  /* string id: its process's name (its main thread's, where sampled) */
	int64_t weight;    /* of its on-CPU samples, value vi */
	HS_VEC(struct hs_tl_span) spans; /* by start */
};

/* Where the profile kept sample times (hs_profile_has_time()) they place the samples; where
 * not, each thread's samples are laid end to end in the profile's order, an on-CPU sample as
 * long as its count of intervals (its time, for a value in time). */
struct hs_timeline {
	HS_VEC(struct hs_tl_thread) threads; /* by pid, its main thread first, then by first sample */
	uint64_t t0;       /* the profile time (ns) of the timeline's 0 */
	uint64_t end;      /* the last span's end */
	uint64_t interval; /* ns between samples: the profile's period in time, else 1 ms */
	bool timed;
	uint32_t vi;       /* the value on-CPU samples are weighed by (o->value_index, but not an
			    * off-CPU one) */
	int off_ix;        /* value index of off-CPU time, -1 for none */
	int cpu_ix;        /* value index of the time a sample stands for on the CPU, -1 for none */
};

void hs_timeline_build(struct hs_timeline *t, const struct hs_profile *p, const struct hs_output_opts *o);
void hs_timeline_release(struct hs_timeline *t);
/* Appends ns in units of unit_ns nanoseconds (1000000: milliseconds), exactly, as a JSON
 * number without trailing zeros. */
void hs_tl_add_time(struct hs_strbuf *sb, uint64_t ns, uint64_t unit_ns);
/* Whether out is to be gzip-compressed: its name ends in .gz (x.json.gz, x.trace.json.gz). */
bool hs_tl_gzipped(const struct hs_outfile *out);

/* ---- folded lines ---- */

struct hs_folded_line {
	char *text; /* "root;caller;...;leaf", owned */
	size_t len;
	int64_t value;
};

/* The profile's folded lines for value index vi: merged by text, sorted by text. Returns how
 * many; free them with hs_folded_lines_free(). */
size_t hs_folded_lines(const struct hs_profile *p, const struct hs_output_opts *o, uint32_t vi,
		       struct hs_folded_line **ret);
void hs_folded_lines_free(struct hs_folded_line *v, size_t n);

/* ---- the flame-graph tree ---- */

struct hs_flame_node {
	const char *name; /* borrowed from the profile, or one of the tree's own copies */
	int64_t value;    /* of the profile drawn */
	int64_t base;     /* diff: of the profile compared against */
	uint32_t parent;  /* UINT32_MAX for the root */
	uint8_t kind;
	bool inlined;
	const char *module; /* a Python frame's source file (borrowed) when its name does not say
			     * it (no --lines), else ""; frames of different files are different nodes */
};

/* Node 0 is "all"; below it each thread's root (as folded output names it) and the frames,
 * root first (o->reverse: leaf first, the thread last). With o->flamechart, samples are taken
 * in time order per thread, each thread a lane under its root "comm-pid/tid", and a frame merges only with the same frame of the sample just
 * before it, so children stay in time order. */
struct hs_flame_tree {
	HS_VEC(struct hs_flame_node) nodes;
	HS_VEC(char *) owned;
	struct hs_index ix;
	uint32_t *child_start; /* after hs_flame_tree_finish(): children of n are */
	uint32_t *child_ids;   /* child_ids[child_start[n] .. child_start[n + 1]] */
	bool time_order;       /* children in creation order, not by name */
};

void hs_flame_tree_init(struct hs_flame_tree *t);
/* Adds p's samples (value index vi) to the node values, or with base to the base values. */
void hs_flame_tree_add(struct hs_flame_tree *t, const struct hs_profile *p, const struct hs_output_opts *o,
		       uint32_t vi, bool base);
/* Builds the children arrays; call once, after the last add. */
void hs_flame_tree_finish(struct hs_flame_tree *t);
void hs_flame_tree_release(struct hs_flame_tree *t);

struct hs_flame_box {
	uint32_t node;    /* UINT32_MAX: a merged frame of nmerged narrow siblings */
	uint32_t nmerged;
	uint32_t depth;
	bool leaf;        /* nothing drawn above it (narrow) */
	int64_t off;      /* left edge, in value units from the left of the graph */
	int64_t value;
};

struct hs_flame_boxes {
	struct hs_flame_box *v;
	size_t n, cap;
};

/* The boxes to draw, depth first, root first, each node's children left to right (by name,
 * or in time order); nodes of value 0 are left out, and the children of a node narrower than
 * minval are merged into one box (minval 0: every node is a box). */
void hs_flame_layout(const struct hs_flame_tree *t, double minval, struct hs_flame_boxes *ret, uint32_t *max_depth);

/* ---- what reports count (report-data.c) ---- */

struct hs_report_fn {
	uint32_t name;   /* string id of the function, 0 for none ([unknown]) */
	uint32_t module; /* string id of the mapping's file, 0 for none */
	uint32_t file;   /* by line: string id of the source file, 0 when unknown */
	int64_t line;    /* by line: the source line, 0 when unknown */
	int64_t self, total;
	uint64_t seen; /* the sample that last added to total, so that recursion counts once */
};

struct hs_report_fns {
	struct hs_report_fn *v;
	size_t n, cap;
};

/* Appends p's functions (by_line: function and source line) with their self value (samples
 * whose innermost frame they are) and total (samples they are in, once each) of value vi. */
void hs_report_fns(const struct hs_profile *p, uint32_t vi, bool by_line, struct hs_report_fns *ret);
/* Sorts by self then total (self_first), or by total then self, largest first. */
void hs_report_fns_sort(struct hs_report_fns *f, bool self_first);

struct hs_report_node {
	uint32_t name, module, parent; /* string ids; parent UINT32_MAX for the root */
	int64_t total, self;
	uint32_t file; /* by line: string id of the source file, 0 when unknown */
	int64_t line;  /* by line: the line sampled (innermost) or the call site, 0 when unknown */
};

/* The call tree of functions (by_line: of functions and source lines): node 0 the root (every
 * sample), callees under their callers, or (callers) callers under the functions they called
 * with self on the innermost; the children of n, largest total first, are
 * child_ids[child_start[n] .. child_start[n + 1]]. */
struct hs_report_tree {
	HS_VEC(struct hs_report_node) nodes;
	uint32_t *child_start, *child_ids;
};

void hs_report_tree_build(const struct hs_profile *p, uint32_t vi, bool callers, bool by_line,
			  struct hs_report_tree *ret);
void hs_report_tree_release(struct hs_report_tree *t);

/* ---- colours ---- */

struct hs_rgb {
	uint8_t r, g, b;
};

/* The fill of a frame under a palette: a colour family from the palette's rules (the kind of
 * code for HS_PALETTE_KIND), a shade within it from a hash of the name, the same on every run. */
struct hs_rgb hs_flame_color(enum hs_palette pal, const char *name, uint8_t kind, bool inlined);

/* The legend of a flame graph coloured by kind of code: each kind's label, and a name whose
 * colour under HS_PALETTE_KIND stands for it. */
struct hs_legend_item {
	const char *label, *sample;
	uint8_t kind;
	bool inlined;
};
#define HS_FLAME_LEGEND_SIZE 16
extern const struct hs_legend_item hs_flame_legend[HS_FLAME_LEGEND_SIZE];
/* Whether the legend of t shows item: "Python" and the Java kinds only where t has such frames. */
bool hs_flame_legend_shows(const struct hs_flame_tree *t, const struct hs_legend_item *item);
/* Differential colour: ratio in [-1, 1], positive grew (red), negative shrank (blue), 0
 * neutral grey; intensity grows with the square of |ratio|. */
struct hs_rgb hs_flame_diff_color(double ratio);
/* Diff: a node's change, its share of the drawn total less its share of the base total. */
double hs_flame_delta(const struct hs_flame_tree *t, uint32_t node);
/* The largest |hs_flame_delta()| over the tree's nodes. */
double hs_flame_max_delta(const struct hs_flame_tree *t);

/* How many nanoseconds one of unit is ("nanoseconds", "microseconds", "milliseconds",
 * "seconds" and their symbols), or 0 for a unit that is no time (counts, bytes). */
int64_t hs_unit_ns(const char *unit);
/* v in unit as people read it, in buf: a time with three significant digits in ns, us, ms or s
 * ("1.15 s", "89.4 ms") where unit is one of time, else the number ("1234"). Returns buf. */
#define HS_VALUE_BUF 32
const char *hs_value_fmt(char buf[HS_VALUE_BUF], int64_t v, const char *unit);
/* Appends v as hs_value_fmt() writes it, followed by " unit" (XML text) when unit is no time. */
void hs_value_xml_add(struct hs_strbuf *sb, int64_t v, const char *unit);

/* What a value is called in titles: its unit, or its type when the unit is a bare count. */
const char *hs_value_unit_name(const struct hs_profile *p, uint32_t vi);

/* The total of value vi as the report's header states it, in sb, and returned: a time with
 * its type ("498 ms wall", "1.15 s off-cpu"), else the count with thousands separated and its
 * type ("1,234 samples", "16 page-faults"; a unit that is not a count after it in
 * parentheses). A profile without values counts its sample entries. */
const char *hs_value_total_text(const struct hs_profile *p, uint32_t vi, struct hs_strbuf *sb);

/* SVG and HTML documents from a finished tree; diff colours by change (hs_flame_delta). */
/* Draws profile p's flame graph with draw (hs_svg_from_tree, hs_html_from_tree). */
typedef int hs_tree_drawer(const struct hs_flame_tree *t, const struct hs_output_opts *o, const char *unit, bool diff,
			   struct hs_outfile *out);
/* Unless o has a title, the graph is titled with the recorded command (hs_profile_command())
 * and subtitled with the total of the value drawn (hs_value_total_text()). */
int hs_flame_draw(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out,
		  hs_tree_drawer *draw);
int hs_svg_from_tree(const struct hs_flame_tree *t, const struct hs_output_opts *o, const char *unit, bool diff,
		     struct hs_outfile *out);
int hs_html_from_tree(const struct hs_flame_tree *t, const struct hs_output_opts *o, const char *unit, bool diff,
		      struct hs_outfile *out);

#endif
