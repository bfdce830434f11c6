/* hotstack top: where the CPU time goes now, perf top's way: the functions of the last seconds
 * on a terminal screen (src/top), or as a text report at each refresh (--stdio), and over HTTP
 * with --serve. A live recording with no output files. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "record-print.h"
#include "top/top.h"

static const char top_usage[] =
	"usage: hotstack top [options] [-- command [args...]]\n"
	"Shows the functions that take the CPU time of the last seconds, refreshed live (system-wide\n"
	"unless told otherwise). Keys: arrows, PgUp/PgDn, Home/End move; Enter shows the callers and\n"
	"callees of a function; s (S) sorts by the next (previous) column; k kernel frames; / filter by\n"
	"name; t (c) only the selected row's process (thread name), again all; p pause; z zero the\n"
	"counts; q quit. A row is a function in the threads of one name of one process (PID:comm).\n"
	"\n"
	"  -a, --all-cpus          system-wide, every online CPU (the default)\n"
	"  -p, --pid PID[,PID...]  these processes (all their threads, and new ones)\n"
	"  -t, --tid TID[,TID...]  these threads only\n"
	"  -C, --cpu CPUS          system-wide on these CPUs only (0-1,3)\n"
	"  -F, --freq HZ           samples per second per CPU or thread (default 999)\n"
	"  -e, --event EVENT       cpu-clock (default), cycles, ... (see 'hotstack record -e list')\n"
	"  -g, --call-graph MODE   auto (default), dwarf[,BYTES], fp, lbr, none (as record)\n"
	"      --no-kernel         user stacks only\n"
	"  -d, --delay SECONDS     refresh every SECONDS (default 1; fractions from 0.1)\n"
	"      --window SECONDS    show the last SECONDS (default 5)\n"
	"      --stdio             a text report to standard output at each refresh (the default when\n"
	"                          it is not a terminal)\n"
	"  -s, --sort COLUMN       rows by self (overhead, the default), total (children), pid, comm,\n"
	"                          sym (symbol) or dso (module)\n"
	"      --comm NAME[,NAME]  only the rows of threads of these names (swapper: idle CPUs)\n"
	"      --serve [ADDR:]PORT also serve the profiles over HTTP (as record --serve; docs/live.md)\n"
	"  -q, --quiet             no warnings\n"
	"  -v, --verbose           more detail\n";

enum {
	OPT_WINDOW = OPT_CMD_BASE,
	OPT_SERVE,
	OPT_COMM,
};

static int no_kernel, stdio_flag;

struct top_args {
	struct hs_record_opts ro;
	struct cli_sampling sa;
	const char *serve, *comm;
	double refresh, window;
	enum hs_top_sort sort;
};

static void on_say(void *ctx, bool detail, const char *msg)
{
	if (detail)
		cli_detail("%s", msg);
	else
		cli_warn("%s", msg);
}

/* -d and --window: seconds, fractions allowed, from lo to an hour. */
static int parse_seconds(const char *arg, const char *what, double lo, double *ret)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !isfinite(v) || v < lo || v > 3600) {
		cli_error("invalid %s '%s' (seconds, from %g to 3600)", what, arg, lo);
		return -1;
	}
	*ret = v;
	return 0;
}

/* Returns -1 to go on, else the exit status (after --help, or a usage error said). */
static int parse(int argc, char **argv, struct top_args *a)
{
	static const struct option longopts[] = {
		{"all-cpus", no_argument, NULL, 'a'},      {"pid", required_argument, NULL, 'p'},
		{"tid", required_argument, NULL, 't'},     {"cpu", required_argument, NULL, 'C'},
		{"freq", required_argument, NULL, 'F'},    {"event", required_argument, NULL, 'e'},
		{"call-graph", required_argument, NULL, 'g'}, {"no-kernel", no_argument, &no_kernel, 1},
		{"delay", required_argument, NULL, 'd'},   {"window", required_argument, NULL, OPT_WINDOW},
		{"stdio", no_argument, &stdio_flag, 1},    {"serve", required_argument, NULL, OPT_SERVE},
		{"sort", required_argument, NULL, 's'},    {"comm", required_argument, NULL, OPT_COMM},
		{"quiet", no_argument, NULL, 'q'},         {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},          {0, 0, 0, 0},
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, "+:ap:t:C:F:e:g::d:s:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
		case OPT_WINDOW:
			if (parse_seconds(optarg, c == 'd' ? "refresh interval" : "window", 0.1,
					  c == 'd' ? &a->refresh : &a->window))
				return 2;
			break;
		case OPT_SERVE:
			if (cli_serve_arg(optarg, &a->serve))
				return 2;
			break;
		case 's':
			if (hs_top_sort_parse(optarg, &a->sort)) {
				cli_error("invalid --sort '%s' (self, total, pid, comm, sym, dso)", optarg);
				return 2;
			}
			break;
		case OPT_COMM:
			a->comm = optarg;
			break;
		case 'q':
			cli_quiet = 1;
			break;
		case 'v':
			cli_verbose = 1;
			break;
		case 0:
			break;
		case 'h':
			fputs(top_usage, stdout);
			return 0;
		default:
			if ((rc = cli_sampling_option(c, optarg, argv, &a->sa, &a->ro)) > 0)
				break;
			if (rc == 0)
				cli_option_error(argv[0], c, argv, longopts);
			return 2;
		}
	}
	if (optind < argc)
		a->ro.argv = argv + optind;
	return -1;
}

/* Settles what the options give the recording; returns -1 to go on, else the exit status. */
static int settle(struct top_args *a)
{
	const char *w;
	int rc;

	if (a->window < a->refresh || a->window / a->refresh > 1000) {
		cli_error("invalid --window %g with -d %g (from one refresh to 1000 of them)", a->window, a->refresh);
		return 2;
	}
	if ((rc = cli_sampling_settle(&a->sa, &a->ro)) >= 0)
		return rc;
	a->ro.kernel = !no_kernel;
	if (!a->ro.argv && !a->ro.npids && !a->ro.ntids)
		a->ro.all_cpus = true; /* perf top's default */
	if ((w = hs_record_targets_settle(&a->ro)))
		cli_warn("%s", w);
	return -1;
}

/* Where it serves: said even with -q (with port 0, the only way to find the server) */
static void on_info(void *ctx, const char *msg)
{
	fprintf(stderr, "hotstack: %s\n", msg);
}

static int run(struct top_args *a)
{
	struct hs_output_opts oo = {.title = "hotstack top"};
	struct hs_top_run_opts o = {
		.ro = &a->ro,
		.cgo = &a->sa.cgo,
		.view = {(uint64_t)(a->refresh * 1e9), (unsigned)ceil(a->window / a->refresh - 1e-9)},
		/* a screen needs keys too: with standard input not a terminal, the reports */
		.top = {.stdio = stdio_flag || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO), .out = stdout,
			.no_kernel = no_kernel, .sort = a->sort, .comm = a->comm},
		.serve = a->serve,
		.oo = &oo,
		.say = on_say,
		.info = on_info,
	};
	struct hs_error err = {0};
	int status;

	switch (hs_top_run(&o, &status, &err)) {
	case HS_TOP_OK:
		return status;
	case HS_TOP_RECORDING:
		return cli_record_error(&err, &a->ro);
	case HS_TOP_TERMINAL:
		cli_error("cannot use the terminal (TERM=%s): use --stdio", getenv("TERM") ?: "");
		return 1;
	case HS_TOP_SERVING:
		cli_error("--serve: %s", err.detail);
		return 1;
	default:
		cli_error("%s", err.detail);
		return 1;
	}
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = {.ro.freq = 999, .sa = {.event = "cpu-clock", .cg = "auto"}, .refresh = 1, .window = 5};
	int status = parse(argc, argv, &a);

	if (status < 0)
		status = settle(&a);
	if (status < 0)
		status = run(&a);
	cli_sampling_release(&a.sa);
	return status;
}
