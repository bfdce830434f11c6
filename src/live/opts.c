/* hotstack record's options: what to record (record/), how its files are named (profile/), which
 * runtimes are read (runtime/), and where its profiles go (periods, pushes, a server). */
#include "live/opts.h"

#include <errno.h>

#include "output/periodic.h"
#include "profile/off-cpu.h"
#include "profile/view-opts.h"
#include "push/service.h"

enum {
	OFF_CPU_MIN = HS_LIVE_SERVE + 1,
	SWITCH_OUTPUT,
	SWITCH_MAX_FILES,
	PUSH,
	PUSH_LABEL,
	PUSH_RELABEL,
	PUSH_SPOOL,
	PUSH_SERIES_BY,
	WINDOW,
	KEEP_TIME,
	NO_JVM_PERFMAP,
};

const struct hs_option hs_live_record_options[] = {
	{"pid", 'p', required_argument,
	 "  -p, --pid PID[,PID...]  attach to running processes (all their threads, and new ones)\n"},
	{"tid", 't', required_argument,
	 "  -t, --tid TID[,TID...]  attach to these threads only (and what they start)\n"},
	{"all-cpus", 'a', no_argument, "  -a, --all-cpus          system-wide, every online CPU\n"},
	{"cpu", 'C', required_argument, "  -C, --cpu CPUS          system-wide on these CPUs only (0-1,3)\n"},
	{"duration", 'd', required_argument,
	 "  -d, --duration TIME     stop after this long: 10 (seconds), 500ms, 2m (default: when the\n"
	 "                          command exits, or Ctrl-C)\n"},
	{"freq", 'F', required_argument,
	 "  -F, --freq HZ           samples per second per CPU or thread (default 999)\n"},
	{"count", 'c', required_argument,
	 "  -c, --count N           sample every N events instead of at a frequency\n"},
	{"event", 'e', required_argument,
	 "  -e, --event EVENT       cpu-clock (default), task-clock, page-faults, context-switches,\n"
	 "                          cycles, instructions, ..., or a tracepoint CATEGORY:NAME\n"
	 "                          (sched:sched_wakeup); 'hotstack record -e list'\n"},
	{"off-cpu", HS_REC_OFF_CPU, no_argument,
	 "      --off-cpu           also the time threads spend blocked, with the stack they blocked\n"
	 "                          in (value off-cpu; on + off as value wall: views take --wall;\n"
	 "                          --wall here records with --off-cpu and writes the wall view)\n"},
	{"off-cpu-min", OFF_CPU_MIN, required_argument,
	 "      --off-cpu-min TIME  leave out blocked periods shorter than TIME (500us, 2ms, 1s;\n"
	 "                          a bare number is milliseconds)\n"},
	{"call-graph", 'g', required_argument,
	 "  -g, --call-graph MODE   auto (the default, and -g alone): DWARF unwinding of a copy of the\n"
	 "                          user stack, with frame pointers where no CFI covers the code;\n"
	 "                          dwarf[,BYTES]: CFI only; fp: frame pointers walked by the kernel;\n"
	 "                          lbr: the CPU's last-branch records (Intel, hardware events); none\n"},
	{"stack-size", HS_REC_STACK_SIZE, required_argument,
	 "      --stack-size BYTES  user stack copied per sample for auto/dwarf (default 65528)\n"},
	{"no-kernel", HS_REC_NO_KERNEL, no_argument, "      --no-kernel         user stacks only\n"},
	{"no-demangle", HS_LOAD_NO_DEMANGLE, no_argument,
	 "      --no-demangle       C++ and Rust symbols as they are in the symbol table\n"},
	{"no-inline", HS_LOAD_NO_INLINE, no_argument,
	 "      --no-inline         no DWARF debug information: no inline frames, no source lines\n"},
	{"symfs", HS_LOAD_SYMFS, required_argument,
	 "      --symfs DIR         look the sampled files up under DIR first (DIR/PATH)\n"},
	{"mmap-pages", 'm', required_argument,
	 "  -m, --mmap-pages N      ring buffer data pages per CPU, a power of two (default: room for 256\n"
	 "                          samples: 4096 pages, 16 MiB, with auto/dwarf stack copies; else 128)\n"},
	{"max-stack", HS_REC_MAX_STACK, required_argument,
	 "      --max-stack N       longest chain to record (default: the kernel's maximum)\n"},
	{"switch-output", SWITCH_OUTPUT, optional_argument,
	 "      --switch-output[=W] a profile per period, each file's name with its start (UTC) before\n"
	 "                          its extension (-o p.pb.gz: p.20261123191023.pb.gz); W: signal\n"
	 "                          (the default: on SIGUSR2) or a period: 10s, 5m, 1h, 1d\n"},
	{"switch-max-files", SWITCH_MAX_FILES, required_argument,
	 "      --switch-max-files N  keep each output's newest N period files\n"},
	{"push", PUSH, required_argument,
	 "      --push URL          send each period (10s unless --switch-output) to a profile store\n"
	 "                          (docs/continuous.md), with -a a series per service; no -o: no\n"
	 "                          files. http(s)://: Pyroscope's /ingest; pyroscope+http(s)://: its\n"
	 "                          push API; otlp+http(s)://, otlp://HOST:PORT (gRPC): OpenTelemetry\n"},
	{"push-label", PUSH_LABEL, required_argument, "      --push-label K=V    a label of the series (repeatable)\n"},
	{"push-relabel", PUSH_RELABEL, required_argument,
	 "      --push-relabel OLD=NEW  rename a label the push API or OTLP gets (OLD=: drop it)\n"},
	{"push-spool", PUSH_SPOOL, required_argument,
	 "      --push-spool DIR    each profile kept in DIR until the store took it: a kill loses\n"
	 "                          none (bounded; without it, profiles wait in memory only)\n"},
	{"push-series-by", PUSH_SERIES_BY, required_argument,
	 "      --push-series-by W  with -a, what names a process's series: service (the default: its\n"
	 "                          systemd unit or container, else its program; a user's own as\n"
	 "                          user-UID.NAME) or comm (its command name, which any process sets)\n"},
	{"serve", HS_LIVE_SERVE, required_argument,
	 "      --serve [ADDR:]PORT serve the recording over HTTP while it runs (docs/live.md): a live\n"
	 "                          flame graph at /, Go's /debug/pprof/profile?seconds=N, everything\n"
	 "                          so far at /profile.pb.gz and /folded; on 127.0.0.1 unless ADDR\n"
	 "                          is given (ADDR:PORT, [IPv6]:PORT); port 0: any free one\n"},
	{"window", WINDOW, required_argument,
	 "      --window SECONDS    with --serve: the flame graph shows the last SECONDS (default:\n"
	 "                          everything so far)\n"},
	{"keep-time", KEEP_TIME, no_argument,
	 "      --keep-time         keep every sample with its time (for --time filters, flame charts,\n"
	 "                          speedscope's time order; implied by -o X.speedscope.json)\n"},
	{"no-jvm-perfmap", NO_JVM_PERFMAP, no_argument,
	 "      --no-jvm-perfmap    do not ask profiled HotSpot JVMs for their perf maps\n"},
	HS_OPTIONS(hs_runtime_options),
	{"user", HS_REC_USER, required_argument,
	 "      --user NAME         run the command as this user (name or uid; hotstack stays root)\n"},
	{"quiet", 'q', no_argument, "  -q, --quiet             no progress or summary\n"},
	{"verbose", 'v', no_argument, "  -v, --verbose           more detail\n"},
	{"output", 'o', required_argument, NULL}, /* said with the writers' options */
	{"help", 'h', no_argument, NULL},
	{0},
};

int hs_live_args_option(struct hs_live_args *a, int key, char *arg, char **argv, int *optind, struct hs_error *err)
{
	struct hs_live_opts *lo = &a->lo;
	unsigned long v;
	double secs;
	int rc = hs_record_args_option(&a->ra, key, arg, argv, optind, err);

	if (rc || (rc = hs_load_symbol_option(&a->syms, key, arg)) || (rc = hs_runtime_option(&a->rt, key)))
		return rc;
	switch (key) {
	case OFF_CPU_MIN:
		if (hs_off_cpu_min_parse(arg, &a->off_cpu_min))
			return hs_error_set(err, -EINVAL,
					    "invalid duration '%s' (a number with ns, us, ms, s, m or h; milliseconds "
					    "without a unit)",
					    arg);
		a->off_cpu_min_given = true;
		return 1;
	case SWITCH_OUTPUT: /* perf's: alone, signal */
		if (hs_switch_output_parse(arg ? arg : "signal", &lo->periodic))
			return hs_error_set(err, -EINVAL,
					    "invalid --switch-output '%s' (signal, or a period: 10s, 5m, 1h, 1d)", arg);
		return 1;
	case SWITCH_MAX_FILES:
		if (hs_option_ulong(arg, "number of files", 1, 1000000, &v, err))
			return -EINVAL;
		lo->periodic.max_files = (unsigned)v;
		return 1;
	case PUSH:
	case PUSH_SPOOL:
		*(key == PUSH ? &lo->push.url : &lo->push.spool_dir) = arg;
		return 1;
	case PUSH_SERIES_BY:
		if (hs_series_by_parse(arg, &lo->series_by))
			return hs_error_set(err, -EINVAL, "invalid --push-series-by '%s' (service or comm)", arg);
		lo->series_by_given = true;
		return 1;
	case WINDOW:
		if (hs_duration_parse(arg, 1, &secs) || secs < 1 || secs > HS_VIEW_MAX_SECONDS || secs != (unsigned)secs)
			return hs_error_set(err, -EINVAL, "invalid window '%s' (whole seconds from 1 to %u: 60, 60s, 5m)",
					    arg, (unsigned)HS_VIEW_MAX_SECONDS);
		a->window = (unsigned)secs;
		return 1;
	case PUSH_LABEL:
		if (hs_live_push_label(lo, arg))
			return hs_error_set(err, -EINVAL, "invalid --push-label '%s' (KEY=VALUE, at most %zu)", arg,
					    HS_ARRAY_SIZE(lo->labels));
		return 1;
	case PUSH_RELABEL:
		if (hs_live_push_relabel(lo, arg))
			return hs_error_set(err, -EINVAL,
					    "invalid --push-relabel '%s' (OLD=NEW, or OLD= to drop it; at most %zu)",
					    arg, HS_ARRAY_SIZE(lo->renames));
		return 1;
	case KEEP_TIME:
	case NO_JVM_PERFMAP:
		*(key == KEEP_TIME ? &a->keep_time : &a->no_jvm_perfmap) = true;
		return 1;
	}
	return 0;
}
