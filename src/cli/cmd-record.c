/* hotstack record: sample stacks of a command, of running processes, or of the whole system,
 * and write the profile in every format asked for. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "live/opts.h"
#include "profile/off-cpu.h"
#include "runtime/runtime.h"
#include "serve/serve.h"
#include "util/outfile.h"
#include "record-print.h"
#include "view-opts.h"

static const char record_usage[] =
	"usage: hotstack record [options] [-- command [args...]]\n"
	"Samples call stacks and writes a profile (default hotstack.pb.gz).\n"
	"\n";

static const char default_output[] = "hotstack.pb.gz";

/* What record's hooks need (struct hs_live_hooks) */
struct record_ctx {
	bool tty;
	const struct cli_outputs *outs;
	struct hs_output_opts *oo;
	int value_bad; /* -1: --value not looked for yet; else whether the profile lacks it (said) */
	bool keep_old; /* the default output, kept as .old at the first write (perf.data.old) */
};

static void on_progress(void *ctx, uint64_t samples, const struct hs_record_progress *p)
{
	if (!((struct record_ctx *)ctx)->tty || cli_quiet)
		return;
	fprintf(stderr, "\rhotstack: recording %.0f s, %llu samples, %.1f MB of events%s", p->elapsed,
		(unsigned long long)samples, (double)p->bytes / 1e6, p->lost_records ? " (records lost)" : "");
	fflush(stderr);
}

static void on_say(void *ctx, bool detail, const char *msg)
{
	if (!detail)
		cli_warn("%s", msg);
	else if (cli_verbose)
		fprintf(stderr, "hotstack: %s\n", msg);
}

/* Writes p to names, the files of -o (or of this period); a checkpoint (quiet) says nothing
 * but a failure. A --value p does not have is said once, and the default written. */
static int write_profile(void *ctx, struct hs_profile *p, const char *const *names, bool quiet)
{
	struct record_ctx *rc = ctx;
	struct cli_outputs outs = *rc->outs;
	int was = cli_quiet, failed;

	memcpy(outs.path, names, (size_t)outs.n * sizeof(*names));
	outs.say = !quiet;
	if (rc->keep_old)
		hs_outfile_keep_old(names[0]);
	rc->keep_old = false;
	if (rc->value_bad < 0)
		rc->value_bad = cli_resolve_value(p, rc->oo) != 0;
	cli_quiet = was || quiet;
	failed = cli_outputs_write(&outs, NULL, p, rc->oo);
	cli_quiet = was;
	return failed;
}

/* What record --user NAME needs, kept for the whole run (the child reads it after fork). */
static struct hs_run_as run_as;

/* Returns 0, or the exit status after saying what is wrong. */
static int run_as_user(const char *user, struct hs_record_opts *ro)
{
	int rc = hs_run_as_init(&run_as, user);

	if (rc == -ENOENT) {
		cli_error("no such user: %s", user);
		return 2;
	}
	if (rc) {
		cli_error("--user needs root to run the command as '%s'", run_as.name);
		return 1;
	}
	hs_run_as_apply(&run_as, ro);
	return 0;
}

/* Reads the options into a, outs, oo and *serve; returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct hs_live_args *a, struct cli_outputs *outs, struct hs_output_opts *oo,
		 const char **serve)
{
	struct option longopts[96];
	struct hs_error err;
	int c, rc;

	hs_options_getopt(hs_live_record_options, longopts,
			  hs_output_options_getopt(longopts, 0, HS_ARRAY_SIZE(longopts), false), HS_ARRAY_SIZE(longopts));
	/* '+': options end at the command's name, as in "record -F 99 ls -l" */
	while ((c = getopt_long(argc, argv, "+:p:t:aC:d:F:c:e:g::o:m:s:qvh", longopts, NULL)) != -1) {
		err = (struct hs_error){0};
		switch (c) {
		case 'o':
			if (cli_outputs_add(outs, optarg))
				return 2;
			break;
		case HS_OUTPUT_FORMAT_KEY:
			outs->format = optarg;
			break;
		case HS_LIVE_SERVE:
			if (cli_serve_arg(optarg, serve))
				return 2;
			break;
		case 'q':
		case 'v':
			*(c == 'q' ? &cli_quiet : &cli_verbose) = 1;
			break;
		case 'h':
			fputs(record_usage, stdout);
			cli_options_help(stdout, hs_live_record_options);
			cli_output_opts_help(stdout, false);
			return 0;
		default:
			if ((rc = hs_live_args_option(a, c, optarg, argv, &optind, &err)) > 0)
				break;
			if (rc < 0) {
				cli_error("%s", err.detail);
				return 2;
			}
			rc = c == '?' || c == ':' ? 0 : cli_output_option(c, optarg, oo);
			if (rc == 1)
				break;
			if (rc == 0)
				cli_option_error(argv[0], c, argv, longopts);
			return 2;
		}
	}
	return -1;
}

int cmd_record(int argc, char **argv)
{
	struct hs_live_args a = {.lo = {.argc = argc, .argv = argv}};
	struct hs_record_opts *ro = &a.ra.ro;
	struct hs_output_opts oo = {0};
	struct cli_outputs outs = {0};
	struct record_ctx ctx = {.outs = &outs, .oo = &oo, .value_bad = -1};
	struct hs_live lv;
	struct hs_periodic_opts *po = &a.lo.periodic;
	struct hs_live_hooks hooks = {write_profile, on_progress, on_say, &ctx};
	bool failed;
	struct hs_record rec;
	struct hs_error err;
	struct hs_builder_opts bo = {0};
	struct hs_profile *p;
	struct hs_builder_summary sum;
	const char *w, *serve = NULL;
	struct hs_serve *server = NULL;
	struct hs_view *view = NULL;
	bool view_ended = false;
	char msg[256];
	int status = 0, rc;

	hs_record_args_init(&a.ra);
	if ((status = parse(argc, argv, &a, &outs, &oo, &serve)) >= 0)
		goto out;
	if (!strcmp(a.ra.event, "list") || !strncmp(a.ra.event, "list:", 5)) {
		status = cli_record_list_events(a.ra.event);
		goto out;
	}
	if ((status = cli_sampling_settle(&a.ra)) >= 0)
		goto out;
	status = 0;
	/* a view of blocked time needs it recorded: --wall (or --value off-cpu|wall) asks for it */
	if (cli_value_wanted() && hs_off_cpu_value(cli_value_wanted()))
		ro->off_cpu = true;
	if ((w = hs_callgraph_off_cpu_conflict(&a.ra.cgo, ro->event, ro->off_cpu, a.off_cpu_min_given, msg, sizeof(msg)))) {
		cli_error("%s", w);
		goto usage_error;
	}
	if (a.ra.stack_size && hs_callgraph_stack_bytes(a.ra.stack_size, &ro->stack_bytes)) {
		cli_stack_size_error(a.ra.stack_size);
		goto usage_error;
	}
	if (a.syms.symfs && cli_symfs_check(a.syms.symfs))
		goto usage_error;
	if (optind < argc)
		ro->argv = argv + optind;
	if ((w = hs_record_targets_settle(ro))) /* -p/-t win over -a/-C, as in perf */
		cli_warn("%s", w);
	if (!ro->argv && !ro->npids && !ro->ntids && !ro->all_cpus) {
		cli_error("nothing to record: give a command after --, -p PID, or -a");
		goto usage_error;
	}
	if (a.window && !serve) {
		cli_error("--window goes with --serve: hotstack record --serve PORT --window SECONDS");
		goto usage_error;
	}
	if (a.ra.user) {
		if (!ro->argv) {
			cli_error("--user goes with a command: hotstack record --user NAME -- command");
			goto usage_error;
		}
		if ((status = run_as_user(a.ra.user, ro)))
			goto out;
	}
	if (!outs.n && !a.lo.push.url)
		cli_outputs_add(&outs, default_output);
	if (cli_outputs_check(&outs) || cli_outputs_refuse(&outs, NULL, argv[0]))
		goto usage_error;
	if ((w = hs_live_opts_settle(&a.lo, (const char *const *)outs.path, (size_t)outs.n))) {
		cli_error("%s", w);
		goto usage_error;
	}
	/* find out now, not after the recording, that an output cannot be written */
	for (int i = 0; i < outs.n; i++) {
		rc = hs_output_probe(outs.path[i]);
		if (rc) {
			cli_error("cannot write '%s': %s", outs.path[i], strerror(-rc));
			status = 1;
			goto out;
		}
	}

	hs_record_block_signals(po->by_signal);
	ro->switch_signal = po->by_signal;
	/* after the signals are blocked, which the server's threads inherit, and before the
	 * command starts: an address that cannot be had stops the recording before it begins */
	if (serve) {
		struct hs_serve_opts sopts = {.listen = serve, .oo = &oo};

		err = (struct hs_error){0};
		sopts.view = view = hs_view_new(&(struct hs_view_opts){.step_ns = 1000000000ULL, .window = a.window});
		if (hs_serve_start(&server, &sopts, &err)) {
			cli_error("--serve: %s", err.detail);
			status = 1;
			goto served;
		}
		/* even with -q: with port 0 it is the only way to find the server */
		fprintf(stderr, "hotstack: serving on http://%s/\n", hs_serve_address(server));
	}
	ro->rt_names = bo.rt_names = hs_rt_names_new(HS_RT_ALL & ~a.rt.off);
	bo.python_internals = a.rt.internals & HS_RT_BIT(HS_RT_PYTHON);
	bo.js_internals = a.rt.internals & HS_RT_BIT(HS_RT_V8);
	bo.internals = a.rt.internals & (HS_RT_BIT(HS_RT_RUBY) | HS_RT_BIT(HS_RT_PHP) | HS_RT_BIT(HS_RT_PERL));
	rc = hs_record_open(&rec, ro, &err);
	if (rc) {
		status = cli_record_error(&err, ro);
		goto closed;
	}
	if (rec.user_only)
		cli_warn("no permission for kernel samples (kernel.perf_event_paranoid > 1): recording user space "
			 "only; kernel stacks take root, CAP_PERFMON or kernel.perf_event_paranoid=1");
	ctx.tty = isatty(STDERR_FILENO);
	/* samples are aggregated unless a view needs each one with its time */
	bo.keep_time = a.keep_time || oo.flamechart ||
		       hs_outputs_times(outs.path, (size_t)outs.n, outs.format) == HS_TIMES_ORDER;
	bo.no_demangle = a.syms.no_demangle;
	bo.no_inline = a.syms.no_inline;
	bo.symfs = a.syms.symfs;
	hs_live_builder_opts(&rec, &a.ra.cgo, &bo);
	a.lo.outputs = (const char *const *)outs.path;
	a.lo.noutputs = (size_t)outs.n;
	a.lo.jvm_perfmap = !a.no_jvm_perfmap;
	a.lo.off_cpu_min = a.off_cpu_min;
	/* no -o: the last one kept as .old, as perf.data.old */
	ctx.keep_old = outs.path[0] == default_output && !hs_periodic_opts_switching(po);
	if (hs_live_init(&lv, &rec, &bo, &a.lo, &hooks, &err)) {
		cli_error("--push: %s", err.detail);
		status = 2;
		goto closed;
	}
	lv.view = view;
	rc = hs_live_run(&lv, &err);
	if (ctx.tty && !cli_quiet)
		fputs("\r\033[K", stderr);
	if (rc) {
		status = cli_record_error(&err, ro);
		goto released;
	}
	status = hs_record_command_status(&rec);
	p = hs_live_end(&lv, &failed); /* ends the view: its readers are answered */
	view_ended = true;
	hs_builder_summary(&lv.b, &sum);
	for (size_t i = 0; i < sum.jit_nwarnings; i++)
		cli_warn("%s", sum.jit_warnings[i]);
	cli_record_summary(p, lv.pe.periods, &sum, &rec, bo.lbr_repair, ro->off_cpu);
	if (a.lo.push.url)
		cli_record_push_summary(&lv);
	if (!hs_periodic_switching(&lv.pe)) {
		failed |= write_profile(&ctx, p, (const char *const *)outs.path, false) != 0;
		if (!failed)
			cli_outputs_next(&outs);
	}
	if (failed || ctx.value_bad > 0)
		status = status ? status : 1;
	hs_profile_free(p);
released:
	hs_live_release(&lv);
closed:
	hs_record_close(&rec);
	hs_rt_names_free(bo.rt_names);
served:
	/* the readers of a recording that failed or never began are answered now, for
	 * hs_serve_stop() waits for every reader */
	if (view && !view_ended)
		hs_view_end(view, NULL);
	hs_serve_stop(server);
	hs_view_free(view);
	goto out;

usage_error:
	status = 2;
out:
	hs_record_args_release(&a.ra);
	return status;
}
