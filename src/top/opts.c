/* hotstack top's options: what to record (record/opts.c takes those) and how to show it. */
#include "top/opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "serve/serve.h"

enum { WINDOW = HS_OPT_TOP, STDIO, SERVE, COMM };

const struct hs_option hs_top_options[] = {
	{"all-cpus", 'a', no_argument, "  -a, --all-cpus          system-wide, every online CPU (the default)\n"},
	{"pid", 'p', required_argument,
	 "  -p, --pid PID[,PID...]  these processes (all their threads, and new ones)\n"},
	{"tid", 't', required_argument, "  -t, --tid TID[,TID...]  these threads only\n"},
	{"cpu", 'C', required_argument, "  -C, --cpu CPUS          system-wide on these CPUs only (0-1,3)\n"},
	{"freq", 'F', required_argument,
	 "  -F, --freq HZ           samples per second per CPU or thread (default 999)\n"},
	{"event", 'e', required_argument,
	 "  -e, --event EVENT       cpu-clock (default), cycles, ... (see 'hotstack record -e list')\n"},
	{"call-graph", 'g', required_argument,
	 "  -g, --call-graph MODE   auto (default), dwarf[,BYTES], fp, lbr, none (as record)\n"},
	{"no-kernel", HS_REC_NO_KERNEL, no_argument, "      --no-kernel         user stacks only\n"},
	{"delay", 'd', required_argument,
	 "  -d, --delay SECONDS     refresh every SECONDS (default 1; fractions from 0.1; 500ms)\n"},
	{"window", WINDOW, required_argument, "      --window SECONDS    show the last SECONDS (default 5)\n"},
	{"stdio", STDIO, no_argument,
	 "      --stdio             a text report to standard output at each refresh (the default when\n"
	 "                          it is not a terminal)\n"},
	{"sort", 's', required_argument,
	 "  -s, --sort COLUMN       rows by self (overhead, the default), total (children), pid, comm,\n"
	 "                          sym (symbol) or dso (module)\n"},
	{"comm", COMM, required_argument,
	 "      --comm NAME[,NAME]  only the rows of threads of these names (swapper: idle CPUs)\n"},
	{"serve", SERVE, required_argument,
	 "      --serve [ADDR:]PORT also serve the profiles over HTTP (as record --serve; docs/live.md)\n"},
	{"quiet", 'q', no_argument, "  -q, --quiet             no warnings\n"},
	{"verbose", 'v', no_argument, "  -v, --verbose           more detail\n"},
	{"help", 'h', no_argument, NULL},
	{0},
};

void hs_top_args_init(struct hs_top_args *a)
{
	*a = (struct hs_top_args){.refresh = 1, .window = 5};
	hs_record_args_init(&a->ra);
}

/* -d and --window: seconds, fractions or a unit allowed, from lo to an hour. */
static int seconds(const char *arg, const char *what, double lo, double *ret, struct hs_error *err)
{
	double v;

	if (hs_duration_parse(arg, 1, &v) || v < lo || v > 3600)
		return hs_error_set(err, -EINVAL, "invalid %s '%s' (seconds, or with a unit: 500ms, 2s, 1m; from %g s to 1 h)",
				    what, arg, lo);
	*ret = v;
	return 1;
}

int hs_top_args_option(struct hs_top_args *a, int key, char *arg, char **argv, int *optind, struct hs_error *err)
{
	const char *w;

	switch (key) {
	case 'd':
		return seconds(arg, "refresh interval", 0.1, &a->refresh, err);
	case WINDOW:
		return seconds(arg, "window", 0.1, &a->window, err);
	case STDIO:
		a->stdio = true;
		return 1;
	case 's':
		if (hs_top_sort_parse(arg, &a->sort))
			return hs_error_set(err, -EINVAL, "invalid --sort '%s' (self, total, pid, comm, sym, dso)", arg);
		return 1;
	case COMM:
		a->comm = arg;
		return 1;
	case SERVE:
		if ((w = hs_serve_check(arg)))
			return hs_error_set(err, -EINVAL, "invalid --serve '%s': %s", arg, w);
		a->serve = arg;
		return 1;
	}
	return hs_record_args_option(&a->ra, key, arg, argv, optind, err);
}

const char *hs_top_args_check(const struct hs_top_args *a, char *buf, size_t size)
{
	if (a->window >= a->refresh && a->window / a->refresh <= 1000)
		return NULL;
	snprintf(buf, size, "invalid --window %g with -d %g (from one refresh to 1000 of them)", a->window, a->refresh);
	return buf;
}
