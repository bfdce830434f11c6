/* Stack expansion shared by writers that merge stacks, and format dispatch. */
#include "output.h"

#include "util/strbuf.h"

#include <errno.h>
#include <string.h>

enum hs_format hs_format_from_path(const char *path)
{
	static const struct {
		const char *ext;
		enum hs_format f;
	} exts[] = {
		{".pb.gz", HS_FMT_PPROF}, {".pprof", HS_FMT_PPROF}, {".pb", HS_FMT_PPROF},
		{".folded", HS_FMT_FOLDED}, {".svg", HS_FMT_SVG}, {".txt", HS_FMT_TEXT},
		{".speedscope.json", HS_FMT_SPEEDSCOPE}, {".html", HS_FMT_HTML}, {".htm", HS_FMT_HTML},
	};
	size_t n = strlen(path);

	for (size_t i = 0; i < HS_ARRAY_SIZE(exts); i++) {
		size_t k = strlen(exts[i].ext);
		if (n > k && !strcmp(path + n - k, exts[i].ext))
			return exts[i].f;
	}
	return HS_FMT_NONE;
}

enum hs_format hs_format_from_name(const char *name)
{
	if (!strcmp(name, "pprof") || !strcmp(name, "pb.gz"))
		return HS_FMT_PPROF;
	if (!strcmp(name, "folded"))
		return HS_FMT_FOLDED;
	if (!strcmp(name, "svg"))
		return HS_FMT_SVG;
	if (!strcmp(name, "txt") || !strcmp(name, "text") || !strcmp(name, "report"))
		return HS_FMT_TEXT;
	if (!strcmp(name, "script") || !strcmp(name, "perf-script"))
		return HS_FMT_SCRIPT;
	if (!strcmp(name, "speedscope"))
		return HS_FMT_SPEEDSCOPE;
	if (!strcmp(name, "html"))
		return HS_FMT_HTML;
	return HS_FMT_NONE;
}

int hs_write_format(const struct hs_profile *p, enum hs_format f, const struct hs_output_opts *o,
		    struct hs_outfile *out)
{
	switch (f) {
	case HS_FMT_PPROF:
		return hs_write_pprof(p, o, out);
	case HS_FMT_FOLDED:
		return hs_write_folded(p, o, out);
	case HS_FMT_SVG:
		return hs_write_svg(p, o, out);
	case HS_FMT_TEXT:
		return hs_write_report(p, o, out);
	case HS_FMT_SCRIPT:
		return hs_write_script(p, o, out);
	case HS_FMT_SPEEDSCOPE:
		return hs_write_speedscope(p, o, out);
	case HS_FMT_HTML:
		return hs_write_html(p, o, out);
	case HS_FMT_NONE:
		break;
	}
	return -EINVAL;
}

const char *hs_frame_label(const struct hs_frame *f, const struct hs_output_opts *o, struct hs_strbuf *sb)
{
	if (!o->lines || !f->line || !*f->file)
		return f->name;
	hs_strbuf_reset(sb);
	hs_strbuf_addf(sb, "%s:%s:%lld", f->name, f->file, (long long)f->line);
	return hs_strbuf_str(sb);
}

uint32_t hs_output_value_index(const struct hs_profile *p, const struct hs_output_opts *o)
{
	if (!p->types.n)
		return 0;
	if (o->value_index < 0 || (size_t)o->value_index >= p->types.n)
		return 0;
	return (uint32_t)o->value_index;
}

size_t hs_stack_frames(const struct hs_profile *p, uint32_t stack, struct hs_frame **frames, size_t *cap)
{
	const struct hs_stack *s = &p->stacks.v[stack];
	const uint32_t *locs = hs_profile_stack_locs(p, stack);
	size_t n = 0;

	for (uint32_t i = s->nlocs; i-- > 0;) {
		const struct hs_location *l = &p->locations.v[locs[i]];
		uint32_t nl = l->nlines ? l->nlines : 1;
		const char *module = hs_profile_str(p, p->mappings.v[l->mapping].file);

		hs_xgrow((void **)frames, cap, n + nl, sizeof(**frames));
		if (!l->nlines) {
			(*frames)[n++] = (struct hs_frame){"[unknown]", "", module, 0, HS_KIND_PSEUDO, false};
			continue;
		}
		for (uint32_t j = l->nlines; j-- > 0;) {
			const struct hs_line *ln = &p->lines.v[l->line0 + j];
			const struct hs_function *fn = &p->functions.v[ln->function];
			(*frames)[n++] = (struct hs_frame){hs_profile_str(p, fn->name), hs_profile_str(p, fn->filename),
							   module, ln->line, l->kind, j + 1 < l->nlines};
		}
	}
	return n;
}
