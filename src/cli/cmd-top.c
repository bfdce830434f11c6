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
#include "top/opts.h"
#include "top/top.h"

static const char top_usage[] =
	"usage: hotstack top [options] [-- command [args...]]\n"
	"Shows the functions that take the CPU time of the last seconds, refreshed live (system-wide\n"
	"unless told otherwise). Keys: arrows, PgUp/PgDn, Home/End move; Enter shows the callers and\n"
	"callees of a function; s (S) sorts by the next (previous) column; k kernel frames; / filter by\n"
	"name; t (c) only the selected row's process (thread name), again all; p pause; z zero the\n"
	"counts; q quit. A row is a function in the threads of one name of one process (PID:comm).\n"
	"\n";

static void on_say(void *ctx, bool detail, const char *msg)
{
	if (detail)
		cli_detail("%s", msg);
	else
		cli_warn("%s", msg);
}

/* Returns -1 to go on, else the exit status (after --help, or a usage error said). */
static int parse(int argc, char **argv, struct hs_top_args *a)
{
	struct option longopts[32];
	struct hs_error err = {0};
	char msg[128];
	const char *w;
	int c, rc;

	hs_options_getopt(hs_top_options, longopts, 0, HS_ARRAY_SIZE(longopts));
	while ((c = getopt_long(argc, argv, "+:ap:t:C:F:e:g::d:s:qvh", longopts, NULL)) != -1) {
		if (c == 'q' || c == 'v') {
			*(c == 'q' ? &cli_quiet : &cli_verbose) = 1;
		} else if (c == 'h') {
			fputs(top_usage, stdout);
			cli_options_help(stdout, hs_top_options);
			return 0;
		} else if ((rc = hs_top_args_option(a, c, optarg, argv, &optind, &err)) <= 0) {
			if (rc == 0)
				return cli_option_error(argv[0], c, argv, longopts);
			cli_error("%s", err.detail);
			return 2;
		}
	}
	if (optind < argc)
		a->ra.ro.argv = argv + optind;
	if ((w = hs_top_args_check(a, msg, sizeof(msg)))) {
		cli_error("%s", w);
		return 2;
	}
	if ((rc = cli_sampling_settle(&a->ra)) >= 0)
		return rc;
	if (!a->ra.ro.argv && !a->ra.ro.npids && !a->ra.ro.ntids)
		a->ra.ro.all_cpus = true; /* perf top's default */
	if ((w = hs_record_targets_settle(&a->ra.ro)))
		cli_warn("%s", w);
	return -1;
}

/* Where it serves: said even with -q (with port 0, the only way to find the server) */
static void on_info(void *ctx, const char *msg)
{
	fprintf(stderr, "hotstack: %s\n", msg);
}

static int run(struct hs_top_args *a)
{
	struct hs_output_opts oo = {.title = "hotstack top"};
	struct hs_top_run_opts o = {
		.ro = &a->ra.ro,
		.cgo = &a->ra.cgo,
		.view = {(uint64_t)(a->refresh * 1e9), (unsigned)ceil(a->window / a->refresh - 1e-9)},
		/* a screen needs keys too: with standard input not a terminal, the reports */
		.top = {.stdio = a->stdio || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO), .out = stdout,
			.no_kernel = !a->ra.ro.kernel, .sort = a->sort, .comm = a->comm},
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
		return cli_record_error(&err, &a->ra.ro);
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
	struct hs_top_args a;
	int status;

	hs_top_args_init(&a);
	status = parse(argc, argv, &a);
	if (status < 0)
		status = run(&a);
	hs_record_args_release(&a.ra);
	return status;
}
