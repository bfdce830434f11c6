#include "view-opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/util.h"

enum { OPT_NO_DEMANGLE = OPT_CMD_BASE + 90, OPT_NO_INLINE, OPT_SYMFS };

const char cli_perf_data_help[] =
	"      --symfs DIR         perf.data: look the recording's files up under DIR first (DIR/PATH,\n"
	"                          and their debug files under DIR/usr/lib/debug): another machine's\n"
	"                          or an image's files\n"
	"      --no-demangle       perf.data: C++ and Rust symbols as they are in the symbol table\n"
	"      --no-inline         perf.data: no DWARF debug information: no inline frames, no\n"
	"                          source lines (faster where debug information is large)\n";

const struct option cli_symbol_longopts[] = {
	{"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
	{"no-inline", no_argument, NULL, OPT_NO_INLINE},
	{"symfs", required_argument, NULL, OPT_SYMFS},
	{0, 0, 0, 0},
};

static const struct option shared[] = {
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{0, 0, 0, 0},
};

size_t cli_longopts_append(struct option *to, size_t n, size_t cap, const struct option *from)
{
	for (; from->name; from++) {
		if (n + 1 >= cap)
			abort(); /* a table too small: a programming error, found by any run */
		to[n++] = *from;
	}
	return n;
}

void cli_view_longopts(struct option *longopts, size_t cap, const struct option *own)
{
	size_t n = cli_longopts_append(longopts, 0, cap, cli_output_longopts);

	n = cli_longopts_append(longopts, n, cap, cli_filter_longopts);
	n = cli_longopts_append(longopts, n, cap, shared);
	n = cli_longopts_append(longopts, n, cap, cli_symbol_longopts);
	n = cli_longopts_append(longopts, n, cap, own);
	longopts[n] = (struct option){0, 0, 0, 0};
}

int cli_symbol_option(int c, const char *arg, struct cli_symbol_opts *s)
{
	switch (c) {
	case OPT_NO_DEMANGLE:
		s->no_demangle = true;
		return 1;
	case OPT_NO_INLINE:
		s->no_inline = true;
		return 1;
	case OPT_SYMFS:
		s->symfs = arg;
		return 1;
	}
	return 0;
}

int cli_symfs_check(const char *symfs)
{
	struct stat st;

	if (stat(symfs, &st) || !S_ISDIR(st.st_mode)) {
		cli_error("--symfs: '%s' is not a directory", symfs);
		return -1;
	}
	return 0;
}

int cli_view_option(int c, const char *arg, struct cli_view_opts *v)
{
	struct cli_symbol_opts s = {v->lo.no_demangle, v->lo.no_inline, v->lo.symfs};
	int rc;

	switch (c) {
	case 'o':
		return cli_outputs_add(&v->outs, arg) ? -1 : 1;
	case OPT_FORMAT:
		v->outs.format = arg;
		return 1;
	case 'q':
		cli_quiet = 1;
		return 1;
	}
	if (cli_symbol_option(c, arg, &s)) {
		/* a view checks --symfs as it comes */
		if (c == OPT_SYMFS && cli_symfs_check(arg))
			return -1;
		v->lo.no_demangle = s.no_demangle;
		v->lo.no_inline = s.no_inline;
		v->lo.symfs = s.symfs;
		return 1;
	}
	rc = cli_filter_option(c, arg, &v->f, &v->o);
	if (rc == 0)
		rc = cli_output_option(c, arg, &v->o);
	return rc;
}
