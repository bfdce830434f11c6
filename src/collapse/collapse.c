/* hotstack collapse's engine (collapse.h): the input, the reader, the folding and the stack
 * table wired together, and what stopped a run. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/addr2line.h"
#include "collapse/collapse.h"
#include "collapse/fold.h"
#include "collapse/input.h"
#include "collapse/stack-table.h"

struct hs_collapse {
	struct hs_collapse_opts opts;
	struct hs_stack_table table;
	struct hs_addr2line a2l;
	struct hs_collapse_fold fold;
	struct hs_collapse_input in; /* all zero until opened: closing it then does nothing */
	struct hs_perf_script *r;
};

struct hs_collapse *hs_collapse_new(const struct hs_collapse_opts *opts)
{
	struct hs_collapse *c = hs_xcalloc(1, sizeof(*c));

	c->opts = *opts;
	c->a2l.context = opts->context;
	c->a2l.warn = opts->warn;
	c->a2l.warn_ctx = opts->warn_ctx;
	c->fold.opts = &c->opts;
	c->fold.a2l = &c->a2l;
	c->fold.table = &c->table;
	return c;
}

void hs_collapse_free(struct hs_collapse *c)
{
	if (!c)
		return;
	hs_perf_script_free(c->r);
	hs_collapse_input_close(&c->in);
	hs_stack_table_release(&c->table);
	hs_collapse_fold_release(&c->fold);
	hs_addr2line_release(&c->a2l);
	free(c);
}

/* The reader's srclines hook, set with --inline: the Perl script reads no source lines after
 * a frame it expanded with addr2line. */
static int inline_srclines(void *ctx, const struct hs_ps_frame *f)
{
	struct hs_collapse *c = ctx;

	return hs_addr2line_expand(&c->a2l, f) ? 0 : -1;
}

static void warn(const struct hs_collapse *c, const char *fmt, ...) HS_PRINTF(2, 3);
static void warn(const struct hs_collapse *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->opts.warn(c->opts.warn_ctx, msg);
}

/* What was left out, and why: stackcollapse-perf.pl drops the same things, mostly silently. */
static void warn_left_out(const struct hs_collapse *c)
{
	const struct hs_perf_script_stats *st = hs_perf_script_stats(c->r);
	const char *ev = hs_perf_script_event(c->r);
	const char *filter = c->opts.event_filter && *c->opts.event_filter ? c->opts.event_filter : NULL;

	if (!c->opts.warn)
		return;
	if (st->filtered && !filter)
		warn(c,
		     "left out %" PRIu64 " %s of events other than '%s', the first in the input (choose with "
		     "--event-filter)",
		     st->filtered, st->filtered == 1 ? "sample" : "samples", ev);
	if (filter && !st->headers)
		warn(c, "no samples of event '%s'", filter);
	else if (!st->samples && st->headers)
		warn(c, "no sample ends with a blank line: was this recorded without call graphs (perf record -g)?");
	else if (st->truncated)
		warn(c, "the input ends inside a sample (no blank line after it): that sample is left out, as "
			"stackcollapse-perf.pl leaves it out");
	if (st->unrecognized)
		warn(c, "%" PRIu64 " %s not perf script text (the first is line %" PRIu64 ")", st->unrecognized,
		     st->unrecognized == 1 ? "line is" : "lines are", st->first_unrecognized);
}

int hs_collapse_read(struct hs_collapse *c, const char *path, struct hs_error *err)
{
	struct hs_perf_script_opts po = {0};
	struct hs_ps_sample s;
	int rc;

	rc = hs_collapse_input_open(&c->in, path);
	if (rc) {
		err->code = rc;
		err->cause = HS_COLLAPSE_CANNOT_READ;
		return rc;
	}
	po.event_filter = c->opts.event_filter;
	po.srcline = c->opts.srcline;
	if (c->opts.inline_) {
		po.srclines = inline_srclines;
		po.srclines_ctx = c;
	}
	c->r = hs_perf_script_new(hs_collapse_input_read, &c->in, &po);
	while ((rc = hs_perf_script_next(c->r, &s, err)) > 0)
		hs_collapse_fold_sample(&c->fold, &s);
	if (rc >= 0) {
		warn_left_out(c);
		return 0;
	}
	err->code = rc;
	if (rc == -EPROTO) {
		err->cause = HS_COLLAPSE_GZIP_CORRUPT;
		err->line = 0;
		snprintf(err->detail, sizeof(err->detail), "the gzip data is corrupt or cut short");
	} else if (c->in.bomb) {
		err->cause = HS_COLLAPSE_BOMB;
		err->line = 0;
		snprintf(err->detail, sizeof(err->detail),
			 "gzip data expands to more than %llu MiB from %llu KiB, over %u times its size: not read (a "
			 "decompression bomb?)",
			 (unsigned long long)(c->in.plain >> 20), (unsigned long long)(c->in.raw >> 10), HS_DECOMPRESS_RATIO);
	} else {
		err->cause = err->detail[0] ? HS_COLLAPSE_BAD_INPUT : HS_COLLAPSE_CANNOT_READ;
	}
	return rc;
}

const struct hs_perf_script_stats *hs_collapse_stats(const struct hs_collapse *c)
{
	return hs_perf_script_stats(c->r);
}

const char *hs_collapse_event(const struct hs_collapse *c)
{
	return hs_perf_script_event(c->r);
}

void hs_collapse_write(const struct hs_collapse *c, struct hs_outfile *of)
{
	hs_stack_table_write(&c->table, of);
}
