/* hotstack record: sample stacks of a command, of running processes, or of the whole system,
 * and write the profile in every format asked for. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "profile/builder.h"
#include "profile/off-cpu.h"
#include "python/names.h"
#include "record/callgraph.h"
#include "record/jvm.h"
#include "record/session.h"
#include "util/outfile.h"
#include "util/strbuf.h"
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
	"  -d, --duration SECONDS  stop after this long (default: when the command exits, or Ctrl-C)\n"
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
	"      --keep-time         keep every sample with its time (for --time filters, flame charts,\n"
	"                          speedscope's time order; implied by -o X.speedscope.json)\n"
	"      --no-jvm-perfmap    do not ask profiled HotSpot JVMs for their perf map at the end\n"
	"      --no-python         no Python frames: CPython code shows as the interpreter's frames\n"
	"      --python-internals  keep the interpreter's frames between Python frames (docs/python.md)\n"
	"      --user NAME         run the command as this user (name or uid; hotstack stays root)\n"
	"  -q, --quiet             no progress or summary\n"
	"  -v, --verbose           more detail\n";

enum {
	OPT_MAX_STACK = OPT_CMD_BASE,
	OPT_STACK_SIZE,
	OPT_OFF_CPU_MIN,
	OPT_USER,
};

static const char default_output[] = "hotstack.pb.gz";
/* The flags, set by getopt_long itself (the options' flag pointers) */
static int no_kernel, keep_time, no_jvm_perfmap, off_cpu, no_python, py_internals;

struct record_ctx {
	struct hs_builder b;
	bool tty;
	bool jvm_perfmap;
	const struct hs_record *rec;
	uint32_t off_cpu_ev; /* the builder's event index of --off-cpu samples */
};

static void sink_event(void *ctx, const struct hs_perf_event *ev)
{
	struct record_ctx *rc = ctx;
	uint32_t evidx = 0;

	if (ev->type == PERF_RECORD_SAMPLE && rc->rec->o.off_cpu &&
	    hs_record_event_index(rc->rec, ev->sid.id) == HS_REC_EVENT_OFF_CPU)
		evidx = rc->off_cpu_ev;
	hs_builder_event_of(&rc->b, ev, evidx);
}

static void sink_proc(void *ctx, int32_t pid)
{
	hs_builder_add_proc(&((struct record_ctx *)ctx)->b, pid);
}

static void jvm_answer(void *ctx, int32_t pid, int rc, const struct hs_error *err)
{
	if (rc)
		cli_warn("cannot get Java method names from JVM %d: %s", (int)pid, err->detail);
	else if (cli_verbose)
		fprintf(stderr, "hotstack: JVM %d wrote its perf map\n", (int)pid);
}

/* At the end, while the targets still run: a HotSpot JVM with frames in JIT code that nothing
 * named is asked for its perf map (the builder reads perf maps when the profile is taken). A
 * SIGINT or SIGTERM meanwhile ends the asking, not the run. */
static void sink_ending(void *ctx)
{
	struct record_ctx *rc = ctx;
	struct hs_pid_list pids = {0};
	size_t left = 0;
	int err;

	if (!rc->jvm_perfmap)
		return;
	hs_builder_jit_pids(&rc->b, &pids);
	err = hs_jvm_request_perfmaps(pids.v, pids.n, jvm_answer, NULL, &left);
	if (err)
		cli_warn("%zu processes with unnamed JIT code not asked for their perf maps: %s", left,
			 err == -ETIMEDOUT ? "no time left" : "asked to stop");
	free(pids.v);
}

static void sink_progress(void *ctx, const struct hs_record_progress *p)
{
	struct record_ctx *rc = ctx;
	struct hs_builder_summary s;

	if (!rc->tty || cli_quiet)
		return;
	hs_builder_summary(&rc->b, &s);
	fprintf(stderr, "\rhotstack: recording %.0f s, %llu samples, %.1f MB of events%s", p->elapsed,
		(unsigned long long)s.stats.samples, (double)p->bytes / 1e6,
		p->lost_records ? " (losing samples)" : "");
	fflush(stderr);
}

static void add_comments(struct hs_profile *p, int argc, char **argv, const struct hs_record_opts *o)
{
	struct hs_strbuf sb = {0};

	hs_strbuf_adds(&sb, "hotstack");
	for (int i = 0; i < argc; i++) /* the command after "--", where it was typed without */
		hs_strbuf_addf(&sb, " %s%s", argv + i == o->argv && strcmp(argv[i - 1], "--") ? "-- " : "", argv[i]);
	hs_vec_push(&p->comments, hs_profile_intern_str(p, hs_strbuf_str(&sb)));
	hs_strbuf_reset(&sb);
	hs_event_describe(o->event, o->freq, o->period, &sb);
	hs_vec_push(&p->comments, hs_profile_intern_str(p, hs_strbuf_str(&sb)));
	if (o->off_cpu)
		hs_vec_push(&p->comments, hs_profile_intern_str(p, HS_OFF_CPU_NOTE));
	hs_strbuf_release(&sb);
}

static void stack_size_error(const char *arg)
{
	cli_error("invalid stack copy size '%s' (expected a number from %lu to %lu)", arg,
		  (unsigned long)HS_MIN_STACK_BYTES, (unsigned long)HS_MAX_STACK_BYTES);
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
		{"python-internals", no_argument, &py_internals, 1},
		{"off-cpu", no_argument, &off_cpu, 1},
		{"off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN},
		{"user", required_argument, NULL, OPT_USER},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct option longopts[64];
	struct hs_record_opts ro = {0};
	struct hs_output_opts oo = {0};
	struct cli_outputs outs = {0};
	struct hs_record_pids pids = {0}, tids = {0};
	struct record_ctx ctx;
	struct hs_record rec;
	struct hs_error err;
	struct hs_builder_opts bo = {0};
	struct hs_record_sink sink = {sink_event, sink_proc, sink_progress, &ctx, sink_ending};
	struct hs_profile *p;
	struct hs_builder_summary sum;
	struct cli_symbol_opts so = {0};
	const char *event = "cpu-clock", *cg = "auto", *stack_size = NULL, *user = NULL, *w;
	struct hs_callgraph_opts cgo;
	bool off_cpu_min_given = false;
	static struct hs_event_desc tracepoint;
	uint64_t off_cpu_min = 0;
	unsigned long v;
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
		case 'p':
		case 't':
			if (hs_record_pids_add(c == 'p' ? &pids : &tids, optarg)) {
				cli_error("invalid %s id list '%s'", c == 'p' ? "process" : "thread", optarg);
				goto usage_error;
			}
			break;
		case 'C': /* perf's -C is system-wide, on those CPUs */
		case 'a':
			ro.cpu_list = c == 'C' ? optarg : ro.cpu_list;
			ro.all_cpus = true;
			break;
		case 'd':
			if (hs_record_duration_parse(optarg, &ro.duration)) {
				cli_error("invalid duration '%s' (seconds, more than 0)", optarg);
				goto usage_error;
			}
			break;
		case 'F':
			if (cli_parse_ulong(optarg, "frequency", 1, 100000, &v))
				goto usage_error;
			ro.freq = (uint32_t)v;
			break;
		case 'c':
			if (cli_parse_ulong(optarg, "count", 1, ~0UL, &v))
				goto usage_error;
			ro.period = v;
			break;
		case 'e':
			event = optarg;
			break;
		case 'g': /* perf's -g takes no value: alone, it is the default */
			cg = hs_callgraph_getopt(argv, &optind, optarg) ?: cg;
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
				cli_error("invalid duration '%s' (a number with ns, us, ms or s; milliseconds without a unit)", optarg);
				goto usage_error;
			}
			off_cpu_min_given = true;
			break;
		case OPT_USER:
			user = optarg;
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
			if (cli_symbol_option(c, optarg, &so))
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
	if (!strcmp(event, "list") || !strncmp(event, "list:", 5)) {
		status = cli_record_list_events(event);
		goto out;
	}
	rc = hs_event_lookup(event, &tracepoint, &ro.event, &err);
	if (rc == -ESRCH) {
		cli_error("unknown event '%s' (see 'hotstack record -e list')", event);
		goto usage_error;
	} else if (rc) {
		cli_tracepoint_error(&err, event);
		status = rc == -EINVAL || rc == -ENOENT ? 2 : 1;
		goto out;
	}
	rc = hs_callgraph_parse(cg, &cgo);
	if (rc == -ERANGE) {
		stack_size_error(cg + 6); /* dwarf,BYTES */
		goto usage_error;
	} else if (rc) {
		cli_error("unknown call-graph mode '%s' (auto, dwarf[,BYTES], fp, lbr, none)", cg);
		goto usage_error;
	}
	ro.callgraph = cgo.callgraph;
	ro.lbr_repair = cgo.lbr_repair;
	ro.stack_bytes = cgo.stack_bytes;
	/* a view of blocked time needs it recorded: --wall (or --value off-cpu|wall) asks for it */
	if (cli_value_wanted() && hs_off_cpu_value(cli_value_wanted()))
		ro.off_cpu = true;
	if (off_cpu_min_given && !ro.off_cpu) {
		cli_error("--off-cpu-min goes with --off-cpu");
		goto usage_error;
	}
	if (ro.off_cpu && !hs_callgraph_off_cpu_ok(&cgo)) {
		cli_error("--off-cpu (and --wall) does not go with -g lbr (the CPU records no branches for a thread switched out); "
			  "use -g auto");
		goto usage_error;
	}
	if (ro.off_cpu && !hs_event_off_cpu_ok(ro.event)) {
		cli_error("--off-cpu (and --wall) goes with a CPU-time event (cpu-clock, task-clock), so that on- and off-CPU "
			  "time add up to wall-clock time; '%s' counts events",
			  ro.event->name);
		goto usage_error;
	}
	if (stack_size && hs_callgraph_stack_bytes(stack_size, &ro.stack_bytes)) {
		stack_size_error(stack_size);
		goto usage_error;
	}
	if (so.symfs && cli_symfs_check(so.symfs))
		goto usage_error;
	if (optind < argc)
		ro.argv = argv + optind;
	ro.pids = pids.v;
	ro.npids = pids.n;
	ro.tids = tids.v;
	ro.ntids = tids.n;
	if ((w = hs_record_targets_settle(&ro))) /* -p/-t win over -a/-C, as in perf */
		cli_warn("%s", w);
	if (!ro.argv && !ro.npids && !ro.ntids && !ro.all_cpus) {
		cli_error("nothing to record: give a command after --, -p PID, or -a");
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
	if (!outs.n)
		cli_outputs_add(&outs, default_output);
	if (cli_outputs_check(&outs) || cli_outputs_refuse(&outs, NULL, argv[0]))
		goto usage_error;
	/* find out now, not after the recording, that an output cannot be written */
	for (int i = 0; i < outs.n; i++) {
		rc = hs_output_probe(outs.path[i]);
		if (rc) {
			cli_error("cannot write '%s': %s", outs.path[i], strerror(-rc));
			status = 1;
			goto out;
		}
	}

	hs_record_block_signals();
	ro.py_names = bo.py_names = no_python ? NULL : hs_py_names_new();
	bo.python_internals = py_internals;
	rc = hs_record_open(&rec, &ro, &err);
	if (rc) {
		status = cli_record_error(&err, &ro);
		goto closed;
	}
	if (rec.user_only)
		cli_warn("no permission for kernel samples (kernel.perf_event_paranoid > 1): recording user space "
			 "only; run as root or grant CAP_PERFMON for kernel stacks");
	memset(&ctx, 0, sizeof(ctx));
	ctx.tty = isatty(STDERR_FILENO);
	/* samples are aggregated unless a view needs each one with its time */
	bo.keep_time = keep_time || oo.flamechart ||
		       hs_outputs_times(outs.path, (size_t)outs.n, outs.format) == HS_TIMES_ORDER;
	/* the builder's name for how -g unwinds user stacks */
	bo.unwind = cgo.unwind == HS_CG_UNWIND_AUTO  ? HS_UNWIND_AUTO
		    : cgo.unwind == HS_CG_UNWIND_CFI ? HS_UNWIND_DWARF
						     : HS_UNWIND_FP;
	bo.no_demangle = so.no_demangle;
	bo.no_inline = so.no_inline;
	bo.symfs = so.symfs;
	bo.kernel = ro.kernel;
	bo.user = true;
	bo.lbr_repair = hs_callgraph_lbr_repair(&cgo, ro.event);
	bo.strip_tracing = hs_event_in_kernel_paths(ro.event);
	bo.exclude_pid = getpid();
	bo.max_stack = rec.o.max_stack;
	bo.capture = hs_record_capture;
	bo.capture_ctx = &rec;
	bo.live = true;
	bo.jit_timed = hs_record_times_monotonic(&rec);
	bo.tsc = rec.tsc;
	ctx.jvm_perfmap = !no_jvm_perfmap;
	hs_builder_init(&ctx.b, &bo);
	hs_builder_add_event(&ctx.b, ro.event->name, ro.event->time_based);
	ctx.rec = &rec;
	if (ro.off_cpu)
		ctx.off_cpu_ev = hs_builder_add_off_cpu(&ctx.b, off_cpu_min);
	ctx.b.p->period = hs_event_sample_period(ro.event, ro.freq, ro.period);

	ctx.b.p->time_nanos = hs_wall_ns();
	rc = hs_record_run(&rec, &sink, &err);
	if (ctx.tty && !cli_quiet)
		fputs("\r\033[K", stderr);
	if (rc) {
		status = cli_record_error(&err, &ro);
		goto released;
	}
	status = hs_record_command_status(&rec);

	if (ro.off_cpu)
		hs_builder_off_cpu_end(&ctx.b, rec.stop_ns);
	p = hs_builder_take(&ctx.b);
	hs_builder_summary(&ctx.b, &sum);
	for (size_t i = 0; i < sum.jit_nwarnings; i++)
		cli_warn("%s", sum.jit_warnings[i]);
	add_comments(p, argc, argv, &ro);
	cli_record_summary(p, &sum, &rec, bo.lbr_repair, ro.off_cpu);
	/* a --value the profile does not have: said, and the outputs written with the default */
	if (cli_resolve_value(p, &oo))
		status = status ? status : 1;
	if (outs.path[0] == default_output) /* no -o: the last one kept as .old, as perf.data.old */
		hs_outfile_keep_old(default_output);
	if (cli_outputs_write(&outs, NULL, p, &oo))
		status = status ? status : 1;
	hs_profile_free(p);
released:
	hs_builder_release(&ctx.b);
closed:
	hs_record_close(&rec);
	hs_py_names_free(bo.py_names);
	goto out;

usage_error:
	status = 2;
out:
	hs_vec_free(&pids);
	hs_vec_free(&tids);
	return status;
}
