/* Shared command-line plumbing: messages, input loading, output writing, writer options. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/filter.h"
#include "profile/folded-read.h"
#include "profile/load.h"
#include "util/outfile.h"
#include "util/strbuf.h"

int cli_verbose;
int cli_quiet;
static const char *cli_value_name;
static bool cli_wall;      /* --wall: the "wall" value, per thread */
static bool cli_root_given; /* --root was given: --wall keeps it */

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

void cli_detail(const char *fmt, ...)
{
	va_list ap;
	if (!cli_verbose)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

static bool debuginfod_set(void)
{
	return (getenv("DEBUGINFOD_URLS") ?: "")[0];
}

/* say() of each line of lines, a line without its "\n" */
static void say_lines(void (*say)(const char *fmt, ...), const char *lines)
{
	for (const char *l = lines ? lines : ""; *l;) {
		int n = (int)strcspn(l, "\n");
		say("%.*s", n, l);
		l += n + (l[n] == '\n');
	}
}

void cli_warn_lines(const char *lines)
{
	say_lines(cli_warn, lines);
}

void cli_detail_lines(const char *lines)
{
	say_lines(cli_detail, lines);
}

/* What reading one input found, said as it is read. */
static void say_loaded(void *ctx, const char *path, const struct hs_load_info *li, const struct hs_profile *p)
{
	struct hs_strbuf warn = {0}, note = {0};

	(void)ctx;
	hs_load_info_notes(li, p, strcmp(path, "-") ? path : "<stdin>", debuginfod_set(), &warn, &note);
	cli_warn_lines(hs_strbuf_str(&warn));
	say_lines(cli_info, hs_strbuf_str(&note));
	hs_strbuf_release(&warn);
	hs_strbuf_release(&note);
}

struct hs_profile *cli_load(const char *const *paths, size_t n, const struct hs_load_opts *opts)
{
	struct hs_load_many lm = {.opts = opts, .loaded = say_loaded};
	struct hs_strbuf sb = {0};
	struct hs_error err = {0};
	struct hs_profile *p = NULL;
	int rc = hs_profile_load_many(paths, n, &lm, &p, &err);
	const char *path = lm.failed, *name = rc && strcmp(path, "-") ? path : "<stdin>";
	bool detail = rc && err.detail[0] && rc != -ENOENT && rc != -EACCES && rc != -EISDIR;

	if (!rc)
		hs_load_many_notes(&lm, &sb);
	say_lines(cli_info, hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
	/* of the file as a whole, at its start, or in a text file whose line number says more */
	if (detail && (!err.offset || !strncmp(err.detail, "line ", 5)))
		cli_error("%s: %s", name, err.detail);
	else if (detail)
		cli_error("%s: offset 0x%llx: %s", name, (unsigned long long)err.offset, err.detail);
	else if (rc == -EFBIG)
		cli_error("'%s' is too large to read", path);
	else if (rc)
		cli_error("cannot read '%s': %s", path, strerror(-rc));
	hs_load_many_release(&lm);
	return p;
}

void cli_warn_unnamed(const struct hs_profile *p)
{
	struct hs_strbuf sb = {0};

	hs_profile_unnamed_note(p, debuginfod_set(), &sb);
	cli_warn_lines(hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
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

int cli_outputs_check(const struct cli_outputs *outs)
{
	struct hs_strbuf sb = {0};

	if (outs->format && !hs_format_from_name(outs->format)) {
		hs_formats_list(&sb, false, false, "", ", ");
		cli_error("unknown format '%s' (%s)", outs->format, hs_strbuf_str(&sb));
		hs_strbuf_release(&sb);
		return -1;
	}
	for (int i = 0; i < outs->n; i++) {
		if (hs_outfile_is_dir(outs->path[i]) || !hs_format_for_output(outs->path[i], outs->format)) {
			bool dash = !strcmp(outs->path[i], "-");
			hs_formats_list(&sb, !dash, false, "", ", ");
			if (dash)
				cli_error("-o - needs --format (%s)", hs_strbuf_str(&sb));
			else if (hs_outfile_is_dir(outs->path[i]))
				cli_error("cannot write '%s': %s", outs->path[i], strerror(EISDIR));
			else
				cli_error("cannot tell the format of '%s' from its name (use %s, or --format)", outs->path[i],
					  hs_strbuf_str(&sb));
			hs_strbuf_release(&sb);
			return -1;
		}
	}
	return 0;
}

const struct hs_format *cli_output_format(const struct cli_outputs *outs, int i)
{
	return hs_format_for_output(outs->path[i], outs->format);
}

/* What the profile could not hold as the input had it, said once before it is written. */
static void warn_held(const struct hs_profile *q, struct hs_strbuf *sb)
{
	hs_strbuf_reset(sb);
	hs_profile_held_notes(q, sb);
	cli_warn_lines(hs_strbuf_str(sb));
}

int cli_outputs_write(const struct cli_outputs *outs, const struct hs_profile *a, const struct hs_profile *p,
		      const struct hs_output_opts *o)
{
	struct hs_strbuf sb = {0};
	int failed = 0;

	for (int k = 0; k < 2; k++)
		if (k ? p : a)
			warn_held(k ? p : a, &sb);
	hs_strbuf_release(&sb);
	for (int i = 0; i < outs->n; i++) {
		const char *path = outs->path[i];
		int rc = hs_format_write_path(hs_format_for_output(path, outs->format), path, a, p, o);

		if (rc) {
			cli_error("cannot write '%s': %s", path, strerror(-rc));
			failed = 1;
		} else if (strcmp(path, "-") && outs->say && !cli_quiet) {
			fprintf(stderr, "hotstack: wrote %s\n", path);
		} else if (strcmp(path, "-")) {
			cli_info("wrote %s", path);
		}
	}
	return failed ? -1 : 0;
}

void cli_outputs_next(const struct cli_outputs *outs)
{
	struct hs_strbuf sb = {0};

	for (int i = 0; i < outs->n && !cli_quiet; i++)
		if (strcmp(outs->path[i], "-") && hs_format_next(cli_output_format(outs, i), outs->path[i], &sb)) {
			fprintf(stderr, "hotstack: next: %s\n", hs_strbuf_str(&sb));
			break;
		}
	hs_strbuf_release(&sb);
}

void cli_output_opts_help(FILE *fp, bool views)
{
	struct hs_strbuf sb = {0};

	hs_output_options_help(&sb, views);
	fputs(hs_strbuf_str(&sb), fp);
	hs_strbuf_release(&sb);
}

void cli_options_help(FILE *fp, const struct hs_option *t)
{
	struct hs_strbuf sb = {0};

	hs_options_help(t, &sb);
	fputs(hs_strbuf_str(&sb), fp);
	hs_strbuf_release(&sb);
}

/* The writers' options given (bits of hs_output_options[]), for cli_outputs_refuse(). */
static uint64_t given;

int cli_outputs_refuse(const struct cli_outputs *outs, const struct hs_format *as, const char *cmd)
{
	for (size_t i = 0; i < hs_noutput_options; i++) {
		const struct hs_output_option *h = &hs_output_options[i];
		int k = 0;

		while (k < outs->n && !hs_output_option_applies(h, as ? as : cli_output_format(outs, k)))
			k++;
		if ((given >> i & 1) && outs->n && k == outs->n) {
			cli_error("%s: --%s does not apply to %s (it sets %s)", cmd, h->name,
				  hs_format_noun(as ? as : cli_output_format(outs, 0)), h->sets);
			return -1;
		}
	}
	return 0;
}

int cli_option_error(const char *cmd, int c, char **argv, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	int len = (int)strcspn(arg, "="), n = 0;

	/* a short option (optind may still be at its cluster, after a long one): optopt says which */
	if (strncmp(arg, "--", 2) || (c == '?' && optopt && !strchr(arg, '=')))
		cli_error(c == ':' ? "%s: option '-%c' needs a value"
				   : "%s: unknown option '-%c' (see 'hotstack %s --help')",
			  cmd, optopt, cmd);
	else if (c == ':')
		cli_error("%s: option '%.*s' needs a value", cmd, len, arg);
	else if (optopt)
		cli_error("%s: option '%.*s' takes no value", cmd, len, arg);
	else {
		const char *names[256], *near;
		char word[64];
		size_t k = 0;

		for (const struct option *lo = longopts; lo && lo->name; lo++) {
			n += !strncmp(lo->name, arg + 2, (size_t)len - 2);
			if (k < HS_ARRAY_SIZE(names))
				names[k++] = lo->name;
		}
		snprintf(word, sizeof(word), "%.*s", len - 2, arg + 2);
		near = n > 1 ? NULL : hs_closest_word(word, names, k);
		if (near)
			cli_error("%s: unknown option '%.*s' (did you mean '--%s'? see 'hotstack %s --help')", cmd, len, arg,
				  near, cmd);
		else
			cli_error("%s: %s option '%.*s' (see 'hotstack %s --help')", cmd, n > 1 ? "ambiguous" : "unknown",
				  len, arg, cmd);
	}
	return 2;
}

int cli_output_option(int key, const char *arg, struct hs_output_opts *o)
{
	struct hs_error err = {0};
	const struct hs_output_option *h = hs_output_option_of_key(key);

	if (!h)
		return 0;
	given |= 1ULL << (h - hs_output_options);
	if (!strcmp(h->name, "value") || !strcmp(h->name, "wall")) {
		cli_wall = !strcmp(h->name, "wall");
		cli_value_name = cli_wall ? NULL : arg;
	} else if (hs_output_option_set(o, h->name, arg, &err)) {
		cli_error("%s", err.detail);
		return -1;
	}
	cli_root_given |= !strcmp(h->name, "root");
	return 1;
}

const char *cli_value_wanted(void)
{
	return cli_wall ? "wall" : cli_value_name;
}

int cli_resolve_value(const struct hs_profile *p, struct hs_output_opts *o)
{
	struct hs_strbuf sb = {0};
	int i;

	if (cli_wall) {
		i = hs_profile_find_type(p, "wall");
		if (i < 0) {
			cli_error("the profile has no wall-clock values: --wall needs a profile recorded with "
				  "'hotstack record --off-cpu' (on a CPU-time event)");
			return -1;
		}
		o->value_index = i;
		/* wall-clock time adds up per thread: each thread's own time line */
		if (!cli_root_given)
			o->root_tid = true;
		return 0;
	}
	if (!cli_value_name)
		return 0;
	if (hs_profile_value_index(p, cli_value_name, &i, &sb)) {
		cli_error("the profile has no '%s' values (it has: %s)", cli_value_name, hs_strbuf_str(&sb));
		hs_strbuf_release(&sb);
		return -1;
	}
	o->value_index = i;
	return 0;
}

int cli_filter_apply(struct hs_filter *f, const struct hs_output_opts *o, struct hs_profile **p, const char *name)
{
	struct hs_profile *q = NULL;
	int rc;

	if (!hs_filter_active(f))
		return 0;
	f->value_index = hs_output_value_index(*p, o);
	rc = hs_profile_filter(*p, f, &q);
	if (rc == -ENODATA) {
		cli_error("%s: --time needs timestamps, and this profile kept none (record with --keep-time, or "
			  "read a perf.data)",
			  strcmp(name, "-") ? name : "<stdin>");
		return -1;
	}
	if (rc) {
		cli_error("%s: cannot filter: %s", name, strerror(-rc));
		return -1;
	}
	hs_profile_free(*p);
	*p = q;
	return 0;
}
