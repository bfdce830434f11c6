/* What record says to a person: the errors of a recording with the advice that goes with
 * them, the summary at its end, and the list of events. */
#include "record-print.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "profile/unread.h"
#include "runtime/runtime.h"
#include "util/strbuf.h"

/* Names in filled lines (categories), or one a line (tracepoints). */
static void print_names(const struct hs_names *names, bool one_a_line)
{
	struct hs_strbuf sb = {0};

	hs_names_layout(names, one_a_line, &sb);
	fputs(hs_strbuf_str(&sb), stdout);
	hs_strbuf_release(&sb);
}

int cli_record_list_events(const char *what)
{
	const struct hs_event_desc *e;
	struct hs_names names = {0};
	int terr = 0;
	const char *tdir = hs_tracefs_dir(&terr);
	const char *why = terr == -EACCES ? "tracefs is root's: run as root"
					  : "no tracefs is mounted: 'mount -t tracefs nodev /sys/kernel/tracing', as root";

	if (!strncmp(what, "list:", 5)) {
		const char *cat = what + 5;
		if (!tdir) {
			cli_error("cannot list tracepoints: %s", why);
			return 1;
		}
		if (hs_tracefs_list(tdir, cat, &names)) {
			cli_error("unknown tracepoint category '%s' (see 'hotstack record -e list')", cat);
			return 1;
		}
		printf("tracepoints of %s (for -e %s:NAME):\n", cat, cat);
		print_names(&names, true);
		hs_names_free(&names);
		return 0;
	}
	printf("events (for -e):\n");
	for (size_t i = 0; (e = hs_event_at(i)); i++)
		printf("  %-24s %s\n", e->name, e->hardware ? "hardware" : "software");
	if (!hs_have_cpu_pmu())
		printf("\nthis machine has no hardware PMU: only the software events can be sampled\n");
	if (!tdir) {
		printf("\ntracepoints (-e CATEGORY:NAME): cannot list them (%s)\n", why);
		return 0;
	}
	printf("\ntracepoints (-e CATEGORY:NAME, each hit a sample), in these categories under %s/events\n"
	       "('hotstack record -e list:CATEGORY' lists the tracepoints of one):\n",
	       tdir);
	hs_tracefs_list(tdir, NULL, &names);
	print_names(&names, false);
	hs_names_free(&names);
	return 0;
}

void cli_tracepoint_error(const struct hs_error *err, const char *name)
{
	const char *d = err->detail;

	switch (err->cause) {
	case HS_TP_TRACEFS_DENIED:
		cli_error("%s: run as root", d);
		break;
	case HS_TP_NO_TRACEFS:
		cli_error("%s: mount it with 'mount -t tracefs nodev /sys/kernel/tracing' (as root)", d);
		break;
	case HS_TP_NO_CATEGORY:
		cli_error("%s (see 'hotstack record -e list')", d);
		break;
	case HS_TP_NO_TRACEPOINT:
		cli_error("%s (see 'hotstack record -e list:%.*s')", d, (int)(strchr(name, ':') - name), name);
		break;
	case HS_TP_ID_DENIED:
		cli_error("%s (tracepoints need root or CAP_PERFMON)", d);
		break;
	default:
		cli_error("%s", d);
		break;
	}
}

/* What the rings lost; a bigger ring where one can be locked, else the limits; a lower rate */
static void lost_warning(struct hs_profile *p, const struct hs_builder_stats *st, const struct hs_record *rec)
{
	struct hs_strbuf what = {0}, help = {0};
	size_t bigger = hs_record_bigger_ring(rec);
	struct hs_ring_limit l;
	bool samples;

	if (!hs_live_lost_words(p, st, rec, &samples, &what))
		return;
	hs_record_ring_limit(&l);
	if (bigger)
		hs_strbuf_addf(&help, "record with bigger ones (-m %zu)%s", bigger, samples ? " or" : "");
	else
		hs_strbuf_addf(&help,
			       "they are as big as this user may lock (kernel.perf_event_mlock_kb %llu KiB a CPU, "
			       "RLIMIT_MEMLOCK %llu KiB): raise those (sysctl as root, ulimit -l), run as root%s",
			       (unsigned long long)l.mlock_kb, (unsigned long long)l.memlock_kb,
			       samples ? ", or record with" : "");
	if (samples)
		hs_strbuf_addf(&help, " %s%s", rec->o.period ? "a larger -c" : "a lower -F",
			       rec->o.callgraph == HS_CG_STACK ? ", a smaller --stack-size, or -g fp (no stack copies)"
							       : "");
	cli_warn("%s: the ring buffers overflowed: %s", hs_strbuf_str(&what), hs_strbuf_str(&help));
	hs_strbuf_release(&what);
	hs_strbuf_release(&help);
}

void cli_record_summary(struct hs_profile *p, unsigned periods, const struct hs_builder_summary *s,
			const struct hs_record *rec, bool lbr_repair, bool off_cpu)
{
	const struct hs_builder_stats *st = &s->stats;
	uint64_t got = st->samples;
	struct hs_strbuf sb = {0};

	if (!cli_quiet && hs_record_duration_words(rec, &sb))
		fprintf(stderr, "hotstack: %s\n", hs_strbuf_str(&sb));
	hs_strbuf_reset(&sb);
	for (const char *l; (l = hs_record_runtime_note(rec));)
		cli_warn("%s", l);
	lost_warning(p, st, rec);
	if (!cli_quiet && periods)
		fprintf(stderr, "hotstack: %llu sample%s in %u period%s\n", (unsigned long long)got, got == 1 ? "" : "s",
			periods, periods == 1 ? "" : "s");
	else if (!cli_quiet)
		fprintf(stderr, "hotstack: %llu sample%s in %zu stack%s%s\n", (unsigned long long)got,
			got == 1 ? "" : "s", p->stacks.n - 1, p->stacks.n == 2 ? "" : "s",
			rec->bad_records ? " (some records were unreadable)" : "");
	if (cli_verbose) {
		hs_live_details(rec, s, lbr_repair, &sb);
		cli_detail_lines(hs_strbuf_str(&sb));
	}
	if (off_cpu && !cli_quiet) {
		hs_strbuf_reset(&sb);
		hs_live_off_cpu_summary(s, &sb);
		fprintf(stderr, "hotstack: %s\n", hs_strbuf_str(&sb));
	}
	cli_warn_unnamed(p);
	hs_strbuf_reset(&sb);
	hs_profile_unread_note(p, hs_rt_names_mask(rec->o.rt_names), &sb);
	cli_warn_lines(hs_strbuf_str(&sb));
	hs_strbuf_release(&sb);
	if (!got && !st->off_cpu.samples && !cli_quiet)
		cli_warn("no samples were recorded");
}

int cli_record_error(const struct hs_error *err, const struct hs_record_opts *ro)
{
	const char *d = err->detail;

	switch (err->cause) {
	case HS_RECORD_NO_PERMISSION:
	case HS_RECORD_NO_PERMISSION_CPU: /* the value each takes */
		cli_error("%s: run as root, grant CAP_PERFMON, or lower it with 'sysctl kernel.perf_event_paranoid=%s",
			  d, err->cause == HS_RECORD_NO_PERMISSION ? "2' (1 for kernel frames)" : "0'");
		break;
	case HS_RECORD_NOT_YOURS:
		cli_error("%s: only root, CAP_PERFMON or CAP_SYS_PTRACE allow that, not kernel.perf_event_paranoid", d);
		break;
	case HS_RECORD_DENIED:
		cli_error("%s: run as root or grant CAP_PERFMON", d);
		break;
	case HS_RECORD_NO_LBR:
		cli_error("-g lbr needs last-branch records in call-stack mode (an Intel CPU from Haswell on) sampled on a "
			  "hardware event such as -e cycles%s%s; use -g auto (DWARF) instead",
			  *d ? ", and " : "", d);
		break;
	case HS_RECORD_EVENT_UNSUPPORTED:
		cli_error("%s; use -e cpu-clock", d);
		break;
	case HS_RECORD_FREQ_TOO_HIGH:
		cli_error("-F %u is %s", ro->freq, d);
		break;
	case HS_RECORD_TOO_MANY_FILES:
		cli_error("%s (raise the limit with 'ulimit -n')", d);
		break;
	case HS_RECORD_OFF_CPU_NO_KERNEL:
		cli_error("--off-cpu needs kernel samples (the switch-out happens in the kernel), and %s: run as root or "
			  "grant CAP_PERFMON",
			  d);
		break;
	case HS_RECORD_OFF_CPU_EVENT:
		cli_error("%s for --off-cpu: %s", d, strerror(-err->code));
		break;
	case HS_RECORD_RING_LOCKED:
		cli_error("%s: use a smaller -m, raise the limits (sysctl as root, ulimit -l), or run as root", d);
		break;
	default:
		cli_error("%s", d);
		break;
	}
	if (err->cause == HS_RECORD_EXEC)
		return err->code == -ENOENT ? 127 : 126;
	if (err->cause == HS_RECORD_BAD_CPUS || err->cause == HS_RECORD_RING_SMALL)
		return 2; /* what was asked for cannot work */
	return err->cause == HS_RECORD_USER ? 126 : 1;
}

void cli_record_push_summary(const struct hs_live *lv)
{
	struct hs_strbuf warn = {0}, info = {0};

	hs_live_push_summary(lv, &warn, &info);
	cli_warn_lines(hs_strbuf_str(&warn));
	cli_info("%s", hs_strbuf_str(&info));
	hs_strbuf_release(&warn);
	hs_strbuf_release(&info);
}
