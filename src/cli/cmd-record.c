/* hotstack record: sample stacks of a command, of running processes, or of the whole system,
 * and write the profile in every format asked for. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "live/live.h"
#include "profile/off-cpu.h"
#include "runtime/runtime.h"
#include "serve/serve.h"
#include "util/outfile.h"
#include "record-print.h"
#include "view-opts.h"

static const char record_usage[] =
	"usage: hotstack record [options] [-- command [args...]]\n"
	"Samples call stacks and writes a profile (default hotstack.pb.gz).\n"
	"\n"
	"  -p, --pid PID[,PID...]  attach to running processes (all their threads, and new ones)\n"
	"  -t, --tid TID[,TID...]  attach to these threads only (and what they start)\n"
	"  -a, --all-cpus          system-wide, every online CPU\n"
	"  -C, --cpu CPUS          system-wide on these CPUs only (0-1,3)\n"
	"  -d, --duration TIME     stop after this long: 10 (seconds), 500ms, 2m (default: when the\n"
	"                          command exits, or Ctrl-C)\n"
	"  -F, --freq HZ           samples per second per CPU or thread (default 999)\n"
	"  -c, --count N           sample every N events instead of at a frequency\n"
	"  -e, --event EVENT       cpu-clock (default), task-clock, page-faults, context-switches,\n"
	"                          cycles, instructions, ..., or a tracepoint CATEGORY:NAME\n"
	"                          (sched:sched_wakeup); 'hotstack record -e list'\n"
	"      --off-cpu           also the time threads spend blocked, with the stack they blocked\n"
	"                          in (value off-cpu; on + off as value wall: views take --wall;\n"
	"                          --wall here records with --off-cpu and writes the wall view)\n"
	"      --off-cpu-min TIME  leave out blocked periods shorter than TIME (500us, 2ms, 1s;\n"
	"                          a bare number is milliseconds)\n"
	"  -g, --call-graph MODE   auto (the default, and -g alone): DWARF unwinding of a copy of the\n"
	"                          user stack, with frame pointers where no CFI covers the code;\n"
	"                          dwarf[,BYTES]: CFI only; fp: frame pointers walked by the kernel;\n"
	"                          lbr: the CPU's last-branch records (Intel, hardware events); none\n"
	"      --stack-size BYTES  user stack copied per sample for auto/dwarf (default 65528)\n"
	"      --no-kernel         user stacks only\n"
	"      --no-demangle       C++ and Rust symbols as they are in the symbol table\n"
	"      --no-inline         no DWARF debug information: no inline frames, no source lines\n"
	"      --symfs DIR         look the sampled files up under DIR first (DIR/PATH)\n"
	"  -m, --mmap-pages N      ring buffer data pages per CPU, a power of two (default: room for 256\n"
	"                          samples: 4096 pages, 16 MiB, with auto/dwarf stack copies; else 128)\n"
	"      --max-stack N       longest chain to record (default: the kernel's maximum)\n"
	"      --switch-output[=W] a profile per period, each file's name with its start (UTC) before\n"
	"                          its extension (-o p.pb.gz: p.20261123191023.pb.gz); W: signal\n"
	"                          (the default: on SIGUSR2) or a period: 10s, 5m, 1h, 1d\n"
	"      --switch-max-files N  keep each output's newest N period files\n"
	"      --push URL          send each period (10s unless --switch-output) to a profile store\n"
	"                          (docs/continuous.md), with -a a series per service; no -o: no\n"
	"                          files. http(s)://: Pyroscope's /ingest; pyroscope+http(s)://: its\n"
	"                          push API; otlp+http(s)://, otlp://HOST:PORT (gRPC): OpenTelemetry\n"
	"      --push-label K=V    a label of the series (repeatable)\n"
	"      --push-relabel OLD=NEW  rename a label the push API or OTLP gets (OLD=: drop it)\n"
	"      --push-spool DIR    each profile kept in DIR until the store took it: a kill loses\n"
	"                          none (bounded; without it, profiles wait in memory only)\n"
	"      --push-series-by W  with -a, what names a process's series: service (the default: its\n"
	"                          systemd unit or container, else its program; a user's own as\n"
	"                          user-UID.NAME) or comm (its command name, which any process sets)\n"
	"      --serve [ADDR:]PORT serve the recording over HTTP while it runs (docs/live.md): a live\n"
	"                          flame graph at /, Go's /debug/pprof/profile?seconds=N, everything\n"
	"                          so far at /profile.pb.gz and /folded; on 127.0.0.1 unless ADDR\n"
	"                          is given (ADDR:PORT, [IPv6]:PORT); port 0: any free one\n"
	"      --window SECONDS    with --serve: the flame graph shows the last SECONDS (default:\n"
	"                          everything so far)\n"
	"      --keep-time         keep every sample with its time (for --time filters, flame charts,\n"
	"                          speedscope's time order; implied by -o X.speedscope.json)\n"
	"      --no-jvm-perfmap    do not ask profiled HotSpot JVMs for their perf maps\n"
	"      --no-python         no Python frames: CPython code shows as the interpreter's frames\n"
	"      --no-java           no Java frames read from the JVM: its code is named by its perf map\n"
	"      --no-js             no JavaScript frames read from V8: its code is [anon] or a perf map's\n"
	"      --python-internals  keep the interpreter's frames between Python frames (docs/python.md)\n"
	"      --js-internals      keep V8's builtins and entry frames between JavaScript frames\n"
	"      --no-ruby, --no-php, --no-perl\n"
	"                          no Ruby (PHP, Perl) frames: their code shows as the interpreter's frames\n"
	"      --ruby-internals, --php-internals, --perl-internals\n"
	"                          keep the interpreter's frames between Ruby (PHP, Perl) frames\n"
	"                          (docs/interpreters.md)\n"
	"      --user NAME         run the command as this user (name or uid; hotstack stays root)\n"
	"  -q, --quiet             no progress or summary\n"
	"  -v, --verbose           more detail\n";

enum {
	OPT_MAX_STACK = OPT_CMD_BASE,
	OPT_STACK_SIZE,
	OPT_OFF_CPU_MIN,
	OPT_USER,
	OPT_SWITCH_OUTPUT,
	OPT_SWITCH_MAX_FILES,
	OPT_PUSH,
	OPT_PUSH_LABEL,
	OPT_PUSH_RELABEL,
	OPT_PUSH_SPOOL,
	OPT_PUSH_SERIES_BY,
	OPT_SERVE,
	OPT_WINDOW,
};

static const char default_output[] = "hotstack.pb.gz";
/* The flags, set by getopt_long itself (the options' flag pointers) */
static int no_kernel, keep_time, no_jvm_perfmap, off_cpu, no_python, no_java, py_internals, no_js, js_internals;
static int no_ruby, no_php, no_perl, ruby_internals, php_internals, perl_internals;

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

int cmd_record(int argc, char **argv)
{
	static const struct option own[] = {
		{"pid", required_argument, NULL, 'p'},
		{"tid", required_argument, NULL, 't'},
		{"cpu", required_argument, NULL, 'C'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"duration", required_argument, NULL, 'd'},
		{"freq", required_argument, NULL, 'F'},
		{"count", required_argument, NULL, 'c'},
		{"event", required_argument, NULL, 'e'},
		{"call-graph", required_argument, NULL, 'g'},
		{"output", required_argument, NULL, 'o'},
		{"no-kernel", no_argument, &no_kernel, 1},
		{"mmap-pages", required_argument, NULL, 'm'},
		{"max-stack", required_argument, NULL, OPT_MAX_STACK},
		{"stack-size", required_argument, NULL, OPT_STACK_SIZE},
		{0, 0, 0, 0},
	};
	/* after the symbol options: the order getopt lists an ambiguous abbreviation's matches in */
	static const struct option own_late[] = {
		{"keep-time", no_argument, &keep_time, 1},
		{"no-jvm-perfmap", no_argument, &no_jvm_perfmap, 1},
		{"no-python", no_argument, &no_python, 1},
		{"no-java", no_argument, &no_java, 1},
		{"python-internals", no_argument, &py_internals, 1},
		{"no-js", no_argument, &no_js, 1},
		{"js-internals", no_argument, &js_internals, 1},
		{"no-ruby", no_argument, &no_ruby, 1},
		{"no-php", no_argument, &no_php, 1},
		{"no-perl", no_argument, &no_perl, 1},
		{"ruby-internals", no_argument, &ruby_internals, 1},
		{"php-internals", no_argument, &php_internals, 1},
		{"perl-internals", no_argument, &perl_internals, 1},
		{"off-cpu", no_argument, &off_cpu, 1},
		{"off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN},
		{"user", required_argument, NULL, OPT_USER},
		{"switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT},
		{"switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES},
		{"push", required_argument, NULL, OPT_PUSH},
		{"push-label", required_argument, NULL, OPT_PUSH_LABEL},
		{"push-relabel", required_argument, NULL, OPT_PUSH_RELABEL},
		{"push-spool", required_argument, NULL, OPT_PUSH_SPOOL},
		{"push-series-by", required_argument, NULL, OPT_PUSH_SERIES_BY},
		{"serve", required_argument, NULL, OPT_SERVE},
		{"window", required_argument, NULL, OPT_WINDOW},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct option longopts[64];
	struct hs_record_opts ro = {0};
	struct hs_output_opts oo = {0};
	struct cli_outputs outs = {0};
	struct cli_sampling sa = {.event = "cpu-clock", .cg = "auto"};
	struct record_ctx ctx = {.outs = &outs, .oo = &oo, .value_bad = -1};
	struct hs_live lv;
	struct hs_live_opts lo = {.argc = argc, .argv = argv};
	struct hs_periodic_opts *po = &lo.periodic;
	struct hs_live_hooks hooks = {write_profile, on_progress, on_say, &ctx};
	bool failed;
	struct hs_record rec;
	struct hs_error err;
	struct hs_builder_opts bo = {0};
	struct hs_profile *p;
	struct hs_builder_summary sum;
	struct cli_symbol_opts so = {0};
	const char *stack_size = NULL, *user = NULL, *w;
	const char *serve = NULL;
	struct hs_serve *server = NULL;
	struct hs_view *view = NULL;
	unsigned window = 0;
	bool view_ended = false;
	bool off_cpu_min_given = false;
	uint64_t off_cpu_min = 0;
	char msg[256];
	unsigned long v;
	double secs;
	size_t n = 0;
	int c, status = 0, rc;

	n = cli_longopts_append(longopts, n, HS_ARRAY_SIZE(longopts), cli_output_longopts);
	n = cli_longopts_append(longopts, n, HS_ARRAY_SIZE(longopts), own);
	n = cli_longopts_append(longopts, n, HS_ARRAY_SIZE(longopts), cli_symbol_longopts);
	n = cli_longopts_append(longopts, n, HS_ARRAY_SIZE(longopts), own_late);
	longopts[n] = (struct option){0, 0, 0, 0};
	ro.freq = 999;
	/* '+': options end at the command's name, as in "record -F 99 ls -l" */
	while ((c = getopt_long(argc, argv, "+:p:t:aC:d:F:c:e:g::o:m:s:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (hs_record_duration_parse(optarg, &ro.duration)) {
				cli_error("invalid duration '%s' (seconds, or with a unit: 500ms, 2s, 5m, 1h)", optarg);
				goto usage_error;
			}
			break;
		case 'c':
			if (cli_parse_ulong(optarg, "count", 1, ~0UL, &v))
				goto usage_error;
			ro.period = v;
			break;
		case 'o':
			if (cli_outputs_add(&outs, optarg))
				goto usage_error;
			break;
		case OPT_FORMAT:
			outs.format = optarg;
			break;
		case 0: /* a flag */
			break;
		case 'm':
			if (hs_record_ring_pages_parse(optarg, &ro.mmap_pages)) {
				cli_error("invalid number of pages '%s' (a power of two from 1 to %lu)", optarg,
					  HS_RECORD_MAX_RING_PAGES);
				goto usage_error;
			}
			break;
		case OPT_STACK_SIZE:
			stack_size = optarg;
			break;
		case OPT_OFF_CPU_MIN:
			if (hs_off_cpu_min_parse(optarg, &off_cpu_min)) {
				cli_error("invalid duration '%s' (a number with ns, us, ms, s, m or h; milliseconds without a unit)", optarg);
				goto usage_error;
			}
			off_cpu_min_given = true;
			break;
		case OPT_USER:
			user = optarg;
			break;
		case OPT_SWITCH_OUTPUT: /* perf's: alone, signal */
			if (hs_switch_output_parse(optarg ? optarg : "signal", po)) {
				cli_error("invalid --switch-output '%s' (signal, or a period: 10s, 5m, 1h, 1d)", optarg);
				goto usage_error;
			}
			break;
		case OPT_SWITCH_MAX_FILES:
			if (cli_parse_ulong(optarg, "number of files", 1, 1000000, &v))
				goto usage_error;
			po->max_files = (unsigned)v;
			break;
		case OPT_PUSH:
		case OPT_PUSH_SPOOL:
			*(c == OPT_PUSH ? &lo.push.url : &lo.push.spool_dir) = optarg;
			break;
		case OPT_PUSH_SERIES_BY:
			if (hs_series_by_parse(optarg, &lo.series_by)) {
				cli_error("invalid --push-series-by '%s' (service or comm)", optarg);
				goto usage_error;
			}
			lo.series_by_given = true;
			break;
		case OPT_SERVE:
			if (cli_serve_arg(optarg, &serve))
				goto usage_error;
			break;
		case OPT_WINDOW:
			if (hs_duration_parse(optarg, 1, &secs) || secs < 1 || secs > HS_VIEW_MAX_SECONDS ||
			    secs != (unsigned)secs) {
				cli_error("invalid window '%s' (whole seconds from 1 to %u: 60, 60s, 5m)", optarg,
					  (unsigned)HS_VIEW_MAX_SECONDS);
				goto usage_error;
			}
			window = (unsigned)secs;
			break;
		case OPT_PUSH_LABEL:
			if (hs_live_push_label(&lo, optarg)) {
				cli_error("invalid --push-label '%s' (KEY=VALUE, at most %zu)", optarg, HS_ARRAY_SIZE(lo.labels));
				goto usage_error;
			}
			break;
		case OPT_PUSH_RELABEL:
			if (hs_live_push_relabel(&lo, optarg)) {
				cli_error("invalid --push-relabel '%s' (OLD=NEW, or OLD= to drop it; at most %zu)", optarg,
					  HS_ARRAY_SIZE(lo.renames));
				goto usage_error;
			}
			break;
		case OPT_MAX_STACK:
			if (cli_parse_ulong(optarg, "stack depth", 1, 65535, &v))
				goto usage_error;
			ro.max_stack = (uint32_t)v;
			break;
		case 'q':
			cli_quiet = 1;
			break;
		case 'v':
			cli_verbose = 1;
			break;
		case 'h':
			fputs(record_usage, stdout);
			cli_output_opts_help(stdout, false);
			status = 0;
			goto out;
		default:
			if ((rc = cli_sampling_option(c, optarg, argv, &sa, &ro)) < 0)
				goto usage_error;
			if (rc || cli_symbol_option(c, optarg, &so))
				break;
			rc = c == '?' || c == ':' ? 0 : cli_output_option(c, optarg, &oo);
			if (rc == 1)
				break;
			if (rc == 0)
				cli_option_error(argv[0], c, argv, longopts);
			goto usage_error;
		}
	}
	ro.kernel = !no_kernel;
	ro.off_cpu = off_cpu;
	if (!strcmp(sa.event, "list") || !strncmp(sa.event, "list:", 5)) {
		status = cli_record_list_events(sa.event);
		goto out;
	}
	if ((status = cli_sampling_settle(&sa, &ro)) >= 0)
		goto out;
	status = 0;
	/* a view of blocked time needs it recorded: --wall (or --value off-cpu|wall) asks for it */
	if (cli_value_wanted() && hs_off_cpu_value(cli_value_wanted()))
		ro.off_cpu = true;
	if ((w = hs_callgraph_off_cpu_conflict(&sa.cgo, ro.event, ro.off_cpu, off_cpu_min_given, msg, sizeof(msg)))) {
		cli_error("%s", w);
		goto usage_error;
	}
	if (stack_size && hs_callgraph_stack_bytes(stack_size, &ro.stack_bytes)) {
		cli_stack_size_error(stack_size);
		goto usage_error;
	}
	if (so.symfs && cli_symfs_check(so.symfs))
		goto usage_error;
	if (optind < argc)
		ro.argv = argv + optind;
	if ((w = hs_record_targets_settle(&ro))) /* -p/-t win over -a/-C, as in perf */
		cli_warn("%s", w);
	if (!ro.argv && !ro.npids && !ro.ntids && !ro.all_cpus) {
		cli_error("nothing to record: give a command after --, -p PID, or -a");
		goto usage_error;
	}
	if (window && !serve) {
		cli_error("--window goes with --serve: hotstack record --serve PORT --window SECONDS");
		goto usage_error;
	}
	if (user) {
		if (!ro.argv) {
			cli_error("--user goes with a command: hotstack record --user NAME -- command");
			goto usage_error;
		}
		if ((status = run_as_user(user, &ro)))
			goto out;
	}
	if (!outs.n && !lo.push.url)
		cli_outputs_add(&outs, default_output);
	if (cli_outputs_check(&outs) || cli_outputs_refuse(&outs, NULL, argv[0]))
		goto usage_error;
	if ((w = hs_live_opts_settle(&lo, (const char *const *)outs.path, (size_t)outs.n))) {
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
	ro.switch_signal = po->by_signal;
	/* after the signals are blocked, which the server's threads inherit, and before the
	 * command starts: an address that cannot be had stops the recording before it begins */
	if (serve) {
		struct hs_serve_opts sopts = {.listen = serve, .oo = &oo};

		err = (struct hs_error){0};
		sopts.view = view = hs_view_new(&(struct hs_view_opts){.step_ns = 1000000000ULL, .window = window});
		if (hs_serve_start(&server, &sopts, &err)) {
			cli_error("--serve: %s", err.detail);
			status = 1;
			goto served;
		}
		/* even with -q: with port 0 it is the only way to find the server */
		fprintf(stderr, "hotstack: serving on http://%s/\n", hs_serve_address(server));
	}
	ro.rt_names = bo.rt_names = hs_rt_names_new(
		HS_RT_ALL & ~(no_python ? HS_RT_BIT(HS_RT_PYTHON) : 0) & ~(no_java ? HS_RT_BIT(HS_RT_HOTSPOT) : 0) &
		~(no_js ? HS_RT_BIT(HS_RT_V8) : 0) & ~(no_ruby ? HS_RT_BIT(HS_RT_RUBY) : 0) &
		~(no_php ? HS_RT_BIT(HS_RT_PHP) : 0) & ~(no_perl ? HS_RT_BIT(HS_RT_PERL) : 0));
	bo.python_internals = py_internals;
	bo.js_internals = js_internals;
	bo.internals = (ruby_internals ? HS_RT_BIT(HS_RT_RUBY) : 0) | (php_internals ? HS_RT_BIT(HS_RT_PHP) : 0) |
		       (perl_internals ? HS_RT_BIT(HS_RT_PERL) : 0);
	rc = hs_record_open(&rec, &ro, &err);
	if (rc) {
		status = cli_record_error(&err, &ro);
		goto closed;
	}
	if (rec.user_only)
		cli_warn("no permission for kernel samples (kernel.perf_event_paranoid > 1): recording user space "
			 "only; kernel stacks take root, CAP_PERFMON or kernel.perf_event_paranoid=1");
	ctx.tty = isatty(STDERR_FILENO);
	/* samples are aggregated unless a view needs each one with its time */
	bo.keep_time = keep_time || oo.flamechart ||
		       hs_outputs_times(outs.path, (size_t)outs.n, outs.format) == HS_TIMES_ORDER;
	bo.no_demangle = so.no_demangle;
	bo.no_inline = so.no_inline;
	bo.symfs = so.symfs;
	hs_live_builder_opts(&rec, &sa.cgo, &bo);
	lo.outputs = (const char *const *)outs.path;
	lo.noutputs = (size_t)outs.n;
	lo.jvm_perfmap = !no_jvm_perfmap;
	lo.off_cpu_min = off_cpu_min;
	/* no -o: the last one kept as .old, as perf.data.old */
	ctx.keep_old = outs.path[0] == default_output && !hs_periodic_opts_switching(po);
	if (hs_live_init(&lv, &rec, &bo, &lo, &hooks, &err)) {
		cli_error("--push: %s", err.detail);
		status = 2;
		goto closed;
	}
	lv.view = view;
	rc = hs_live_run(&lv, &err);
	if (ctx.tty && !cli_quiet)
		fputs("\r\033[K", stderr);
	if (rc) {
		status = cli_record_error(&err, &ro);
		goto released;
	}
	status = hs_record_command_status(&rec);
	p = hs_live_end(&lv, &failed); /* ends the view: its readers are answered */
	view_ended = true;
	hs_builder_summary(&lv.b, &sum);
	for (size_t i = 0; i < sum.jit_nwarnings; i++)
		cli_warn("%s", sum.jit_warnings[i]);
	cli_record_summary(p, lv.pe.periods, &sum, &rec, bo.lbr_repair, ro.off_cpu);
	if (lo.push.url)
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
	cli_sampling_release(&sa);
	return status;
}
