/* hotstack annotate: samples per source line of a function, as `perf annotate --stdio` shows a
 * function's source: self and total at each line, the source text where the file can be read,
 * the hottest line marked; and the closest names when no function has the name asked for. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/infile.h"
#include "writers.h"

#define CONTEXT 3                   /* source lines shown around the sampled ones */
#define MAX_SPAN 120                /* the longest span shown whole; past it, windows around sampled lines */
#define MAX_FUNCTIONS 20            /* functions annotated when a pattern names more (--top changes it) */
#define SOURCE_MAX_BYTES (16 << 20) /* a source file is read this far at most */
#define SOURCE_MAX_COLS 240         /* the bytes of a source line shown */
#define CLOSEST 3
#define MAX_LINE INT32_MAX /* line numbers past it (or under 1) count as unknown */

/* Functions by name and module (report-data.c), hottest first. */
static void functions(const struct hs_profile *p, uint32_t vi, struct hs_report_fns *ret)
{
	hs_report_fns(p, vi, false, ret);
	hs_report_fns_sort(ret, true);
}

/* The indices in fns of the functions pat names: those called pat, else those whose name the
 * extended regular expression pat matches (none when it is not one). */
static size_t match(const struct hs_profile *p, const struct hs_report_fns *fns, const char *pat, size_t **ret)
{
	size_t n = 0;
	regex_t re;

	*ret = hs_xmalloc((fns->n ? fns->n : 1) * sizeof(**ret));
	for (size_t i = 0; i < fns->n; i++)
		if (fns->v[i].name && !strcmp(hs_profile_str(p, fns->v[i].name), pat))
			(*ret)[n++] = i;
	if (n || regcomp(&re, pat, REG_EXTENDED | REG_NOSUB))
		return n;
	for (size_t i = 0; i < fns->n; i++)
		if (fns->v[i].name && !regexec(&re, hs_profile_str(p, fns->v[i].name), 0, NULL, 0))
			(*ret)[n++] = i;
	regfree(&re);
	return n;
}

/* Appends the names of p closest to pat: those holding pat (or held in it), hottest first,
 * then the nearest by edit distance; at most CLOSEST, each once: " (closest: a, b, c)". */
static void closest(const struct hs_profile *p, const struct hs_report_fns *fns, const char *pat, struct hs_strbuf *sb)
{
	uint32_t best[CLOSEST];
	size_t score[CLOSEST], nbest = 0, lp = strlen(pat);

	for (size_t i = 0; i < fns->n; i++) { /* hottest first: ties keep the hotter */
		const char *name = hs_profile_str(p, fns->v[i].name);
		size_t ln = strlen(name), s, k;
		bool dup = false;

		if (!fns->v[i].name)
			continue;
		for (k = 0; k < nbest; k++)
			dup |= best[k] == fns->v[i].name;
		if (dup)
			continue;
		if (strcasestr(name, pat) || strcasestr(pat, name)) {
			s = 0;
		} else {
			/* the distance is at least the difference of the lengths */
			s = 1 + (ln > lp ? ln - lp : lp - ln);
			if (nbest == CLOSEST && s > score[CLOSEST - 1])
				continue;
			s = 1 + hs_edit_distance(name, pat);
		}
		if (nbest == CLOSEST && s >= score[CLOSEST - 1])
			continue;
		for (k = nbest < CLOSEST ? nbest++ : CLOSEST - 1; k > 0 && score[k - 1] > s; k--) {
			best[k] = best[k - 1];
			score[k] = score[k - 1];
		}
		best[k] = fns->v[i].name;
		score[k] = s;
	}
	for (size_t k = 0; k < nbest; k++)
		hs_strbuf_addf(sb, "%s%s", k ? ", " : " (closest: ", hs_profile_str(p, best[k]));
	if (nbest)
		hs_strbuf_addc(sb, ')');
}

const struct hs_format hs_annotate_format = {.name = "annotate"};

int hs_annotate_check(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_strbuf *names)
{
	struct hs_report_fns fns = {0};
	size_t *m = NULL, n;

	functions(p, hs_output_value_index(p, o), &fns);
	n = match(p, &fns, o->annotate ? o->annotate : "", &m);
	if (!n)
		closest(p, &fns, o->annotate ? o->annotate : "", names);
	free(m);
	hs_vec_free(&fns);
	return n ? 0 : -ENOENT;
}

/* ---- the source ---- */

struct span {
	int64_t first, last; /* source lines, from 1 */
};

struct src_line {
	int64_t line;
	char *text; /* as shown: tabs expanded, control bytes as '?', cut at SOURCE_MAX_COLS */
};

struct source {
	HS_VEC(struct src_line) lines; /* the lines of the spans the file has, in order */
	int64_t nlines;                /* with eof: how many lines the file has */
	bool eof;
};

static void source_release(struct source *s)
{
	for (size_t i = 0; i < s->lines.n; i++)
		free(s->lines.v[i].text);
	hs_vec_free(&s->lines);
}

/* Reads the lines of path in the spans (sorted, apart) into ret, up to SOURCE_MAX_BYTES of the
 * file: 0, or a negative errno. Only a regular file is opened (util/infile.h). */
static int source_read(const char *path, const struct span *spans, size_t nspans, struct source *ret)
{
	struct hs_strbuf sb = {0};
	size_t bytes = 0, col = 0, k = 0;
	int64_t line = 1;
	FILE *f;
	int fd = hs_infile_open(path, 0, NULL), c = 0;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while (k < nspans && bytes++ < SOURCE_MAX_BYTES && (c = getc_unlocked(f)) != EOF) {
		bool keep = line >= spans[k].first;

		if (c == '\n') {
			if (keep)
				hs_vec_push(&ret->lines, ((struct src_line){line, hs_strbuf_detach(&sb)}));
			while (k < nspans && line >= spans[k].last)
				k++;
			line++;
			col = 0;
		} else if (!keep) {
			continue;
		} else if (col >= SOURCE_MAX_COLS) {
			if (col++ == SOURCE_MAX_COLS)
				hs_strbuf_adds(&sb, " ...");
		} else if (c == '\t') {
			do
				hs_strbuf_addc(&sb, ' ');
			while (++col % 8);
		} else {
			hs_strbuf_addc(&sb, (c < 0x20 || c == 0x7f) ? '?' : (char)c);
			col++;
		}
	}
	if (c == EOF) {
		ret->eof = true;
		ret->nlines = line - 1;
		if (col && k < nspans && line >= spans[k].first) { /* a last line without '\n' */
			hs_vec_push(&ret->lines, ((struct src_line){line, hs_strbuf_detach(&sb)}));
			ret->nlines = line;
		}
	}
	hs_strbuf_release(&sb);
	c = ferror(f) ? -EIO : 0;
	fclose(f);
	return c;
}

/* ---- one function ---- */

struct row {
	int64_t line;
	int64_t self, total;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

struct annotation {
	const struct hs_profile *p;
	struct hs_outfile *out;
	const char *unit, *type;
	int64_t sum;
	HS_VEC(uint32_t) noted; /* source files already said to be unreadable */
};

static double pct(int64_t v, int64_t sum)
{
	return sum ? 100.0 * (double)v / (double)sum : 0.0;
}

/* One line: its values where it has some (=> for the hottest), its number ("?" for 0), text. */
static void print_row(struct annotation *a, const struct row *r, bool hottest, int64_t line, const char *text)
{
	char b1[HS_VALUE_BUF], b2[HS_VALUE_BUF];

	if (r && (r->self || r->total))
		hs_outfile_printf(a->out, "%s%7.2f%% %12s %7.2f%% %12s", hottest ? "=>" : "  ", pct(r->self, a->sum),
				  hs_value_fmt(b1, r->self, a->unit), pct(r->total, a->sum),
				  hs_value_fmt(b2, r->total, a->unit));
	else
		hs_outfile_printf(a->out, "%45s", "");
	if (line)
		hs_outfile_printf(a->out, " %7lld  %s\n", (long long)line, text ? text : "");
	else
		hs_outfile_printf(a->out, " %7s  %s\n", "?", text);
}

/* The spans of source shown around rows (sorted, lines from 1 to MAX_LINE): from
 * CONTEXT lines before the first to CONTEXT after the last (from start_line, the function's
 * first line, when known and near), or where that is longer than MAX_SPAN, CONTEXT lines around
 * each. Returns how many, in ret (n of them at most). */
static size_t spans_of(const struct row *rows, size_t n, int64_t start_line, struct span *ret)
{
	size_t k = 0;
	int64_t first = HS_MAX(rows[0].line - CONTEXT, (int64_t)1), last = rows[n - 1].line + CONTEXT;

	if (start_line > 0 && start_line < first && last - start_line < MAX_SPAN)
		first = start_line;
	if (last - first < MAX_SPAN) {
		ret[0] = (struct span){first, last};
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct span s = {HS_MAX(rows[i].line - CONTEXT, (int64_t)1), rows[i].line + CONTEXT};
		if (k && s.first <= ret[k - 1].last + 1)
			ret[k - 1].last = s.last;
		else
			ret[k++] = s;
	}
	return k;
}

/* The rows of one source file of the function: the sampled lines, and where the file can be
 * read, their text and the lines around them. */
static void print_file(struct annotation *a, uint32_t file, int64_t start_line, const struct row *rows, size_t n,
		       size_t hot)
{
	const char *path = hs_profile_str(a->p, file);
	struct span *spans = hs_xmalloc(n * sizeof(*spans));
	size_t nspans = spans_of(rows, n, start_line, spans), next = 0, t = 0;
	struct source src = {0};
	/* Python's code without a file: "<frozen importlib._bootstrap>", "<string>" (exec) */
	bool no_file = path[0] == '<' && path[strlen(path) - 1] == '>';
	int rc = no_file ? -ENOENT : source_read(path, spans, nspans, &src);

	if (rc) {
		bool noted = false;
		for (size_t i = 0; i < a->noted.n; i++)
			noted |= a->noted.v[i] == file;
		if (!noted && no_file) {
			hs_outfile_printf(a->out, "(no source text: %s is the interpreter's, not a file)\n", path);
			hs_vec_push(&a->noted, file);
		} else if (!noted) {
			hs_outfile_printf(a->out, "(no source text: cannot read '%s': %s)\n", path, strerror(-rc));
			hs_vec_push(&a->noted, file);
		}
		for (size_t i = 0; i < n; i++)
			print_row(a, &rows[i], i == hot, rows[i].line, NULL);
		goto out;
	}
	if (src.eof && src.nlines < rows[n - 1].line)
		hs_outfile_printf(a->out,
				  "(%s has %lld lines, fewer than the samples name: changed since the recording?)\n",
				  path, (long long)src.nlines);
	for (size_t k = 0; k < nspans; k++) {
		if (k)
			hs_outfile_printf(a->out, "%45s %7s\n", "", "...");
		for (int64_t l = spans[k].first; l <= spans[k].last; l++) {
			bool sampled = next < n && rows[next].line == l;

			while (t < src.lines.n && src.lines.v[t].line < l)
				t++;
			if (!sampled && src.eof && l > src.nlines) {
				/* past the end of the file: only the sampled lines */
				if (next == n || rows[next].line > spans[k].last)
					break;
				l = rows[next].line - 1;
				continue;
			}
			print_row(a, sampled ? &rows[next] : NULL, sampled && next == hot, l,
				  t < src.lines.n && src.lines.v[t].line == l ? src.lines.v[t].text : NULL);
			next += sampled;
		}
	}
out:
	source_release(&src);
	free(spans);
}

static void annotate_one(struct annotation *a, const struct hs_report_fn *fn, const struct hs_report_fns *lines)
{
	const struct hs_profile *p = a->p;
	const char *mod = hs_profile_str(p, fn->module);
	char b1[HS_VALUE_BUF], b2[HS_VALUE_BUF], b3[HS_VALUE_BUF];
	HS_VEC(struct row) rows = {0};
	HS_VEC(uint32_t) files = {0};
	struct row none = {0, 0, 0};
	int64_t start_line = 0;

	for (size_t i = 0; i < lines->n; i++) {
		const struct hs_report_fn *l = &lines->v[i];
		bool seen = false;

		if (l->name != fn->name || l->module != fn->module)
			continue;
		if (l->line < 1 || l->line > MAX_LINE) {
			none.self = hs_add_sat(none.self, l->self);
			none.total = hs_add_sat(none.total, l->total);
			continue;
		}
		for (size_t k = 0; k < files.n; k++)
			seen |= files.v[k] == l->file;
		if (!seen)
			hs_vec_push(&files, l->file);
	}
	for (size_t i = 0; i < p->functions.n; i++)
		if (p->functions.v[i].name == fn->name && p->functions.v[i].start_line > 0)
			start_line = p->functions.v[i].start_line;
	hs_outfile_printf(a->out, "%s", hs_profile_str(p, fn->name));
	/* as the report: "[kernel.kallsyms]" is bracketed already; a Python function's module is
	 * its source file, named once */
	if (*mod && !(files.n == 1 && files.v[0] == fn->module))
		hs_outfile_printf(a->out, *mod == '[' ? "  %s" : "  [%s]", mod);
	for (size_t k = 0; k < files.n; k++)
		hs_outfile_printf(a->out, "%s%s", k ? ", " : "  ", hs_profile_str(p, files.v[k]));
	hs_outfile_printf(a->out, "\n  self %s (%.2f%%), total %s (%.2f%%) of %s %s\n",
			  hs_value_fmt(b1, fn->self, a->unit), pct(fn->self, a->sum),
			  hs_value_fmt(b2, fn->total, a->unit), pct(fn->total, a->sum),
			  hs_value_fmt(b3, a->sum, a->unit), a->type);
	hs_outfile_printf(a->out, "  %8s %12s %8s %12s %7s  %s\n", "self%", "self", "total%", "total", "line",
			  "source");
	for (size_t k = 0; k < files.n; k++) {
		size_t hot = 0;

		rows.n = 0;
		for (size_t i = 0; i < lines->n; i++) {
			const struct hs_report_fn *l = &lines->v[i];
			if (l->name == fn->name && l->module == fn->module && l->line >= 1 && l->line <= MAX_LINE &&
			    l->file == files.v[k])
				hs_vec_push(&rows, ((struct row){l->line, l->self, l->total}));
		}
		qsort(rows.v, rows.n, sizeof(*rows.v), row_cmp);
		/* the hottest line: most total (the line's own samples and its callees': a caller's
		 * costly call site, not a line with a stray sample of its own), then most self */
		for (size_t i = 1; i < rows.n; i++)
			if (rows.v[i].total > rows.v[hot].total ||
			    (rows.v[i].total == rows.v[hot].total && rows.v[i].self > rows.v[hot].self))
				hot = i;
		if (files.n > 1)
			hs_outfile_printf(a->out, "%45s %7s  %s:\n", "", "", hs_profile_str(p, files.v[k]));
		print_file(a, files.v[k], files.n == 1 ? start_line : 0, rows.v, rows.n, hot);
	}
	if (none.self || none.total)
		print_row(a, &none, false, 0,
			  files.n ? "[no line information]"
				  : "[no line information: no debug information for this function]");
	hs_vec_free(&rows);
	hs_vec_free(&files);
}

int hs_write_annotate(const struct hs_profile *p, const struct hs_output_opts *o, struct hs_outfile *out)
{
	uint32_t vi = hs_output_value_index(p, o);
	struct annotation a = {p,
			       out,
			       p->types.n ? hs_profile_str(p, p->types.v[vi].unit) : "",
			       p->types.n ? hs_profile_str(p, p->types.v[vi].type) : "samples",
			       hs_profile_total(p, vi),
			       {0}};
	struct hs_report_fns fns = {0}, lines = {0};
	size_t *m = NULL, n, max = o->top > 0 ? (size_t)o->top : MAX_FUNCTIONS;

	functions(p, vi, &fns);
	n = match(p, &fns, o->annotate ? o->annotate : "", &m);
	if (n > 1 && n <= max)
		hs_outfile_printf(out, "# '%s' names %zu functions: each in turn, hottest first\n\n", o->annotate, n);
	else if (n > max)
		hs_outfile_printf(out, "# '%s' names %zu functions: the %zu hottest in turn (--top N for more)\n\n",
				  o->annotate, n, max);
	if (n)
		hs_report_fns(p, vi, true, &lines);
	for (size_t i = 0; i < n && i < max; i++) {
		if (i)
			hs_outfile_puts(out, "\n");
		annotate_one(&a, &fns.v[m[i]], &lines);
	}
	free(m);
	hs_vec_free(&fns);
	hs_vec_free(&lines);
	hs_vec_free(&a.noted);
	return out->err ? -out->err : 0;
}
