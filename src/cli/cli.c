/* Shared command-line plumbing: messages, input loading, output writing, writer options. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/load.h"
#include "util/outfile.h"

int cli_verbose;
int cli_quiet;
static const char *cli_value_name;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "hotstack: %s%s\n", prefix, buf);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	if (cli_quiet)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void cli_info(const char *fmt, ...)
{
	va_list ap;
	if (cli_quiet || (!cli_verbose && !isatty(STDERR_FILENO)))
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

struct hs_profile *cli_load(const char *path)
{
	return cli_load_ex(path, NULL);
}

struct hs_profile *cli_load_ex(const char *path, const struct hs_load_opts *opts)
{
	struct hs_parse_error err = {0};
	struct hs_perf_data_load_info info;
	struct hs_profile *p = NULL;
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	int rc;

	memset(&info, 0, sizeof(info));
	rc = hs_profile_load_ex(path, opts, &p, &info, &err);
	if (!rc) {
		if (info.truncated)
			cli_warn("%s: the file ends inside a record at offset 0x%llx (cut short?): read the %llu "
				 "samples before it",
				 name, (unsigned long long)info.truncated_at, (unsigned long long)info.samples);
		for (size_t i = 0; i < info.mismatched.n; i++)
			cli_warn("%s changed since the recording (its build-id differs) and perf's build-id cache "
				 "has no copy: its frames are shown as [module]",
				 info.mismatched.v[i]);
		if (info.kernel_note)
			cli_warn("%s: no kernel symbols: %s", name, info.kernel_note);
		if (info.unknown_records)
			cli_info("%s: skipped %llu records of unknown types", name, (unsigned long long)info.unknown_records);
		if (info.bad_records)
			cli_warn("%s: %llu records could not be parsed", name, (unsigned long long)info.bad_records);
		hs_perf_data_load_info_release(&info);
		return p;
	}
	hs_perf_data_load_info_release(&info);
	if (err.msg[0] && rc != -ENOENT && rc != -EACCES && rc != -EISDIR)
		cli_error("%s: offset 0x%llx: %s", name, (unsigned long long)err.offset, err.msg);
	else if (rc == -EFBIG)
		cli_error("'%s' is too large to read", path);
	else
		cli_error("cannot read '%s': %s", path, strerror(-rc));
	return NULL;
}

int cli_outputs_add(struct cli_outputs *outs, const char *path)
{
	if (outs->n == (int)HS_ARRAY_SIZE(outs->path)) {
		cli_error("too many -o outputs (at most %zu)", HS_ARRAY_SIZE(outs->path));
		return -1;
	}
	outs->path[outs->n++] = path;
	return 0;
}

static enum hs_format output_format(const struct cli_outputs *outs, const char *path)
{
	if (!strcmp(path, "-"))
		return outs->format ? hs_format_from_name(outs->format) : HS_FMT_NONE;
	if (outs->format && hs_format_from_path(path) == HS_FMT_NONE)
		return hs_format_from_name(outs->format);
	return hs_format_from_path(path);
}

int cli_outputs_check(const struct cli_outputs *outs)
{
	if (outs->format && hs_format_from_name(outs->format) == HS_FMT_NONE) {
		cli_error("unknown format '%s' (svg, folded, pprof, txt)", outs->format);
		return -1;
	}
	for (int i = 0; i < outs->n; i++) {
		if (output_format(outs, outs->path[i]) == HS_FMT_NONE) {
			if (!strcmp(outs->path[i], "-"))
				cli_error("-o - needs --format (svg, folded, pprof, txt)");
			else
				cli_error("cannot tell the format of '%s' from its name (use .svg, .folded, .pb.gz, "
					  ".txt, or --format)",
					  outs->path[i]);
			return -1;
		}
	}
	return 0;
}

int cli_outputs_write(const struct cli_outputs *outs, const struct hs_profile *p, const struct hs_output_opts *o)
{
	int failed = 0;

	for (int i = 0; i < outs->n; i++) {
		struct hs_outfile of;
		const char *path = outs->path[i];
		int rc = hs_outfile_open(&of, path);

		if (!rc)
			rc = hs_write_format(p, output_format(outs, path), o, &of);
		if (!rc) {
			rc = hs_outfile_commit(&of);
		} else {
			int werr = of.err ? -of.err : rc;
			hs_outfile_abort(&of);
			rc = werr;
		}
		if (rc) {
			cli_error("cannot write '%s': %s", path, strerror(-rc));
			failed = 1;
		} else if (strcmp(path, "-")) {
			cli_info("wrote %s", path);
		}
	}
	return failed ? -1 : 0;
}

const struct option cli_output_longopts[] = {
	{"format", required_argument, NULL, OPT_FORMAT},
	{"pid", no_argument, NULL, OPT_PID_ROOT},
	{"tid", no_argument, NULL, OPT_TID_ROOT},
	{"no-annotate", no_argument, NULL, OPT_NO_ANNOTATE},
	{"inline-annotate", no_argument, NULL, OPT_INLINE_ANNOTATE},
	{"lines", no_argument, NULL, OPT_LINES},
	{"title", required_argument, NULL, OPT_TITLE},
	{"width", required_argument, NULL, OPT_WIDTH},
	{"min-width", required_argument, NULL, OPT_MIN_WIDTH},
	{"inverted", no_argument, NULL, OPT_INVERTED},
	{"top", required_argument, NULL, OPT_TOP},
	{"stats", no_argument, NULL, OPT_STATS},
	{"value", required_argument, NULL, OPT_VALUE},
	{0, 0, 0, 0},
};

static int parse_int(const char *arg, const char *what, long lo, long hi, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		cli_error("invalid %s '%s' (expected a number from %ld to %ld)", what, arg, lo, hi);
		return -1;
	}
	*ret = v;
	return 0;
}

int cli_output_option(int opt, const char *arg, struct hs_output_opts *o)
{
	long v;
	char *end;

	switch (opt) {
	case OPT_PID_ROOT:
		o->root_pid = true;
		return 1;
	case OPT_TID_ROOT:
		o->root_tid = true;
		return 1;
	case OPT_NO_ANNOTATE:
		o->no_annotate = true;
		return 1;
	case OPT_INLINE_ANNOTATE:
		o->annotate_inline = true;
		return 1;
	case OPT_LINES:
		o->lines = true;
		return 1;
	case OPT_TITLE:
		o->title = arg;
		return 1;
	case OPT_WIDTH:
		if (parse_int(arg, "width", 100, 100000, &v))
			return -1;
		o->width = (int)v;
		return 1;
	case OPT_MIN_WIDTH:
		o->min_width = strtod(arg, &end);
		if (end == arg || *end || o->min_width < 0 || o->min_width > 1000) {
			cli_error("invalid minimum width '%s'", arg);
			return -1;
		}
		return 1;
	case OPT_INVERTED:
		o->inverted = true;
		return 1;
	case OPT_TOP:
		if (parse_int(arg, "--top", 1, 1000000, &v))
			return -1;
		o->top = (int)v;
		return 1;
	case OPT_VALUE:
		cli_value_name = arg;
		return 1;
	case OPT_STATS:
		o->stats = true;
		return 1;
	}
	return 0;
}

int cli_resolve_value(const struct hs_profile *p, struct hs_output_opts *o)
{
	int i;

	if (!cli_value_name)
		return 0;
	i = hs_profile_find_type(p, cli_value_name);
	if (i < 0) {
		cli_error("the profile has no '%s' values (it has: %s%s%s)", cli_value_name,
			  p->types.n ? hs_profile_str(p, p->types.v[0].type) : "none",
			  p->types.n > 1 ? ", " : "", p->types.n > 1 ? hs_profile_str(p, p->types.v[1].type) : "");
		return -1;
	}
	o->value_index = i;
	return 0;
}
