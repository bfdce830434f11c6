/* The words the writers' options take: palette names, report sort keys and trees, folded roots;
 * and the table of the writers' options, with the formats each applies to. They live beside the
 * enums they name so that a new palette or key is added in one place. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/error.h"
#include "util/option.h"
#include "util/strbuf.h"
#include "util/util.h"

static const struct {
	const char *name;
	enum hs_palette p;
} palettes[] = {
	{"kind", HS_PALETTE_KIND}, {"hot", HS_PALETTE_HOT},   {"mem", HS_PALETTE_MEM},
	{"io", HS_PALETTE_IO},     {"java", HS_PALETTE_JAVA}, {"js", HS_PALETTE_JS},
};

int hs_palette_from_name(const char *name, enum hs_palette *ret)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(palettes); i++) {
		if (!strcmp(name, palettes[i].name)) {
			*ret = palettes[i].p;
			return 0;
		}
	}
	return -EINVAL;
}

int hs_sort_parse(const char *keys, uint8_t ret[HS_SORT_MAX])
{
	static const struct {
		const char *name;
		enum hs_sort_key k;
	} names[] = {
		{"comm", HS_SORT_COMM}, {"pid", HS_SORT_PID}, {"tid", HS_SORT_TID},
		{"dso", HS_SORT_DSO},   {"sym", HS_SORT_SYM}, {"symbol", HS_SORT_SYM}, /* perf's word */
	};
	uint8_t sort[HS_SORT_MAX] = {0};
	const char *p = keys;
	size_t n = 0;

	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < HS_ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
				break;
		if (i == HS_ARRAY_SIZE(names) || n == HS_SORT_MAX || memchr(sort, names[i].k, n))
			return -EINVAL;
		sort[n++] = (uint8_t)names[i].k;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!n)
		return -ENODATA;
	memcpy(ret, sort, sizeof(sort));
	return 0;
}

int hs_tree_from_name(const char *name, enum hs_tree *ret)
{
	if (strcmp(name, "callee") && strcmp(name, "caller"))
		return -EINVAL;
	*ret = strcmp(name, "callee") ? HS_TREE_CALLER : HS_TREE_CALLEE;
	return 0;
}

int hs_root_set(struct hs_output_opts *o, const char *name)
{
	if (strcmp(name, "pid") && strcmp(name, "tid") && strcmp(name, "comm"))
		return -EINVAL;
	o->root_pid = !strcmp(name, "pid");
	o->root_tid = !strcmp(name, "tid");
	return 0;
}

/* perf report's -g words (perf-report(1): print_type, order, sort_key, branch), hotstack's or not */
static const char *const callgraph_words[] = {"graph", "none",    "caller", "callee",  "function",
					      "flat",  "fractal", "folded", "address", "branch"};

int hs_report_callgraph_set(struct hs_output_opts *o, const char *arg)
{
	enum hs_tree tree = HS_TREE_CALLER;
	double min = o->tree_min;
	const char *p = arg ? arg : "";
	bool none = false;
	int types = 0, orders = 0, mins = 0, keys = 0;

	while (*p) {
		size_t len = strcspn(p, ",");
		char word[32], *end;

		if (!len || len >= sizeof(word))
			return -EINVAL;
		memcpy(word, p, len);
		word[len] = 0;
		if (!strcmp(word, "graph") || !strcmp(word, "none"))
			none = !strcmp(word, "none"), types++;
		else if (!strcmp(word, "caller") || !strcmp(word, "callee"))
			hs_tree_from_name(word, &tree), orders++;
		else if (!strcmp(word, "function")) /* the key hotstack's tree has: functions, not addresses */
			keys++;
		else if (word[0] >= '0' && word[0] <= '9' && (min = strtod(word, &end), !*end) && min <= 100)
			min = min > 0 ? min : -1, mins++; /* 0: every line */
		else
			return -EINVAL;
		p += len + (p[len] == ',');
	}
	/* one of each: a second number would be perf's print_limit, which the tree does not take */
	if (types > 1 || orders > 1 || mins > 1 || keys > 1)
		return -EINVAL;
	o->tree = none ? HS_TREE_OFF : tree;
	o->tree_min = min;
	return 0;
}

bool hs_report_callgraph_like(const char *arg)
{
	struct hs_output_opts o = {0};

	if (strchr(arg, ',') || !hs_report_callgraph_set(&o, arg))
		return true;
	for (size_t i = 0; i < HS_ARRAY_SIZE(callgraph_words); i++)
		if (!strcmp(arg, callgraph_words[i]))
			return true;
	return false;
}

#define FLAME "svg html"
#define REPORT "txt"
#define REPORTS "txt json" /* the text report and its JSON form */
/* "annotate" (hs_annotate_format) and "diff" (hs_diff_format) name what those commands write */

const struct hs_output_option hs_output_options[] = {
	{"root", FLAME " folded diff", "the roots of folded stacks and flame graphs",
	 "      --root pid|tid|comm folded/flame roots are comm-pid, comm-pid/tid, or comm (default)\n", false, required_argument},
	{"no-annotate", "folded diff", "the suffixes of folded stacks",
	 "      --no-annotate       no _[k]/_[j] suffixes on kernel and JIT frames in folded output\n", false, no_argument},
	{"inline-annotate", "folded diff", "the suffixes of folded stacks",
	 "      --inline-annotate   _[i] after inlined functions in folded output\n", false, no_argument},
	{"lines", NULL, NULL, "      --lines             frames as function:file:line where debug information tells\n", false, no_argument},
	{"title", FLAME " speedscope firefox chrome diff", "the flame graph's title", "      --title TEXT        flame graph title\n", false, required_argument},
	{"width", FLAME " diff", "the flame graph's width",
	 "      --width PIXELS      flame graph width (default 1200)\n", false, required_argument},
	{"min-width", FLAME " diff", "the flame graph's narrowest frame",
	 "      --min-width PIXELS  merge flame graph frames narrower than this (default 0.1)\n", false, required_argument},
	{"inverted", FLAME " diff", "the flame graph's direction",
	 "      --inverted          icicle graph: roots at the top\n", false, no_argument},
	{"reverse", FLAME " diff", "how the flame graph merges stacks",
	 "      --reverse           flame graph of stacks merged from the leaves\n", false, no_argument},
	{"flamechart", FLAME, "the flame graph's order",
	 "      --flamechart        flame chart: each thread's samples in time order (needs timestamps)\n", false, no_argument},
	{"palette", FLAME, "the flame graph's colours",
	 "      --palette NAME      kind (default: by kind of code), hot, mem, io, java, js\n", false, required_argument},
	{"top", REPORTS " annotate diff", "how many rows the text report lists",
	 "      --top N             report: number of functions listed (default 20)\n", false, required_argument},
	{"tree", REPORTS, "the text report's call tree",
	 "      --tree[=caller|callee]\n"
	 "                          report: the call tree from the callers down (caller, the default), or\n"
	 "                          from the leaves up (callee), as perf report -g caller|callee\n", false, optional_argument},
	{"call-graph", REPORTS, "the text report's call tree",
	 "  -g, --call-graph[=TYPE,MIN,ORDER]\n"
	 "                          report: the call tree as perf report -g: graph (default) or none,\n"
	 "                          lines from MIN% (--min-percent), caller (default) or callee order\n", true, optional_argument, 'g'},
	{"children", REPORT, "the text report's function table",
	 "      --children          report: one table, by total (self and callees), as perf report\n"
	 "                          --children (the default prints a table by self and one by total)\n", true, no_argument},
	{"no-children", REPORT, "the text report's function table",
	 "      --no-children       report: one table of self values, by self\n", true, no_argument},
	{"sort", REPORT, "the text report's rows",
	 "  -s, --sort KEYS         report: rows grouped by comm,pid,tid,dso,sym (symbol), in the order given\n"
	 "                          (pid: a row per process; tid: a row per thread, as perf's -s pid)\n", false, required_argument},
	{"stats", REPORT, "the text report's statistics",
	 "      --stats             report: how stacks end, where samples land\n", false, no_argument},
	{"value", NULL, NULL,
	 "      --value TYPE        sample value to use: samples (default), cpu, off-cpu, wall, ...\n", false, required_argument},
	{"wall", NULL, NULL,
	 "      --wall              wall-clock time per thread: on-CPU plus off-CPU time (a profile\n"
	 "                          recorded with --off-cpu); --value wall with --root tid\n", false, no_argument},
};

const size_t hs_noutput_options = HS_ARRAY_SIZE(hs_output_options);

const struct hs_output_option *hs_output_option_find(const char *name)
{
	for (size_t i = 0; i < hs_noutput_options; i++)
		if (!strcmp(hs_output_options[i].name, name))
			return &hs_output_options[i];
	return NULL;
}

static int key_of(size_t i)
{
	return hs_output_options[i].key ? hs_output_options[i].key : HS_OPT_OUTPUT + 1 + (int)i;
}

size_t hs_output_options_getopt(struct option *to, size_t n, size_t cap, bool views)
{
	struct hs_option t[2] = {{"format", HS_OUTPUT_FORMAT_KEY, required_argument}};

	if (!views)
		n = hs_options_getopt(t, to, n, cap);
	for (size_t i = 0; i < hs_noutput_options; i++) {
		t[0] = (struct hs_option){hs_output_options[i].name, key_of(i), hs_output_options[i].arg};
		if (hs_output_options[i].views_only == views)
			n = hs_options_getopt(t, to, n, cap);
	}
	return n;
}

const struct hs_output_option *hs_output_option_of_key(int key)
{
	for (size_t i = 0; i < hs_noutput_options; i++)
		if (key_of(i) == key || (key == 's' && !strcmp(hs_output_options[i].name, "sort")))
			return &hs_output_options[i];
	return NULL;
}

bool hs_output_option_applies(const struct hs_output_option *opt, const struct hs_format *f)
{
	size_t n = strlen(f->name);

	for (const char *p = opt->formats; p && *p; p += strcspn(p, " "), p += *p == ' ')
		if (strcspn(p, " ") == n && !strncmp(p, f->name, n))
			return true;
	return !opt->formats;
}

const char *hs_format_noun(const struct hs_format *f)
{
	static const char *const nouns[][2] = {
		{"svg", "a flame graph"},
		{"html", "a flame graph"},
		{"folded", "folded stacks"},
		{"pprof", "a pprof profile"},
		{"speedscope", "a speedscope profile"},
		{"firefox", "a Firefox Profiler profile"},
		{"chrome", "a Chrome trace"},
		{"txt", "a text report"},
		{"json", "a JSON report"},
		{"annotate", "an annotation"},
		{"diff", "a differential view"},
		{"script", "perf script text"},
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(nouns); i++)
		if (!strcmp(nouns[i][0], f->name))
			return nouns[i][1];
	return f->name;
}

int hs_diff_outputs_check(const char *const *paths, size_t n, const char *format, bool normalize, struct hs_error *err)
{
	bool folded = false;

	for (size_t i = 0; i < n; i++) {
		const struct hs_format *f = hs_format_for_output(paths[i], format);

		if (!f->write_diff) {
			struct hs_strbuf sb = {0};

			hs_formats_diff_help(&sb);
			hs_error_set(err, -EINVAL, "diff writes %s, not '%s'", hs_strbuf_str(&sb), paths[i]);
			hs_strbuf_release(&sb);
			return -EINVAL;
		}
		folded |= !strcmp(f->name, "folded");
	}
	/* shares (flame graphs, the text diff) are the same scaled or not */
	if (normalize && !folded && n)
		return hs_error_set(err, -EINVAL,
				    "diff: --normalize does not apply to %s (it scales A's counts in .folded output)",
				    hs_format_noun(hs_format_for_output(paths[0], format)));
	return 0;
}

/* A number from lo to hi in *ret: 0, or -EINVAL after saying so in err. */
static int number(const char *arg, const char *what, long lo, long hi, bool integer, double *ret, struct hs_error *err)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v >= lo && v <= hi) || (integer && v != (long)v))
		return hs_error_set(err, -EINVAL, "invalid %s '%s' (expected a number from %ld to %ld)", what, arg, lo,
				    hi);
	*ret = v;
	return 0;
}

int hs_output_option_set(struct hs_output_opts *o, const char *name, const char *arg, struct hs_error *err)
{
	bool *flag = !strcmp(name, "no-annotate")       ? &o->no_annotate
		     : !strcmp(name, "inline-annotate") ? &o->annotate_inline
		     : !strcmp(name, "lines")           ? &o->lines
		     : !strcmp(name, "inverted")        ? &o->inverted
		     : !strcmp(name, "reverse")         ? &o->reverse
		     : !strcmp(name, "flamechart")      ? &o->flamechart
		     : !strcmp(name, "stats")           ? &o->stats
							: NULL;
	double v;
	int rc;

	if (flag) {
		*flag = true;
	} else if (!strcmp(name, "root")) {
		if (hs_root_set(o, arg))
			return hs_error_set(err, -EINVAL, "invalid --root '%s' (pid, tid or comm)", arg);
	} else if (!strcmp(name, "palette")) {
		if (hs_palette_from_name(arg, &o->palette))
			return hs_error_set(err, -EINVAL, "unknown palette '%s' (kind, hot, mem, io, java, js)", arg);
	} else if (!strcmp(name, "tree")) {
		if (hs_tree_from_name(arg ? arg : "caller", &o->tree))
			return hs_error_set(err, -EINVAL, "invalid --tree '%s' (caller or callee)", arg);
	} else if (!strcmp(name, "call-graph")) {
		if (hs_report_callgraph_set(o, arg))
			return hs_error_set(err, -EINVAL, "invalid -g '%s' (%s)", arg, HS_REPORT_CALLGRAPH_WORDS);
	} else if (!strcmp(name, "children") || !strcmp(name, "no-children")) {
		o->children = strcmp(name, "children") ? HS_CHILDREN_OFF : HS_CHILDREN_ON;
	} else if (!strcmp(name, "sort")) {
		rc = hs_sort_parse(arg, o->sort);
		if (rc == -ENODATA)
			return hs_error_set(err, rc, "--sort needs at least one key (" HS_SORT_WORDS ")");
		if (rc)
			return hs_error_set(err, rc,
					    "invalid --sort '%s' (keys " HS_SORT_WORDS
					    ", each once, separated by commas)",
					    arg);
	} else if (!strcmp(name, "title")) {
		o->title = arg;
	} else if (!strcmp(name, "width")) {
		if (number(arg, "width", 100, 100000, true, &v, err))
			return -EINVAL;
		o->width = (int)v;
	} else if (!strcmp(name, "top")) {
		if (number(arg, "--top", 1, 1000000, true, &v, err))
			return -EINVAL;
		o->top = (int)v;
	} else if (!strcmp(name, "min-width")) {
		if (number(arg, "minimum width", 0, 1000, false, &v, err))
			return -EINVAL;
		o->min_width = v;
	} else {
		return -ENOENT;
	}
	return 0;
}

/* Help lines are at most HELP_COLS wide; a longer one is broken at a space and goes on at the
 * descriptions' indent. */
#define HELP_COLS 100
#define HELP_INDENT 26

static void help_line(struct hs_strbuf *sb, const char *s)
{
	size_t indent = 0;

	while (indent + strlen(s) > HELP_COLS) {
		const char *brk = s + (HELP_COLS - indent);
		while (brk > s && *brk != ' ')
			brk--;
		if (brk == s)
			break;
		hs_strbuf_addf(sb, "%.*s\n%*s", (int)(brk - s), s, HELP_INDENT, "");
		s = brk + 1;
		indent = HELP_INDENT;
	}
	hs_strbuf_addf(sb, "%s\n", s);
}

void hs_output_options_help(struct hs_strbuf *sb, bool views)
{
	struct hs_strbuf line = {0};

	if (!views) {
		hs_strbuf_adds(&line, "  -o, --output FILE       write FILE; format from its extension (");
		hs_formats_list(&line, true, false, "", " ");
		hs_strbuf_adds(&line, ")");
		help_line(sb, hs_strbuf_str(&line));
		hs_strbuf_reset(&line);
		hs_strbuf_adds(&line, "      --format FMT        format for -o - (");
		hs_formats_list(&line, false, false, "", ", ");
		hs_strbuf_adds(&line, ")");
		help_line(sb, hs_strbuf_str(&line));
		hs_strbuf_release(&line);
	}
	for (size_t i = 0; i < hs_noutput_options; i++)
		if (hs_output_options[i].views_only == views)
			hs_strbuf_adds(sb, hs_output_options[i].help);
}
