/* hotstack top: where the CPU time goes now, perf top's way: the functions of the last seconds
 * on a terminal screen (src/top), or as a text report at each refresh (--stdio), and over HTTP
 * with --serve. A live recording with no output files. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "python/names.h"
#include "record-print.h"
#include "serve/serve.h"
#include "top/top.h"

static const char top_usage[] =
	"usage: hotstack top [options] [-- command [args...]]\n"
	"Shows the functions that take the CPU time of the last seconds, refreshed live (system-wide\n"
	"unless told otherwise). Keys: arrows, PgUp/PgDn, Home/End move; Enter shows the callers and\n"
	"callees of a function; k kernel frames; s sort by self or total; / filter by name; p pause;\n"
	"z zero the counts; q quit.\n"
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
	"      --serve [ADDR:]PORT also serve the profiles over HTTP (as record --serve; docs/live.md)\n"
	"  -q, --quiet             no warnings\n"
	"  -v, --verbose           more detail\n";

enum {
	OPT_WINDOW = OPT_CMD_BASE,
	OPT_SERVE,
};

static int no_kernel, stdio_flag;

struct top_args {
	struct hs_record_opts ro;
	struct hs_record_pids pids, tids;
	const char *event, *cg, *serve;
	double refresh, window;
	struct hs_event_desc tracepoint;
	struct hs_callgraph_opts cgo;
};

static void on_say(void *ctx, bool detail, const char *msg)
{
	if ((detail && !cli_verbose) || (cli_quiet && !detail) || hs_top_say(ctx, msg))
		return;
	if (detail)
		fprintf(stderr, "hotstack: %s\n", msg);
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
		{"quiet", no_argument, NULL, 'q'},         {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},          {0, 0, 0, 0},
	};
	unsigned long v;
	const char *w;
	int c;

	while ((c = getopt_long(argc, argv, "+:ap:t:C:F:e:g::d:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
		case 'C':
			a->ro.cpu_list = c == 'C' ? optarg : a->ro.cpu_list;
			a->ro.all_cpus = true;
			break;
		case 'p':
		case 't':
			if (hs_record_pids_add(c == 'p' ? &a->pids : &a->tids, optarg)) {
				cli_error("invalid %s id list '%s'", c == 'p' ? "process" : "thread", optarg);
				return 2;
			}
			break;
		case 'F':
			if (cli_parse_ulong(optarg, "frequency", 1, 100000, &v))
				return 2;
			a->ro.freq = (uint32_t)v;
			break;
		case 'e':
			a->event = optarg;
			break;
		case 'g': /* perf's -g takes no value: alone, it is the default */
			a->cg = hs_callgraph_getopt(argv, &optind, optarg) ?: a->cg;
			break;
		case 'd':
		case OPT_WINDOW:
			if (parse_seconds(optarg, c == 'd' ? "refresh interval" : "window", 0.1,
					  c == 'd' ? &a->refresh : &a->window))
				return 2;
			break;
		case OPT_SERVE:
			if ((w = hs_serve_check(optarg))) {
				cli_error("invalid --serve '%s': %s", optarg, w);
				return 2;
			}
			a->serve = optarg;
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
			return cli_option_error(argv[0], c, argv, longopts);
		}
	}
	if (optind < argc)
		a->ro.argv = argv + optind;
	return -1;
}

/* Settles what the options give the recording; returns -1 to go on, else the exit status. */
static int settle(struct top_args *a)
{
	struct hs_error err;
	const char *w;
	int rc;

	if (a->window < a->refresh || a->window / a->refresh > 1000) {
		cli_error("invalid --window %g with -d %g (from one refresh to 1000 of them)", a->window, a->refresh);
		return 2;
	}
	rc = hs_event_lookup(a->event, &a->tracepoint, &a->ro.event, &err);
	if (rc == -ESRCH) {
		cli_error("unknown event '%s' (see 'hotstack record -e list')", a->event);
		return 2;
	} else if (rc) {
		cli_tracepoint_error(&err, a->event);
		return rc == -EINVAL || rc == -ENOENT ? 2 : 1;
	}
	if (hs_callgraph_parse(a->cg, &a->cgo)) {
		cli_error("unknown call-graph mode '%s' (auto, dwarf[,BYTES], fp, lbr, none)", a->cg);
		return 2;
	}
	a->ro.callgraph = a->cgo.callgraph;
	a->ro.lbr_repair = a->cgo.lbr_repair;
	a->ro.stack_bytes = a->cgo.stack_bytes;
	a->ro.kernel = !no_kernel;
	a->ro.pids = a->pids.v;
	a->ro.npids = a->pids.n;
	a->ro.tids = a->tids.v;
	a->ro.ntids = a->tids.n;
	if (!a->ro.argv && !a->ro.npids && !a->ro.ntids)
		a->ro.all_cpus = true; /* perf top's default */
	if ((w = hs_record_targets_settle(&a->ro)))
		cli_warn("%s", w);
	return -1;
}

/* Serves lv's view over HTTP as asked; 0, or the exit status after saying why not. */
static int serve(struct top_args *a, struct hs_view *view, const struct hs_output_opts *oo, struct hs_serve **ret)
{
	struct hs_serve_opts so = {a->serve, view, oo, (unsigned)ceil(a->refresh)};
	struct hs_error err;

	if (!a->serve)
		return 0;
	if (hs_serve_start(ret, &so, &err)) {
		cli_error("cannot serve on %s: %s", a->serve, err.detail);
		return 1;
	}
	cli_info("serving on http://%s/", hs_serve_address(*ret));
	return 0;
}

/* Takes the terminal (or stdout with --stdio) and records until q, a signal, or the command's
 * end; 0, or the exit status after saying why not. */
static int show(struct top_args *a, struct hs_live *lv, struct hs_top *t, const struct hs_top_config *tc,
		struct hs_serve *srv)
{
	struct hs_error err;
	char msg[256];
	int rc;

	if (hs_top_start(t, lv, tc)) {
		cli_error("cannot use the terminal (TERM=%s): use --stdio", getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	if (srv) {
		snprintf(msg, sizeof(msg), "serving on http://%s/", hs_serve_address(srv));
		hs_top_say(t, msg);
	}
	rc = hs_live_run(lv, &err);
	hs_top_end(t); /* the terminal as it was, before anything is said */
	if (rc)
		return cli_record_error(&err, &a->ro);
	if (t->write_error) {
		cli_error("cannot write the report: %s", strerror(t->write_error));
		return 1;
	}
	return 0;
}

static int run(struct top_args *a, int argc, char **argv)
{
	struct hs_live lv;
	struct hs_live_opts lo = {.argc = argc, .argv = argv};
	struct hs_top t = {0};
	struct hs_live_hooks hooks = {NULL, NULL, on_say, &t, hs_top_tick};
	struct hs_top_config tc = {.stdio = stdio_flag || !isatty(STDOUT_FILENO), .out = stdout};
	struct hs_output_opts oo = {.title = "hotstack top"};
	struct hs_view_opts vo = {(uint64_t)(a->refresh * 1e9), (unsigned)ceil(a->window / a->refresh - 1e-9)};
	struct hs_builder_opts bo = {0};
	struct hs_serve *srv = NULL;
	struct hs_record rec;
	struct hs_error err;
	bool failed;
	int status;

	hs_record_block_signals(false);
	a->ro.py_names = bo.py_names = hs_py_names_new();
	if (hs_record_open(&rec, &a->ro, &err)) {
		status = cli_record_error(&err, &a->ro);
		goto closed;
	}
	if (rec.user_only)
		cli_warn("no permission for kernel samples (kernel.perf_event_paranoid > 1): user space only");
	tc.no_kernel = no_kernel || rec.user_only;
	hs_live_builder_opts(&rec, &a->cgo, &bo);
	if (hs_live_init(&lv, &rec, &bo, &lo, &hooks, &err)) {
		cli_error("%s", err.detail);
		status = 1;
		goto closed;
	}
	lv.view = hs_view_new(&vo);
	status = serve(a, lv.view, &oo, &srv);
	if (!status)
		status = show(a, &lv, &t, &tc, srv);
	/* the view ended (its waiting readers answered) before the server stops */
	hs_profile_free(hs_live_end(&lv, &failed));
	hs_serve_stop(srv);
	hs_view_free(lv.view);
	hs_live_release(&lv);
closed:
	hs_record_close(&rec);
	hs_py_names_free(bo.py_names);
	return status;
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = {.ro.freq = 999, .event = "cpu-clock", .cg = "auto", .refresh = 1, .window = 5};
	int status = parse(argc, argv, &a);

	if (status < 0)
		status = settle(&a);
	if (status < 0)
		status = run(&a, argc, argv);
	hs_vec_free(&a.pids);
	hs_vec_free(&a.tids);
	return status;
}
