/* The table of output formats: names, extensions and writers, one row per format. The rest of
 * hotstack finds a format here, by --format name or by -o extension, and writes through its
 * row; a new format is a writer file and a row. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "util/strbuf.h"
#include "writers.h"

/* Help lists the rows with an extension, in this order. */
const struct hs_format hs_formats[] = {
	{"svg", {0}, {".svg"}, hs_write_svg, hs_write_svg_diff, "flame graphs", HS_TIMES_UNUSED},
	{"html", {0}, {".html", ".htm"}, hs_write_html, hs_write_html_diff, "flame graphs", HS_TIMES_UNUSED},
	{"folded",
	 {0},
	 {".folded"},
	 hs_write_folded,
	 hs_write_folded_diff,
	 "two-column folded stacks",
	 HS_TIMES_UNUSED},
	{"pprof", {"pb.gz"}, {".pb.gz", ".pprof", ".pb"}, hs_write_pprof, NULL, NULL, HS_TIMES_IF_KEPT},
	{"otlp", {0}, {".otlp.pb"}, hs_write_otlp, NULL, NULL, HS_TIMES_UNUSED},
	{"speedscope", {0}, {".speedscope.json"}, hs_write_speedscope, NULL, NULL, HS_TIMES_ORDER},
	{"firefox", {"firefox-profiler"}, {".json.gz", ".firefox.json", ".firefox.json.gz"}, hs_write_firefox, NULL, NULL,
	 HS_TIMES_ORDER},
	{"chrome", {"chrome-trace", "trace-event"}, {".trace.json", ".trace.json.gz"}, hs_write_chrome, NULL, NULL, HS_TIMES_ORDER},
	{"txt",
	 {"text", "report"},
	 {".txt"},
	 hs_write_report,
	 hs_write_report_diff,
	 "a text report of the changes",
	 HS_TIMES_UNUSED},
	{"json", {0}, {".json"}, hs_write_json, NULL, NULL, HS_TIMES_UNUSED},
	/* prints each sample's time, but only `hotstack script` asks a perf.data for them */
	{"script", {"perf-script"}, {0}, hs_write_script, NULL, NULL, HS_TIMES_UNUSED},
};

const size_t hs_nformats = HS_ARRAY_SIZE(hs_formats);

/* The format of path's longest extension, and that extension's length in *len. */
static const struct hs_format *longest_ext(const char *path, size_t n, size_t *len)
{
	const struct hs_format *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < hs_nformats; i++) {
		for (size_t j = 0; j < HS_FORMAT_MAX_NAMES && hs_formats[i].exts[j]; j++) {
			size_t k = strlen(hs_formats[i].exts[j]);
			if (n > k && k > best_len && !strncmp(path + n - k, hs_formats[i].exts[j], k)) {
				best = &hs_formats[i];
				best_len = k;
			}
		}
	}
	*len = best_len;
	return best;
}

const struct hs_format *hs_format_from_path(const char *path)
{
	size_t n = strlen(path), len, inner;
	const struct hs_format *f;

	/* an extension alone names no file, even where it ends in another (.speedscope.json) */
	for (size_t i = 0; i < hs_nformats; i++)
		for (size_t j = 0; j < HS_FORMAT_MAX_NAMES && hs_formats[i].exts[j]; j++)
			if (!strcmp(path, hs_formats[i].exts[j]))
				return NULL;
	/* the longest extension that ends it: x.otlp.pb is OTLP's, not pprof's .pb */
	f = longest_ext(path, n, &len);
	/* a .gz whose name without it asks for another format by more than the extension under
	 * the .gz (x.speedscope.json.gz, x.otlp.pb.gz) asks for that one gzipped, which it is not:
	 * no format, rather than the Firefox Profiler's .json.gz or pprof's .pb.gz */
	if (f && n > 3 && !strcmp(path + n - 3, ".gz") && longest_ext(path, n - 3, &inner) != f && inner > len - 3)
		return NULL;
	return f;
}

const struct hs_format *hs_format_from_name(const char *name)
{
	for (size_t i = 0; i < hs_nformats; i++) {
		if (!strcmp(name, hs_formats[i].name))
			return &hs_formats[i];
		for (size_t j = 0; j < HS_FORMAT_MAX_NAMES && hs_formats[i].aliases[j]; j++)
			if (!strcmp(name, hs_formats[i].aliases[j]))
				return &hs_formats[i];
	}
	return NULL;
}

const struct hs_format *hs_format_for_output(const char *path, const char *format)
{
	if (!strcmp(path, "-"))
		return format ? hs_format_from_name(format) : NULL;
	if (format && !hs_format_from_path(path))
		return hs_format_from_name(format);
	return hs_format_from_path(path);
}

enum hs_format_times hs_outputs_times(const char *const *paths, size_t n, const char *format)
{
	enum hs_format_times t = HS_TIMES_UNUSED;

	for (size_t i = 0; i < n; i++)
		if (hs_format_for_output(paths[i], format)->times > t)
			t = hs_format_for_output(paths[i], format)->times;
	return t;
}

void hs_formats_list(struct hs_strbuf *sb, bool by_ext, bool diff, const char *prefix, const char *sep)
{
	bool first = true;

	/* a format without an extension belongs to the command that writes it (script) */
	for (size_t i = 0; i < hs_nformats; i++) {
		if (!hs_formats[i].exts[0] || (diff && !hs_formats[i].write_diff))
			continue;
		hs_strbuf_addf(sb, "%s%s%s", first ? "" : sep, prefix,
			       by_ext ? hs_formats[i].exts[0] : hs_formats[i].name);
		first = false;
	}
}

void hs_formats_diff_help(struct hs_strbuf *sb)
{
	const struct hs_format *last = NULL;
	size_t ngroups = 0, n = 0;

	for (size_t i = 0; i < hs_nformats; i++) {
		const struct hs_format *f = &hs_formats[i];
		if (!f->write_diff || !f->exts[0])
			continue;
		if (!last || strcmp(last->diff_help, f->diff_help))
			ngroups++;
		last = f;
	}
	last = NULL;
	for (size_t i = 0; i < hs_nformats; i++) {
		const struct hs_format *f = &hs_formats[i];
		if (!f->write_diff || !f->exts[0])
			continue;
		if (last && !strcmp(last->diff_help, f->diff_help)) {
			hs_strbuf_addf(sb, ", %s", f->exts[0]);
		} else {
			if (last)
				hs_strbuf_adds(sb, ++n < ngroups - 1 ? "), " : ") and ");
			hs_strbuf_addf(sb, "%s (%s", f->diff_help, f->exts[0]);
		}
		last = f;
	}
	if (last)
		hs_strbuf_adds(sb, ")");
}

int hs_format_write_path(const struct hs_format *f, const char *path, const struct hs_profile *a,
			 const struct hs_profile *b, const struct hs_output_opts *o)
{
	struct hs_outfile of;
	int rc = hs_outfile_open(&of, path);

	if (!rc && !a)
		rc = f->write(b, o, &of);
	else if (!rc)
		rc = f->write_diff ? f->write_diff(a, b, o, &of) : -EINVAL;
	if (!rc)
		return hs_outfile_commit(&of);
	/* the write's own error (ENOSPC) says more than what it made the writer return */
	if (of.err)
		rc = -of.err;
	hs_outfile_abort(&of);
	return rc;
}

int hs_output_probe(const char *path)
{
	struct hs_outfile of;
	struct stat st;
	int rc;

	/* not a pipe: its reader would see the end of the data before it starts */
	if (!stat(path, &st) && S_ISFIFO(st.st_mode))
		return 0;
	rc = hs_outfile_open(&of, path);
	hs_outfile_abort(&of);
	return rc;
}

char *hs_output_name(const char *in, const char *base, const char *ext)
{
	static const char *const exts[] = {".pb.gz", ".pprof", ".pb", ".folded", ".txt", ".data"};
	struct hs_strbuf sb = {0};
	size_t n = strlen(in), c;

	/* a directory: its name without the slashes after it; "." and ".." (its last part): base */
	while (n > 1 && in[n - 1] == '/')
		n--;
	for (c = n; c && in[c - 1] != '/'; c--)
		;
	if (!strcmp(in, "-") || ((n - c == 1 || n - c == 2) && !strncmp(in + c, "..", n - c))) {
		in = base;
		n = strlen(base);
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(exts); i++) {
		size_t k = strlen(exts[i]);
		if (n > k && !memcmp(in + n - k, exts[i], k)) {
			n -= k;
			break;
		}
	}
	hs_strbuf_add(&sb, in, n);
	hs_strbuf_adds(&sb, ext);
	return hs_strbuf_detach(&sb);
}

/* What a person does next with a file of each format, {} its path: one step, the usual one. */
static const struct {
	const char *format, *next;
} nexts[] = {
	{"svg", "open {} in a browser (hover for details, click to zoom, Ctrl-F to search)"},
	{"html", "open {} in a browser (click to zoom, Ctrl-F to search)"},
	{"folded", "hotstack flame {} (a flame graph), or flamegraph.pl {} > flame.svg"},
	{"pprof", "hotstack report {} (the top functions), hotstack flame {} (a flame graph)"},
	{"speedscope", "open {} at https://www.speedscope.app"},
	{"firefox", "open {} at https://profiler.firefox.com (Load a profile from file)"},
	{"chrome", "open {} at https://ui.perfetto.dev (Open trace file), or in chrome://tracing"},
	{"txt", "less {}"},
};

bool hs_format_next(const struct hs_format *f, const char *path, struct hs_strbuf *sb)
{
	for (size_t i = 0; f && i < HS_ARRAY_SIZE(nexts); i++) {
		if (strcmp(nexts[i].format, f->name))
			continue;
		for (const char *s = nexts[i].next, *b; *s; s = b + 2) {
			b = strstr(s, "{}");
			if (!b) {
				hs_strbuf_adds(sb, s);
				break;
			}
			hs_strbuf_add(sb, s, (size_t)(b - s));
			hs_strbuf_add_shell_word(sb, path);
		}
		return true;
	}
	return false;
}
