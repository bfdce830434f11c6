/* The table of output formats: names, extensions and writers, one row per format. The rest of
 * hotstack finds a format here, by --format name or by -o extension, and writes through its
 * row; a new format is a writer file and a row. */
#include <string.h>

#include "writers.h"

/* Help lists the rows with an extension, in this order. */
const struct hs_format hs_formats[] = {
	{"svg", {0}, {".svg"}, hs_write_svg, hs_write_svg_diff, "flame graphs", HS_TIMES_UNUSED},
	{"html", {0}, {".html", ".htm"}, hs_write_html, hs_write_html_diff, "flame graphs", HS_TIMES_UNUSED},
	{"folded", {0}, {".folded"}, hs_write_folded, hs_write_folded_diff, "two-column folded stacks",
	 HS_TIMES_UNUSED},
	{"pprof", {"pb.gz"}, {".pb.gz", ".pprof", ".pb"}, hs_write_pprof, NULL, NULL, HS_TIMES_IF_KEPT},
	{"speedscope", {0}, {".speedscope.json"}, hs_write_speedscope, NULL, NULL, HS_TIMES_ORDER},
	{"txt", {"text", "report"}, {".txt"}, hs_write_report, NULL, NULL, HS_TIMES_UNUSED},
	/* prints each sample's time, but only `hotstack script` asks a perf.data for them */
	{"script", {"perf-script"}, {0}, hs_write_script, NULL, NULL, HS_TIMES_UNUSED},
};

const size_t hs_nformats = HS_ARRAY_SIZE(hs_formats);

const struct hs_format *hs_format_from_path(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < hs_nformats; i++) {
		for (size_t j = 0; j < HS_FORMAT_MAX_NAMES && hs_formats[i].exts[j]; j++) {
			size_t k = strlen(hs_formats[i].exts[j]);
			if (n > k && !strcmp(path + n - k, hs_formats[i].exts[j]))
				return &hs_formats[i];
		}
	}
	return NULL;
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
